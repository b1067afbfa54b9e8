import FoundationEssentials
import SesameCore
import SesameGIO
import SesameSamples
import SesameService
import SesameWindowModel

/// The window's second user agent: the sign-in opens in the user's default browser (GTK's
/// launch for the window) and comes back on a loopback address; meanwhile the window's sign-in
/// page says where the sign-in is, and Cancel ends it. When the answer arrives the window comes
/// back to the front.
final class BrowserSignInAgent: SignInUserAgent {
    private let system: SystemBrowserUserAgent
    private let pane: SignInPane

    @MainActor
    init(pane: SignInPane, window: Window, trace: FlowTrace) {
        self.pane = pane
        system = SystemBrowserUserAgent(
            open: { [weak window] url in
                try await MainActor.run {
                    guard let window else { throw DesktopLaunchError("the window is closed") }
                    try DesktopLauncher.open(url, from: window)
                    trace.record("browser-opened", [("url", FlowTrace.redacted(url))])
                }
            },
            onRequest: { [weak window] page in
                Task { @MainActor in
                    trace.record("loopback-redirect-received", [("answer", page.traceName)])
                    if page == .received || page == .refused { window?.present() }
                }
            })
    }

    func redirectURI(for configuration: AccountConfiguration) async throws -> URL {
        try await system.redirectURI(for: configuration)
    }

    func present(_ session: SignInSession) async throws {
        try await pane.showBrowserWait(session)
        try await system.present(session)
    }

    func dismiss(_ session: SignInSession) async {
        await system.dismiss(session)
        await pane.hideBrowserWait(session)
    }
}
