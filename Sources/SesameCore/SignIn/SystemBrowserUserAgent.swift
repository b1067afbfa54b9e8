import FoundationEssentials
import Synchronization

/// The user's own browser as the sign-in's user agent (RFC 8252, "native apps"): the sign-in
/// opens there — where passkeys, security keys, device-based Conditional Access, password
/// managers and an organisation's SSO extension work — and comes back to a
/// ``LoopbackRedirectListener`` on 127.0.0.1 and a port picked for the sign-in. PKCE, `state` and
/// `nonce` are as for any sign-in; the listener also refuses an answer with another `state`.
///
/// How the browser is opened is the app's: the desktop's default-handler launch (GIO, which goes
/// through the OpenURI portal inside a sandbox), given as `open`.
public final class SystemBrowserUserAgent: SignInUserAgent {
    /// Opens a URL in the user's default browser.
    public typealias Opener = @Sendable (URL) async throws -> Void

    private let open: Opener
    private let timeout: Duration
    private let onRequest: (@Sendable (LoopbackPage) -> Void)?
    private let listeners = Mutex<[Int: Waiting]>([:])

    private struct Waiting {
        let listener: LoopbackRedirectListener
        var timer: Task<Void, Never>?
    }

    /// An agent that opens sign-ins with `open`.
    /// - Parameter timeout: how long a sign-in may stay unanswered before it ends as cancelled
    ///   (the user closed the tab and walked away); ten minutes by default, as long as the
    ///   identity service keeps its sign-in pages.
    /// - Parameter onRequest: hears of every request the loopback listener gets (the answer, a
    ///   foreign one, a late one), e.g. to bring the app's window back or to trace the flow.
    public init(
        timeout: Duration = .seconds(600), open: @escaping Opener, onRequest: (@Sendable (LoopbackPage) -> Void)? = nil
    ) {
        self.timeout = timeout
        self.open = open
        self.onRequest = onRequest
    }

    /// A loopback address of a new listener: the system browser's answer comes back there.
    public func redirectURI(for configuration: AccountConfiguration) async throws -> URL {
        let listener = try await LoopbackRedirectListener.start(observer: onRequest)
        let port = listener.redirectURI.port ?? 0
        listeners.withLock { $0[port] = Waiting(listener: listener) }
        return listener.redirectURI
    }

    public func present(_ session: SignInSession) async throws {
        let port = session.request.redirectURI.port ?? -1
        guard let listener = listeners.withLock({ $0[port]?.listener }) else {
            throw LoopbackError("no loopback listener waits at \(session.request.redirectURI.absoluteString)")
        }
        listener.attach(session)
        let timer = Task { [timeout] in
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            session.cancel()
        }
        listeners.withLock { $0[port]?.timer = timer }
        do {
            try await open(session.authorizationURL)
        } catch {
            await dismiss(session)
            throw error
        }
    }

    public func dismiss(_ session: SignInSession) async {
        let port = session.request.redirectURI.port ?? -1
        guard let waiting = listeners.withLock({ $0.removeValue(forKey: port) }) else { return }
        waiting.timer?.cancel()
        await waiting.listener.close()
    }
}
