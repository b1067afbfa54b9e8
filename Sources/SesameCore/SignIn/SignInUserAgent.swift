import FoundationEssentials

/// What shows an interactive sign-in to the user: AppAuth's external user agent, the seeds' web
/// view. The embedded WebKit view is one; the system browser with a loopback listener is another.
/// A user agent makes no protocol decision: it shows pages and reports what happens.
///
/// The store calls ``present(_:)`` with a ``SignInSession``; the agent loads
/// ``SignInSession/authorizationURL`` and does with every navigation it is about to make what
/// ``SignInSession/decide(_:)`` answers (an agent that only ever receives the redirect, as the
/// loopback listener does, hands it to ``SignInSession/resume(with:)``). When the user closes the
/// agent, it calls ``SignInSession/cancel()``; when the user moves the sign-in to the system
/// browser, ``SignInSession/handOff()``. The store calls ``dismiss(_:)`` once the session has
/// ended, however it ended — the only thing that takes the agent away.
public protocol SignInUserAgent: Sendable {
    /// The `redirect_uri` whose navigation this agent catches for `configuration`. An agent that
    /// sees every navigation (the embedded view) catches the configuration's own; the system
    /// browser's agent listens on a loopback address and returns it. Called once per sign-in,
    /// before the request is built.
    /// - Throws: when the agent cannot receive an answer (no loopback port).
    func redirectURI(for configuration: AccountConfiguration) async throws -> URL

    /// Shows the session's authorization page. Returns once it is on its way; the result comes
    /// through the session.
    /// - Throws: when the agent cannot show anything (no display, no browser).
    func present(_ session: SignInSession) async throws

    /// Takes away what ``present(_:)`` showed: the sign-in ended (signed in, failed or cancelled).
    func dismiss(_ session: SignInSession) async
}

extension SignInUserAgent {
    /// The configuration's `redirect_uri`: an agent that sees every navigation catches it.
    public func redirectURI(for configuration: AccountConfiguration) async throws -> URL { configuration.redirectURL }
}
