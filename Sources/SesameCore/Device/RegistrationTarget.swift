import FoundationEssentials

/// The organization a registration is with, read from the settings: the account type named, or
/// the first that signs in to a Microsoft work or school organization (not B2C, not another
/// OpenID provider), and where its sign-in goes. What `sesame device register` and the window's
/// "Register This Computer…" both register with.
public struct RegistrationTarget: Sendable, Equatable {
    /// Why the settings name no organization to register with; the description says what to fix.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// The account type whose organization it is.
    public let accountType: String
    /// The organization's sign-in root (`https://login.microsoftonline.com/{tenant}`).
    public let authority: URL
    /// The tenant of the authorization URL's first path segment (`contoso.onmicrosoft.com`, a
    /// tenant id, or `organizations`: then the signing-in user's own).
    public let tenant: String

    /// The organization of `accountType` in `settings`, or of the first work account type.
    public init(settings: [SampleSettings], accountType: String? = nil) throws(Problem) {
        let work = settings.filter { $0.accountConfiguration.isMicrosoftAuthority && $0.accountConfiguration.policy == nil }
        let chosen: SampleSettings
        if let accountType {
            guard settings.contains(where: { $0.accountType == accountType }) else {
                let names = settings.map(\.accountType).joined(separator: ", ")
                throw Problem(description: "There is no account type '\(accountType)'; the settings name \(names).")
            }
            guard let named = work.first(where: { $0.accountType == accountType }) else {
                throw Problem(
                    description: "\(accountType) does not sign in to a Microsoft work or school organization; name one that does.")
            }
            chosen = named
        } else {
            guard let first = work.first else {
                throw Problem(description: "None of the settings signs in to a Microsoft work or school organization.")
            }
            chosen = first
        }
        self.accountType = chosen.accountType
        let url = chosen.accountConfiguration.authorizationURL
        tenant = url.pathComponents.dropFirst().first ?? "organizations"
        var root = URLComponents(url: url, resolvingAgainstBaseURL: false) ?? URLComponents()
        root.path = "/\(tenant)"
        root.query = nil
        authority = root.url ?? url
    }
}
