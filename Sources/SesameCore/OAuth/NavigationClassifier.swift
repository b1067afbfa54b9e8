import FoundationEssentials

/// The seeds' navigation policy, on parsed URLs: what kind of page the web view is about to
/// load, and so whether to show the view, keep it, or intercept the load.
public struct NavigationClassifier: Sendable, Hashable {
    /// What a navigation is, in the seeds' three cases plus "anything else".
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The authorization endpoint (`authURL`): show the view.
        case authorize
        /// The sign-in page's form target (`loginURL`): show the view.
        case login
        /// The redirect URI (`bhh`): hide the view and hand the URL to the account store.
        case redirect
        /// Anything else (MFA pages, a federated IdP, an error page): show the view.
        case other
    }

    private let authorize: EndpointMatcher
    private let login: EndpointMatcher?
    /// The matcher for the redirect URI.
    public let redirect: RedirectMatcher

    /// A classifier for one account type's endpoints.
    public init(configuration: AccountConfiguration) {
        authorize = EndpointMatcher(configuration.authorizationURL)
        login = configuration.loginURL.map(EndpointMatcher.init)
        redirect = RedirectMatcher(redirectURI: configuration.redirectURL)
    }

    /// Classifies a navigation. The redirect wins over everything, so a redirect URI that
    /// happens to live on the identity host (`…/common/oauth2/nativeclient`) is still caught.
    public func classify(_ url: URL) -> Kind {
        if redirect.matches(url) { return .redirect }
        if authorize.matches(url) { return .authorize }
        if login?.matches(url) == true { return .login }
        return .other
    }

    /// Compares scheme, host, port and path, ignoring the query (which carries the request).
    private struct EndpointMatcher: Sendable, Hashable {
        let matcher: RedirectMatcher
        init(_ url: URL) { matcher = RedirectMatcher(redirectURI: url) }
        func matches(_ url: URL) -> Bool { matcher.matches(url) }
    }
}
