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
    /// What the sign-in's pages did, one value (``SignInViewState``): the view does what its events return.
    private var state = SignInViewState()
    /// This computer's single sign-on credential, kept on the authorization page's origin.
    private let credential: DeviceCredentialSender
    /// What Sesame reads of each page it shows: a refusal's details, the method it asks for.
    private let pageReader: SignInPageReader
    /// This sign-in's redirect came (and was intercepted).
    var interceptedRedirect: Bool { state.signIn?.redirectCame == true }
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
        credential = DeviceCredentialSender(webView: webView, trace: trace)
        pageReader = SignInPageReader(webView: webView, trace: trace)
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
        pageReader.onRefusalPage = { [weak self] in self?.onRefusalPage?($0) }
        // A passkey page: the system browser can answer it, this view cannot yet.
        pageReader.onNeedsSystemBrowser = { [weak self] in self?.onTrouble?() }

        if automation {
            context.onAutomationStarted(browserName: "sesame") { [weak self, webView] in
                self?.trace.record("automation-session")
                return webView
            }
        }
        webView.onDecidePolicy { [weak self] decision in
            guard let self else { return false }
            // Sesame's own waiting page is no step of the flow: it loads at once, untraced.
            if decision.kind == .navigation, state.isWaitingPageLoad(decision.requestURI.flatMap(URL.init(string:))) { return false }
            return stepper.holds(decision, of: session) { [weak self] in self?.decide($0) ?? false } || decide(decision)
        }
        webView.onLoadChanged { [weak self] event in self?.loadChanged(event) }
        webView.onLoadFailed { [weak self] uri, error in self?.loadFailed(uri, error) ?? false }
        webView.onTLSFailed { [weak self] uri, problems in self?.tlsFailed(uri, problems) ?? false }
    }

    /// Shows the view and loads the session's authorization page — with this computer's single
    /// sign-on credential (`x-ms-RefreshTokenCredential`) when it has one for the service, so the
    /// service knows the device and its user and asks no password. It goes only to the page's
    /// origin: a redirect that leaves it loads again without it (``DeviceCredentialSender``).
    ///
    /// In step-through the authorization request will wait for Next: Sesame's page that says so
    /// loads first, so that the page the view showed last (a cancelled sign-in's form) is gone
    /// and nothing typed meanwhile is sent from it; the request is asked for once it shows.
    func begin(_ session: SignInSession, deviceCredential: Secret? = nil) {
        self.session = session
        pendingCredential = deviceCredential
        root.show()
        for action in state.begin(at: session.authorizationURL, stepping: trace.stepThrough.isOn) {
            perform(action, deviceCredential: deviceCredential)
        }
    }

    /// The device credential for the authorization page, kept while Sesame's waiting page loads first.
    private var pendingCredential: Secret?

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
        pendingCredential = nil
        credential.forget()
        state.end()
        if !keepingOnScreen { root.hide() }
    }

    /// The network is back: a page that could not be reached loads again, as a browser does —
    /// unless a form was being sent to it, which a browser would send again: the sign-in starts
    /// over at the service's first page instead (it asks only what its session does not know).
    func reloadUnreachablePage() {
        for action in state.networkReturned() { perform(action) }
    }

    /// Does what the state said (``SignInViewState/Action``).
    /// `failure`: the failed load's error, for `.retry` and `.showUnreachable`.
    private func perform(_ action: SignInViewState.Action, deviceCredential: Secret? = nil, failure: GLibError? = nil) {
        switch action {
        case .loadAuthorizationPage:
            guard let session else { return }
            credential.load(session.authorizationURL, credential: deviceCredential ?? pendingCredential)
            pendingCredential = nil
        case .showWaitingPage:
            webView.loadAlternateHTML(
                Self.page(title: SignInWaitText.title, message: SignInWaitText.authorizationWaits, id: "waitingForNext"),
                for: SignInViewState.waitingPageAddress.absoluteString)
        case .retry(let url):
            trace.record("load-retried", [("url", FlowTrace.redacted(url)), ("error", failure?.message ?? "")])
            webView.load(url)
        case .pageShown(let url):
            trace.record("page-loaded", [("url", FlowTrace.redacted(url))])
            // 403: the page refuses this browser (Google's `disallowed_useragent` behind a
            // B2C user flow, an SSO page that wants its extension): the system browser may not.
            if webView.mainResourceStatus == 403 {
                trace.record("page-refused-this-browser", [("url", FlowTrace.redacted(url)), ("status", "403")])
                onTrouble?()
            }
            pageReader.read()
        case .showUnreachable(let url):
            let message = failure?.message ?? ""
            trace.record("sign-in-failed", [("error", "load failed: \(message)")])
            onTrouble?()
            onUnreachable?()
            let failed = HTTPTransportError(
                url: url ?? URL(filePath: "/"), reason: message, kind: failure.map { .init(loading: $0) } ?? .unreachable)
            showPage(
                title: String(formatting: L("Can’t reach %@"), url?.host ?? url?.absoluteString ?? ""),
                message: UserMessage.text(for: failed), details: [message], for: url?.absoluteString ?? "")
        case .updateHostBar(let ownPage):
            updateHostBar(ownPage: ownPage)
        case .reload(let target):
            trace.record("page-reloaded", [("url", FlowTrace.redacted(target)), ("reason", "network-returned")])
            // The explanation may still be loading in the page's place: it gives way.
            webView.stopLoading()
            webView.load(target)
        case .loadFinished:
            onLoadFinished?()
        }
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
            state.redirectIntercepted()
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
            if credential.keepsCredential(from: decision, kind: kind, shown: shown) { return true }
            state.shown(url, method: decision.method, navigation: decision.kind == .navigation)
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
        case .started: state.loadStarted()
        case .committed:
            credential.loadEnded()
            for action in state.loadCommitted() { perform(action) }
        case .finished: for action in state.loadFinished(at: webView.uri.flatMap(URL.init(string:))) { perform(action) }
        case .redirected: break
        }
    }

    private func updateHostBar(ownPage: Bool) {
        guard let uri = webView.uri, let url = URL(string: uri), let host = url.host else {
            hostBar.text = ""
            return
        }
        let port = url.port.map { ":\($0)" } ?? ""
        // A page that never loaded (Sesame's own page in its place) came over no connection at
        // all: the bar names the host and says nothing of encryption.
        guard !ownPage else {
            hostBar.text = host + port
            return
        }
        hostBar.text = webView.isSecure ? "🔒 \(host)\(port) — " + L("secure connection") : "\(host)\(port) — " + L("not encrypted")
    }

    /// A failed load as the view's state knows it: WebKit's and GIO's errors sorted.
    nonisolated static func failure(of error: GLibError) -> SignInViewState.LoadFailure {
        if error.domain == "WebKitPolicyError" || (error.domain == "WebKitNetworkError" && error.code == 302) { return .interrupted }
        if error.domain == "g-io-error-quark" && error.code == GLibError.ioCancelled { return .cancelled }
        return .unreachable
    }

    private func loadFailed(_ uri: String, _ error: GLibError) -> Bool {
        credential.loadEnded()
        for action in state.loadFailed(URL(string: uri), Self.failure(of: error)) { perform(action, failure: error) }
        return true
    }

    private func tlsFailed(_ uri: String, _ problems: CertificateProblems) -> Bool {
        state.certificateRefused()
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
        state.ownPageAsked()
        webView.loadAlternateHTML(Self.page(title: title, message: message, details: details, closing: closing), for: uri)
    }

    /// Sesame's own page: a title, a message, the details as a list and a closing sentence;
    /// `id` names the main element.
    private static func page(
        title: String, message: String, details: [String] = [], closing: String? = nil, id: String? = nil
    )
        -> String
    {
        let list = details.isEmpty ? "" : "<ul id=\"errorDetails\">" + details.map { "<li>\(Self.escape($0))</li>" }.joined() + "</ul>"
        let end = closing.map { "<p id=\"errorClosing\">\(Self.escape($0))</p>" } ?? ""
        return """
            <!DOCTYPE html><html><head><meta charset="utf-8"><title>\(Self.escape(title))</title>
            <style>body{font-family:Cantarell,"Noto \
            Sans",sans-serif;background:#f6f5f4;color:#2e3436;display:flex;justify-content:center;margin-top:15vh}
            main{max-width:520px;background:#fff;padding:32px;border-radius:8px;box-shadow:0 1px 3px \
            rgba(0,0,0,.2)}h1{font-size:22px}</style></head>
            <body><main\(id.map { " id=\"\($0)\"" } ?? "")><h1 id="errorTitle">\(Self.escape(title))</h1><p id="errorMessage">\(Self.escape(message))</p>\
            \(list)\(end)</main></body></html>
            """
    }

    static func escape(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;")
            .replacing(">", with: "&gt;").replacing("\"", with: "&quot;")
    }
}
