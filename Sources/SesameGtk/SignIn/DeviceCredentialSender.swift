import FoundationEssentials
import SesameCore
import SesameService

/// This computer's single sign-on credential (`x-ms-RefreshTokenCredential`) on a sign-in view's
/// authorization page: a header of the page's first request, kept on that page's origin (scheme,
/// host, port). WebKit sends the header again with each redirect of the load, so a redirect the
/// Core's ``DeviceCredentialLoad`` says would take it off the origin is not followed: its address
/// loads afresh, without the credential. The view reports navigations and the load's end.
@MainActor
final class DeviceCredentialSender {
    /// The header the credential goes in (Windows' web views send it so).
    static let header = "x-ms-RefreshTokenCredential"
    private let webView: WebView
    private let trace: FlowTrace
    /// The load that carries the credential, while one may.
    private var load: DeviceCredentialLoad?

    init(webView: WebView, trace: FlowTrace) {
        self.webView = webView
        self.trace = trace
    }

    /// Loads `url` — with `credential` when there is one and `url` has an origin it may go to.
    func load(_ url: URL, credential: Secret?) {
        load = credential == nil ? nil : DeviceCredentialLoad(firstRequest: url)
        if let credential, load != nil {
            webView.load(url, header: Self.header, value: credential.revealed)
        } else {
            webView.load(url)
        }
    }

    /// A navigation the sign-in's session lets through (a page of `kind`, `shown` as the trace
    /// names it): true when it would have carried the credential off its origin, and was
    /// answered here instead (ignored, its address loaded without the credential).
    func keepsCredential(from decision: PolicyDecision, kind: NavigationClassifier.Kind, shown: String) -> Bool {
        guard decision.kind == .navigation, var load else { return false }
        let step = load.navigation(
            to: decision.requestURI, isRedirect: decision.isRedirect, carriesCredential: decision.requestHeader(Self.header) != nil)
        self.load = load
        switch step {
        case .follow:
            return false
        case .stop:
            decision.ignore()
            trace.record("navigation-refused", [("reason", "credential-redirect-unparseable")])
            return true
        case .loadWithoutCredential(let target):
            decision.ignore()
            trace.record(
                "navigation", [("method", decision.method), ("url", shown), ("kind", kind.rawValue), ("action", "load-without-credential")])
            trace.record("device-credential-kept", [("origin", load.origin.description), ("url", shown)])
            webView.load(target)
            return true
        }
    }

    /// The load's page arrived, or a load failed: nothing after it is a redirect of the
    /// credential's load.
    func loadEnded() {
        load?.loadEnded()
    }

    /// The sign-in ended.
    func forget() {
        load = nil
    }
}
