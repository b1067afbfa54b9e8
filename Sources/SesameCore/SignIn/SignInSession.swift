import Foundation
import Synchronization

/// One interactive sign-in, from the prepared authorization request to its answer: AppAuth's
/// authorization session. The account store creates it; a ``SignInUserAgent`` shows its
/// ``authorizationURL`` and hands back the navigations it is about to make.
///
/// The redirect is matched here and nowhere else: parsed scheme, host, port and path, never a
/// substring. The first redirect is taken; a second navigation to the redirect URI is still
/// answered `true` (the agent must not load it) but changes nothing.
public final class SignInSession: Sendable, Identifiable, CustomStringConvertible, CustomReflectable {
    /// How a session ended.
    enum Outcome: Sendable {
        /// The agent caught the redirect (carrying a code or an error).
        case redirect(URL)
        /// The user closed the agent, or the sign-in was cancelled.
        case cancelled
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
    public let classifier: NavigationClassifier
    /// The request behind the URL, with the values its answer is checked against.
    let request: AuthorizationRequest

    private struct State {
        var outcome: Outcome?
        var waiter: CheckedContinuation<Outcome, Never>?
    }

    private let state = Mutex(State())

    init(accountType: String, configuration: AccountConfiguration, request: AuthorizationRequest) {
        self.accountType = accountType
        self.storageGroup = configuration.storageGroup
        self.request = request
        self.authorizationURL = request.url
        self.classifier = NavigationClassifier(configuration: configuration)
    }

    /// Whether `url` is a navigation to this session's redirect URI (nothing changes).
    public func isRedirect(_ url: URL) -> Bool {
        classifier.redirect.matches(url)
    }

    /// A navigation the user agent is about to make. Returns `true` when it is the redirect: the
    /// agent must not load it, and the first such URL becomes the session's answer.
    @discardableResult
    public func resume(with url: URL) -> Bool {
        guard isRedirect(url) else { return false }
        finish(.redirect(url))
        return true
    }

    /// The user closed the agent (or the app gave up): the sign-in ends as cancelled.
    public func cancel() {
        finish(.cancelled)
    }

    /// The redirect the session took, if it took one (it carries the code: never print it).
    var caughtRedirect: URL? {
        state.withLock { state in
            if case .redirect(let url)? = state.outcome { return url }
            return nil
        }
    }

    /// Whether the session has its answer (a redirect, or cancellation).
    public var isFinished: Bool {
        state.withLock { $0.outcome != nil }
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

    /// Waits for the answer; cancelling the waiting task cancels the session.
    func outcome() async -> Outcome {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Outcome? in
                    if let outcome = state.outcome { return outcome }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            cancel()
        }
    }

    private func finish(_ outcome: Outcome) {
        let waiter = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: outcome)
    }
}
