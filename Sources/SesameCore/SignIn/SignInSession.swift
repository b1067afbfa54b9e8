import FoundationEssentials
import Synchronization

/// One interactive sign-in, from the prepared authorization request to its ending: AppAuth's
/// authorization session. The account store creates it; a ``SignInUserAgent`` shows its
/// ``authorizationURL`` and asks it what to do with each navigation (``decide(_:)``).
///
/// The redirect is matched here and nowhere else — parsed scheme, host, port and path, never a
/// substring — and its answer is read here: a code or an error, whose `state` must be this
/// request's. The session ends once, in one of four ways (``Ending``); the store acts on the
/// ending. A second navigation to the redirect URI is still intercepted (the agent must not
/// load it) but changes nothing. A redirect whose `state` is not this request's — a page of the
/// flow (a federated provider's too) navigating there itself, or a stale answer — is not loaded
/// and not taken: the sign-in goes on, as the loopback listener keeps waiting.
public final class SignInSession: Sendable, Identifiable, CustomStringConvertible, CustomReflectable {
    /// How a session ended: AppAuth's explicit endings.
    enum Ending: Sendable {
        /// The redirect came back with this request's `state`: a code, or the service's refusal.
        case answered(AuthorizationResponse)
        /// The redirect came back with this request's `state` but unusable: without a code or an
        /// error.
        case failed(AccountStoreError)
        /// The user closed the agent, or the sign-in was cancelled.
        case cancelled
        /// The user moved the sign-in to the system browser ("Continue in your browser").
        case handedOff
    }

    /// Distinguishes sessions (a user agent may show several in turn).
    public let id = UUID()
    /// The account type signing in.
    public let accountType: String
    /// The storage group whose tokens and web data (cookies, single sign-on) this sign-in uses:
    /// an agent keeps one cookie jar per group.
    public let storageGroup: String
    /// The authorization URL to show (`state`, `nonce` and PKCE inside: print it with
    /// `redactingQuery`).
    public let authorizationURL: URL
    /// What each navigation is (authorize, login, redirect, other), for showing the flow.
    let classifier: NavigationClassifier
    /// The request behind the URL, with the values its answer is checked against.
    let request: AuthorizationRequest

    private struct State {
        var ending: Ending?
        var waiter: CheckedContinuation<Ending, Never>?
        /// The redirect the session took (it carries the code: never print it).
        var redirect: URL?
    }

    private let state = Mutex(State())

    init(accountType: String, configuration: AccountConfiguration, request: AuthorizationRequest) {
        self.accountType = accountType
        self.storageGroup = configuration.storageGroup
        self.request = request
        self.authorizationURL = request.url
        self.classifier = NavigationClassifier(configuration: configuration)
    }

    /// What the agent does with a navigation it is about to make: intercept the redirect (the
    /// first one with this request's `state` is the session's answer), leave one with another
    /// `state` unloaded and untaken, refuse what a sign-in's browser never does (another scheme,
    /// plain `http` off this computer, a pop-up, a download), or show it.
    public func decide(_ navigation: Navigation) -> NavigationDecision {
        if navigation.kind != .response, let address = navigation.address, let url = URL(string: address),
            classifier.redirect.matches(url)
        {
            return take(url) ? .intercept : .ignoreForeignAnswer
        }
        return .forNavigation(navigation, classifier: classifier)
    }

    /// What `navigation` is, without deciding it (nothing changes): `redirect` for the app's
    /// redirect URI, the kind the view would show otherwise, nil for one it would refuse. The
    /// flow inspector's step-through names the step before it happens.
    public func kind(of navigation: Navigation) -> NavigationClassifier.Kind? {
        if navigation.kind != .response, let address = navigation.address, let url = URL(string: address),
            classifier.redirect.matches(url)
        {
            return .redirect
        }
        if case .show(let kind) = NavigationDecision.forNavigation(navigation, classifier: classifier) { return kind }
        return nil
    }

    /// A redirect the agent received whole (the loopback listener's request). Returns `true`
    /// when `url` is the session's redirect URI and the answer is this request's (or the session
    /// already ended): the first such URL ends the session with its answer. An answer with
    /// another `state` returns `false` and changes nothing.
    @discardableResult
    public func resume(with url: URL) -> Bool {
        guard classifier.redirect.matches(url) else { return false }
        return take(url)
    }

    /// Ends the session with the answer `url` carries, unless the answer is another request's
    /// (its `state` missing or different): then the session goes on. Returns whether it was
    /// taken; after the ending every redirect is "taken" (not loaded, changing nothing).
    private func take(_ url: URL) -> Bool {
        if isFinished { return true }
        guard let ending = Self.ending(of: url, answering: request) else { return false }
        finish(ending, redirect: url)
        return true
    }

    /// The user closed the agent (or the app gave up): the sign-in ends as cancelled.
    public func cancel() {
        finish(.cancelled)
    }

    /// The user moved the sign-in to the system browser: this session ends, and its caller
    /// starts the sign-in again there.
    public func handOff() {
        finish(.handedOff)
    }

    /// Whether the session has ended.
    public var isFinished: Bool {
        state.withLock { $0.ending != nil }
    }

    /// The redirect the session ended with, if it ended so (it carries the code: never print it).
    var caughtRedirect: URL? {
        state.withLock { $0.redirect }
    }

    /// The URL carries `state`, `nonce` and the PKCE challenge: printed with its values redacted.
    public var description: String {
        "SignInSession(\(accountType), \(authorizationURL.redactingQuery))"
    }

    public var customMirror: Mirror {
        Mirror(
            self, children: ["accountType": accountType, "storageGroup": storageGroup, "url": authorizationURL.redactingQuery],
            displayStyle: .class)
    }

    /// Waits for the ending; cancelling the waiting task cancels the session.
    func ending() async -> Ending {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Ending? in
                    if let ending = state.ending { return ending }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// The redirect's answer, read: a code or an error with this request's `state`, or why it
    /// cannot be used; nil when it is not this request's answer (no `state`, or another one).
    static func ending(of url: URL, answering request: AuthorizationRequest) -> Ending? {
        let response = AuthorizationResponse(redirectURL: url)
        let state = response?.state ?? Self.state(in: url)
        guard let state, state == request.state.revealed else { return nil }
        guard let response else {
            return .failed(AccountStoreError(.malformedRedirect, "The identity service's answer carried neither a code nor an error."))
        }
        return .answered(response)
    }

    /// The `state` of a redirect that carries neither a code nor an error (query or fragment).
    private static func state(in url: URL) -> String? {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let pairs =
            FormEncoding.decode(components?.percentEncodedQuery ?? "") + FormEncoding.decode(components?.percentEncodedFragment ?? "")
        return pairs.first { $0.0 == "state" }?.1
    }

    private func finish(_ ending: Ending, redirect: URL? = nil) {
        let waiter = state.withLock { state -> CheckedContinuation<Ending, Never>? in
            guard state.ending == nil else { return nil }
            state.ending = ending
            state.redirect = redirect
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: ending)
    }
}
