import FoundationEssentials
import SesameCore
import SesameGIO
import SesameSamples
import SesameService
import SesameSystem
import SesameWindowModel

/// The sign-in browser of one storage group: a host bar (where you are, and whether the
/// connection is secure) above a WebKit view, whose navigation policy hands every navigation to
/// the Core's ``SignInSession``. Authorize and login pages (and everything else: MFA, consent,
/// error pages on other hosts) load and show; the redirect to the app is ignored (never loaded),
/// the view hides itself and the session has its answer. No protocol decision is made here.
@MainActor
final class SignInView {
    /// The whole sign-in area: the host bar above the web view.
    let root: Box
    /// The browser engine.
    let webView: WebView
    private let hostBar: Label
    private let trace: FlowTrace
    private var session: SignInSession?
    /// Step-through: a navigation waits for the presenter.
    private let stepper: NavigationStepper
    /// Whether the load in progress failed or was interrupted (its FINISHED is no page load).
    private var currentLoadFailed = false
    /// Whether this sign-in already loaded a page again after a cancellation nobody asked for.
    private var retriedAfterCancellation = false
    /// The page that could not be reached (its explanation shows in its place), until another
    /// loads: what to load when the network is back.
    private var unreachablePage: URL?
    private(set) var interceptedRedirect = false  // this sign-in's redirect came and was intercepted
    /// The last navigation the view let through, with its method.
    private var lastNavigation: (url: URL, method: String)?
    /// Called when a load has finished (a page shown, or a failure's page).
    var onLoadFinished: (() -> Void)?
    /// The service's page refused the sign-in: its "Troubleshooting details", read off the page.
    var onRefusalPage: ((HelpDeskDetails) -> Void)?
    /// A page could not load or could not be trusted: the system browser may do better.
    var onTrouble: (() -> Void)?
    /// A page could not be reached at all (no network, a host that does not answer).
    var onUnreachable: (() -> Void)?

    /// - Parameter dataDirectory: where cookies and web data persist (per storage group), so
    ///   single sign-on survives a restart; nil keeps them in memory (tests).
    /// - Parameter automation: WebKitWebDriver may drive this view (`--automation-mode`).
    /// - Parameter context: the cookie jar to use (kept by the caller across views); a new one
    ///   over `dataDirectory` when nil.
    init(dataDirectory: URL?, trace: FlowTrace, automation: Bool = false, context: WebContext? = nil) {
        self.trace = trace
        stepper = NavigationStepper(trace: trace)
        let context = context ?? WebContext(dataDirectory: dataDirectory, automation: automation)
        webView = WebView(context: context, automation: automation)
        webView.accessibleName = L("Sign-in page")
        hostBar = Label("", xalign: 0)
        hostBar.ellipsizeAtEnd()
        hostBar.accessibleName = L("Sign-in host")
        hostBar.setName("sign-in-host")
        hostBar.setMargin(6)
        root = Box(vertical: true, spacing: 0)
        root.pack(hostBar)
        root.pack(webView, expand: true)
        root.showAll()
        root.hide()

        if automation {
            context.onAutomationStarted(browserName: "sesame") { [weak self, webView] in
                self?.trace.record("automation-session")
                return webView
            }
        }
        webView.onDecidePolicy { [weak self] decision in
            guard let self else { return false }
            return stepper.holds(decision, of: session) { [weak self] in self?.decide($0) ?? false } || decide(decision)
        }
        webView.onLoadChanged { [weak self] event in self?.loadChanged(event) }
        webView.onLoadFailed { [weak self] uri, error in self?.loadFailed(uri, error) ?? false }
        webView.onTLSFailed { [weak self] uri, problems in self?.tlsFailed(uri, problems) ?? false }
    }

    /// Shows the view and loads the session's authorization page — with this computer's single
    /// sign-on credential (`x-ms-RefreshTokenCredential`) when it has one for the service, so the
    /// service knows the device and its user and asks no password.
    func begin(_ session: SignInSession, deviceCredential: Secret? = nil) {
        self.session = session
        interceptedRedirect = false
        retriedAfterCancellation = false
        unreachablePage = nil
        root.show()
        if let deviceCredential {
            webView.load(session.authorizationURL, header: "x-ms-RefreshTokenCredential", value: deviceCredential.revealed)
        } else {
            webView.load(session.authorizationURL)
        }
    }

    /// What the user types next goes to the page (its first field has the page's focus).
    func takeFocus() {
        webView.grabFocus()
    }

    /// Stops sign-in and hides the view — or leaves it on screen, showing the last page, for the
    /// window to leave when the user's data is in (after the redirect).
    func end(keepingOnScreen: Bool = false) {
        webView.stopLoading()
        stepper.drop()
        session = nil
        unreachablePage = nil
        if !keepingOnScreen { root.hide() }
    }

    /// The network is back: a page that could not be reached loads again, as a browser does —
    /// unless a form was being sent to it, which a browser would send again: the sign-in starts
    /// over at the service's first page instead (it asks only what its session does not know).
    func reloadUnreachablePage() {
        guard let session, let page = unreachablePage else { return }
        unreachablePage = nil
        let resend = lastNavigation.map { $0.url == page && $0.method.uppercased() != "GET" } ?? false
        let target = resend ? session.authorizationURL : page
        trace.record("page-reloaded", [("url", FlowTrace.redacted(target)), ("reason", "network-returned")])
        // The explanation may still be loading in the page's place: it gives way.
        webView.stopLoading()
        webView.load(target)
    }

    /// Deletes cookies and web data ("Forget sign-in data").
    func forgetSignInData() {
        webView.context.clearWebsiteData()
    }

    // MARK: Navigation policy

    /// WebKit's `decide-policy`: the session decides (``SignInSession/decide(_:)``); the view does
    /// what it says and records it. Without a session (none yet, or one that ended) the same
    /// rules hold and nothing is intercepted.
    private func decide(_ decision: PolicyDecision) -> Bool {
        let navigation = Navigation(
            kind: decision.kind == .response ? .response : decision.kind == .newWindow ? .newWindow : .navigation,
            address: decision.kind == .response ? decision.responseURI : decision.requestURI, method: decision.method,
            isDownload: decision.isDownload)
        let url = navigation.address.flatMap(URL.init(string:))
        let shown = url.map(FlowTrace.redacted) ?? ""
        switch session?.decide(navigation) ?? .forNavigation(navigation, classifier: nil) {
        case .intercept:
            decision.ignore()
            interceptedRedirect = true
            // The store's dismiss, once it has the answer, takes the view away.
            trace.record("navigation", [("url", shown), ("kind", NavigationClassifier.Kind.redirect.rawValue), ("action", "intercept")])
            trace.record("redirect-intercepted", [("accountType", session?.accountType ?? "")])
            return true
        case .ignoreForeignAnswer:
            // Not this sign-in's answer (another `state`, or none): never loaded, never taken.
            decision.ignore()
            trace.record("navigation", [("url", shown), ("kind", NavigationClassifier.Kind.redirect.rawValue), ("action", "ignore")])
            trace.record("redirect-ignored", [("accountType", session?.accountType ?? ""), ("reason", "wrong-state")])
            return true
        case .show(let kind):
            if decision.kind == .response { return false }
            if url != unreachablePage { unreachablePage = nil }
            if let url, decision.kind == .navigation { lastNavigation = (url, decision.method) }
            trace.record("navigation", [("method", decision.method), ("url", shown), ("kind", kind.rawValue), ("action", "show")])
            return false
        case .refuse(let refusal):
            decision.ignore()
            switch refusal {
            case .download: trace.record("download-refused", [("url", shown)])
            case .popup: trace.record("popup-refused", [("url", shown)])
            case .unparseableAddress: trace.record("navigation-refused", [("reason", refusal.rawValue)])
            case .unencrypted, .scheme: trace.record("navigation-refused", [("url", shown), ("reason", refusal.rawValue)])
            }
            if refusal == .unencrypted, decision.kind == .navigation {
                showPage(
                    title: L("This page is not encrypted"),
                    message: String(
                        formatting: L("Sesame did not open %@: sign-in pages are only loaded over HTTPS."),
                        url?.host ?? navigation.address ?? ""),
                    for: navigation.address ?? "")
            }
            return true
        }
    }

    private func loadChanged(_ event: LoadEvent) {
        switch event {
        case .started:
            currentLoadFailed = false
        case .committed:
            // The page committed now is Sesame's own ("Can't reach …") when one was just asked for.
            showingOwnPage = ownPagePending
            ownPagePending = false
            updateHostBar()
        case .finished:
            // WebKit ends a failed or interrupted load (the redirect we ignored) with FINISHED too;
            // that is no page the user sees.
            if !currentLoadFailed, let uri = webView.uri, let url = URL(string: uri) {
                trace.record("page-loaded", [("url", FlowTrace.redacted(url))])
                // 403: the page refuses this browser (Google's `disallowed_useragent` behind a
                // B2C user flow, an SSO page that wants its extension): the system browser may not.
                if webView.mainResourceStatus == 403 {
                    trace.record("page-refused-this-browser", [("url", FlowTrace.redacted(url)), ("status", "403")])
                    onTrouble?()
                }
                readTroubleshootingDetails()
            }
            onLoadFinished?()
        case .redirected:
            break
        }
    }

    /// The page's "Troubleshooting details" (Entra's refusal pages carry them: error code,
    /// request and correlation ids, time, app): when they name a refusal Sesame can explain,
    /// ``onRefusalPage`` hears it. The page is hostile like anything read from outside: only
    /// fields that look like ids, codes and times are kept (``HelpDeskDetails``).
    private func readTroubleshootingDetails() {
        let script = """
            (function () {
              var details = document.getElementById('troubleshootingDetails');
              var text = details ? details.innerText : (document.body ? document.body.innerText : '');
              return String(text).slice(0, 8192);
            })()
            """
        webView.evaluateJavaScript(script) { [weak self] text in
            guard let self, let text, text.contains("Error Code") else { return }
            let details = HelpDeskDetails(troubleshooting: text)
            guard TenantRefusal(serviceCode: details.errorCode) != nil else { return }
            self.trace.record("refusal-page", [("code", details.errorCode ?? "")])
            self.onRefusalPage?(details)
        }
    }

    private func updateHostBar() {
        guard let uri = webView.uri, let url = URL(string: uri), let host = url.host else {
            hostBar.text = ""
            return
        }
        let port = url.port.map { ":\($0)" } ?? ""
        // A page that never loaded (Sesame's own page in its place) came over no connection at
        // all: the bar names the host and says nothing of encryption.
        guard !showingOwnPage else {
            hostBar.text = host + port
            return
        }
        hostBar.text = webView.isSecure ? "🔒 \(host)\(port) — " + L("secure connection") : "\(host)\(port) — " + L("not encrypted")
    }

    /// What the view does with a failed load.
    enum LoadFailureHandling: Equatable {
        /// Not a failure the user should see: our own `ignore` of the redirect, or a page replaced
        /// by a newer navigation.
        case ignore
        /// Load the page again, once: WebKit's network process sometimes ends a load that nobody
        /// cancelled with GIO's "Operation was cancelled" (seen on a refused TLS handshake, where
        /// it arrives in place of `load-failed-with-tls-errors`); the second load reports the
        /// real reason.
        case retry
        /// Show the user a page that says why.
        case show
    }

    nonisolated static func handling(of error: GLibError, alreadyRetried: Bool) -> LoadFailureHandling {
        if error.domain == "WebKitPolicyError" || (error.domain == "WebKitNetworkError" && error.code == 302) { return .ignore }
        if error.domain == "g-io-error-quark" && error.code == GLibError.ioCancelled { return alreadyRetried ? .show : .retry }
        return .show
    }

    private func loadFailed(_ uri: String, _ error: GLibError) -> Bool {
        currentLoadFailed = true
        switch Self.handling(of: error, alreadyRetried: retriedAfterCancellation) {
        case .ignore:
            return true
        case .retry:
            retriedAfterCancellation = true
            if let url = URL(string: uri) {
                trace.record("load-retried", [("url", FlowTrace.redacted(url)), ("error", error.message)])
                webView.load(url)
                return true
            }
        case .show:
            break
        }
        let host = URL(string: uri)?.host ?? uri
        unreachablePage = URL(string: uri)
        trace.record("sign-in-failed", [("error", "load failed: \(error.message)")])
        onTrouble?()
        onUnreachable?()
        let failure = HTTPTransportError(url: URL(string: uri) ?? URL(filePath: "/"), reason: error.message, kind: .init(loading: error))
        showPage(
            title: String(formatting: L("Can’t reach %@"), host), message: UserMessage.text(for: failure), details: [error.message],
            for: uri)
        return true
    }

    private func tlsFailed(_ uri: String, _ problems: CertificateProblems) -> Bool {
        currentLoadFailed = true
        let url = URL(string: uri)
        let host = url?.host ?? uri
        // The trace keeps English (it is a log); the page speaks the user's language.
        var reasons: [(trace: String, shown: String)] = []
        if problems.contains(.unknownAuthority) {
            reasons.append(
                (
                    "it is signed by an authority this computer does not trust",
                    L("It is signed by an authority this computer does not trust.")
                ))
        }
        if problems.contains(.wrongSite) { reasons.append(("it was issued for another site", L("It was issued for another site."))) }
        if problems.contains(.expired) { reasons.append(("it has expired", L("It has expired."))) }
        if problems.contains(.notYetValid) { reasons.append(("it is not valid yet", L("It is not valid yet."))) }
        if problems.contains(.revoked) { reasons.append(("it was revoked", L("It was revoked."))) }
        let why =
            reasons.isEmpty
            ? "its certificate could not be verified" : "its certificate cannot be trusted: " + reasons.map(\.trace).joined(separator: "; ")
        trace.record("sign-in-failed", [("error", "TLS: \(host): \(why)")])
        onTrouble?()
        let message: String
        var details = reasons.map(\.shown)
        if problems.contains(.unknownAuthority), let url {
            // An authority this computer does not trust — a company's CA IT has not installed — is
            // told in the very sentence Sesame's own requests use for it, so the page and every
            // other error about the host say the same.
            message = UserMessage.text(for: HTTPTransportError(url: url, reason: why, kind: .untrustedCertificate))
            details.removeFirst()
        } else {
            message = String(
                formatting: reasons.isEmpty
                    ? L("Sesame did not open %@ because its certificate could not be verified.")
                    : L("Sesame did not open %@ because its certificate cannot be trusted:"),
                host)
        }
        showPage(
            title: L("This connection is not secure"), message: message, details: details,
            closing: L("Sign-in stops here; it never continues over an untrusted connection."), for: uri)
        return true
    }

    /// A readable page in place of a failed load: a title, a message, the details as a list and a
    /// closing sentence.
    private func showPage(title: String, message: String, details: [String] = [], closing: String? = nil, for uri: String) {
        let list = details.isEmpty ? "" : "<ul id=\"errorDetails\">" + details.map { "<li>\(Self.escape($0))</li>" }.joined() + "</ul>"
        let end = closing.map { "<p id=\"errorClosing\">\(Self.escape($0))</p>" } ?? ""
        let html = """
            <!DOCTYPE html><html><head><meta charset="utf-8"><title>\(Self.escape(title))</title>
            <style>body{font-family:Cantarell,"Noto \
            Sans",sans-serif;background:#f6f5f4;color:#2e3436;display:flex;justify-content:center;margin-top:15vh}
            main{max-width:520px;background:#fff;padding:32px;border-radius:8px;box-shadow:0 1px 3px \
            rgba(0,0,0,.2)}h1{font-size:22px}</style></head>
            <body><main><h1 id="errorTitle">\(Self.escape(title))</h1><p id="errorMessage">\(Self.escape(message))</p>\
            \(list)\(end)</main></body></html>
            """
        ownPagePending = true
        webView.loadAlternateHTML(html, for: uri)
    }

    /// Sesame's own page was asked for in place of one that did not load, and is not committed yet.
    private var ownPagePending = false
    /// The page on screen is Sesame's own, in place of one that never loaded.
    private var showingOwnPage = false

    static func escape(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;")
            .replacing(">", with: "&gt;").replacing("\"", with: "&quot;")
    }
}
