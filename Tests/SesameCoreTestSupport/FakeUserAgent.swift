import Foundation
import SesameCore
import Synchronization

/// A user agent that plays the browser without one: for each session the store presents, the
/// test's script says what the "user" does — navigate somewhere (each URL is offered to
/// ``SignInSession/decide(_:)``, as the web view's navigation policy offers it), close the agent,
/// or move the sign-in to the system browser. It records what it was shown and whether each
/// navigation was intercepted.
public final class FakeUserAgent: SignInUserAgent {
    /// What the user does in the agent.
    public enum Step: Sendable {
        /// A navigation the agent is about to make.
        case navigate(URL)
        /// The user closes the agent.
        case close
        /// The user presses "Continue in your browser".
        case handOff
    }

    private struct Record {
        var presented: [SignInSession] = []
        var dismissed: [UUID] = []
        var answers: [(URL, Bool)] = []
    }

    private let script: @Sendable (SignInSession, Int) -> [Step]
    private let record = Mutex(Record())

    /// - Parameter script: the steps for a session, given the session and how many were shown
    ///   before it.
    public init(_ script: @escaping @Sendable (SignInSession, Int) -> [Step]) {
        self.script = script
    }

    /// The user signs in at once: the provider's redirect for each session.
    public convenience init(provider: FakeIdentityProvider, extra: [String: String] = [:]) {
        self.init { session, _ in [.navigate(provider.redirect(for: session.authorizationURL, extra: extra))] }
    }

    public var presented: [SignInSession] { record.withLock { $0.presented } }
    public var dismissed: [UUID] { record.withLock { $0.dismissed } }
    /// Each navigation offered to a session, and whether the session took it as its redirect.
    public var answers: [(URL, Bool)] { record.withLock { $0.answers } }

    public func present(_ session: SignInSession) async throws {
        let shown = record.withLock { record in
            record.presented.append(session)
            return record.presented.count - 1
        }
        for step in script(session, shown) {
            switch step {
            case .navigate(let url):
                let taken = session.decide(Navigation(kind: .navigation, address: url.absoluteString)) == .intercept
                record.withLock { $0.answers.append((url, taken)) }
            case .close:
                session.cancel()
            case .handOff:
                session.handOff()
            }
        }
    }

    public func dismiss(_ session: SignInSession) async {
        record.withLock { $0.dismissed.append(session.id) }
    }
}
