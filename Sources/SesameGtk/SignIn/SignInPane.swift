import FoundationEssentials
import SesameCore
import SesameSamples
import SesameService
import SesameWindowModel

/// The window's sign-in page, as the Core's ``SignInUserAgent``: a title bar with Cancel above
/// one ``SignInView`` per storage group (each keeps its own cookies, so single sign-on is per
/// group). The store presents a session; the pane shows its group's view, which hands the
/// redirect straight to the session.
@MainActor
final class SignInPane: SignInUserAgent {
    /// The sign-in page.
    let root: Box
    private let title: Label
    private let views: Stack
    private var viewsByGroup: [String: SignInView] = [:]
    private let trace: FlowTrace
    private let webDataDirectory: URL?
    private let automation: Bool
    /// The session on screen.
    private(set) var current: SignInSession?
    /// The window closed: its widgets are gone, and a sign-in asking for a page is told so.
    private var closed = false
    /// Whom the sign-ins on this pane are for: the window's samples, another program (the
    /// identity broker), or this computer's registration (``signingIn(for:_:)`` sets it).
    enum Purpose: Equatable {
        case samples
        /// Another program asked for it (the identity broker): the page names it.
        case program(String)
        /// The account menu's "Register This Computer…": the page says so, and offers no browser
        /// (the registration's answer comes to this view only).
        case registration
    }

    /// Whom the sign-ins are for now.
    private(set) var purpose = Purpose.samples
    /// This computer's single sign-on credential for a page's address (nil: not registered with
    /// its sign-in service); set by the window when it can register.
    var deviceCredentials: (@Sendable (URL) async -> Secret?)?
    /// The sample a sign-in's account type is for, by its title ("Tasks"); nil for none.
    var sampleTitle: ((String) -> String?)?
    /// The view of the session on screen, or of the last one.
    private(set) var view: SignInView?
    /// The window shows the sign-in page.
    var onShow: (() -> Void)?
    /// The window goes back to the samples; `true` after the redirect (the view still shows the
    /// last page, until the window leaves it).
    var onHide: ((_ afterRedirect: Bool) -> Void)?
    /// A sign-in page finished loading.
    var onPageFinished: (() -> Void)?
    /// "Continue in your browser": always there while the view is up; suggested when a page
    /// cannot load or cannot be trusted.
    private let browserButton: Button
    /// "Try the Demo Instead": offered when a page cannot be reached and ``onTryDemo`` is set.
    private let demoButton = Button(L("Try the Demo Instead"), accessibleName: L("Try Sesame with its built-in demo instead"))
    /// What "Try the Demo Instead" does (nil: it is not offered).
    var onTryDemo: (() -> Void)?
    /// What the window shows while the sign-in goes on in the system browser.
    private let browserPage: Box
    /// A tenant's refusal on the service's page: Sesame's sentence and the one action that helps.
    private let refusalBar = Box(vertical: false, spacing: 8)
    private let refusalText = Label("", wrap: true, xalign: 0)
    private let refusalActions = RefusalActions()
    /// A refusal's "Register This Computer…" (set by the window when it can register).
    var onRegisterDevice: (() -> Void)? {
        get { refusalActions.onRegisterDevice }
        set { refusalActions.onRegisterDevice = newValue }
    }
    /// The refusal on screen, if any.
    private(set) var refusal: RefusalNotice?

    /// - Parameter webDataDirectory: where each group's web data lives (a folder per group);
    ///   nil keeps it in memory.
    /// - Parameter automation: one view, which WebKitWebDriver drives, serves every group.
    init(trace: FlowTrace, webDataDirectory: URL?, automation: Bool) {
        self.trace = trace
        self.webDataDirectory = webDataDirectory
        self.automation = automation
        root = Box(vertical: true, spacing: 0)
        let bar = Box(vertical: false, spacing: 6)
        bar.setMargin(6)
        title = Label(L("Sign in"), xalign: 0)
        title.ellipsizeAtEnd()
        bar.pack(title, expand: true)
        views = Stack(sizedByVisibleChild: true)
        root.pack(bar)
        refusalText.accessibleName = L("Why the sign-in was refused")
        refusalBar.setMargin(8)
        refusalBar.setName("sign-in-refusal")
        refusalBar.pack(refusalText, expand: true)
        refusalBar.pack(refusalActions.root)
        root.pack(refusalBar)
        root.pack(views, expand: true)
        browserButton = Button(L("Continue in your browser"), accessibleName: L("Continue the sign-in in your web browser"))
        bar.pack(browserButton)
        bar.pack(demoButton)
        let cancelButton = Button(L("Cancel"), accessibleName: L("Cancel sign-in"))
        bar.pack(cancelButton)
        let heading = Label(L("Finish signing in in your browser"), xalign: 0.5)
        heading.setMarkup("<span size=\"x-large\" weight=\"bold\">\(L("Finish signing in in your browser"))</span>")
        let explanation = Label(
            L("Sesame opened the sign-in in your default web browser. When you have signed in there, this window comes back."),
            wrap: true, xalign: 0.5)
        explanation.accessibleName = L("Waiting for the browser")
        browserPage = Box(vertical: true, spacing: 12, [heading, explanation])
        browserPage.setMargin(48)
        browserPage.setName("sign-in-browser")
        browserPage.showAll()
        views.add(browserPage, name: "browser")
        root.onDestroy { [weak self] in self?.closed = true }
        browserButton.onClick { [weak self] in self?.continueInBrowser() }
        cancelButton.onClick { [weak self] in self?.cancel() }
        demoButton.onClick { [weak self] in
            self?.trace.record("demo-chosen")
            self?.onTryDemo?()
        }
        if automation {
            // Only one context may allow automation, and WebDriver's session starts with the
            // app: the view exists from the start.
            _ = signInView(forGroup: "automation")
        }
    }

    /// Whether "Continue in your browser" is offered prominently (a page failed to load or
    /// could not be trusted).
    var suggestsBrowser: Bool { browserButton.hasStyleClass("suggested-action") }

    /// Whether a sign-in is on screen.
    var isSigningIn: Bool { current != nil }

    /// What the sign-in page's bar says it is ("Signing in to Tasks — …").
    var heading: String { title.text }

    nonisolated func present(_ session: SignInSession) async throws {
        let credential = await deviceCredential(for: session)
        try await show(session, deviceCredential: credential)
    }

    /// This computer's single sign-on credential for the session's page: when it is registered
    /// with that sign-in service, and the request does not ask the user to choose or type who
    /// signs in (`prompt=login`, `select_account`).
    private func deviceCredential(for session: SignInSession) async -> Secret? {
        guard purpose != .registration, let credentials = deviceCredentials else { return nil }
        let query = URLComponents(url: session.authorizationURL, resolvingAgainstBaseURL: false)?.queryItems ?? []
        guard !query.contains(where: { $0.name == "prompt" && ["login", "select_account"].contains($0.value ?? "") }) else { return nil }
        guard let credential = await credentials(session.authorizationURL) else { return nil }
        trace.record("device-credential-sent", [("host", session.authorizationURL.host ?? "")])
        return credential
    }

    /// Runs `body` — sign-ins for `purpose` — then gives the pane back to the window's samples.
    func signingIn<T, E: Error>(for purpose: Purpose, _ body: () async throws(E) -> T) async throws(E) -> T {
        self.purpose = purpose
        defer { self.purpose = .samples }
        return try await body()
    }

    nonisolated func dismiss(_ session: SignInSession) async {
        await hide(session)
    }

    private func show(_ session: SignInSession, deviceCredential: Secret?) throws(WindowClosed) {
        guard !closed else { throw WindowClosed() }
        current = session
        browserButton.isVisible = purpose != .registration
        browserButton.removeStyleClass("suggested-action")
        demoButton.hide()
        showRefusal(nil)
        let view = signInView(forGroup: session.storageGroup)
        self.view = view
        switch purpose {
        case .registration: title.text = L("Registering this computer — the identity service’s own page")
        case .program(let name):
            title.text = String(formatting: L("Sign in for %@ — the identity service’s own page"), DisplayText.isolated(name))
        case .samples:
            title.text =
                sampleTitle?(session.accountType).map { String(formatting: L("Signing in to %@ — the identity service’s own page"), $0) }
                ?? L("Sign in — the identity service’s own page")
        }
        title.tooltip = title.text
        // The page is asked for first: WebKit starts its processes while the window shows.
        view.begin(session, deviceCredential: deviceCredential)
        // After `begin` shows it: a stack makes only a visible child the one on screen.
        views.show(view.root)
        trace.record("sign-in-page-requested", [("accountType", session.accountType)])
        onShow?()
        view.takeFocus()
    }

    private func hide(_ session: SignInSession) {
        guard current?.id == session.id else { return }
        current = nil
        let answered = view?.interceptedRedirect == true
        view?.end(keepingOnScreen: answered)
        onHide?(answered)
        retireViewsWhenIdle()
    }

    /// The window left sign-in after a redirect (``onHide`` said `true`): the view that kept the
    /// last page on screen meanwhile hides.
    func left() {
        guard current == nil else { return }
        view?.root.hide()
    }

    /// Shows Sesame's sentence for a refusal page (nil: hides it); a device rule suggests the
    /// system browser, where a managed browser may pass.
    private func showRefusal(_ notice: RefusalNotice?) {
        refusal = notice
        guard let notice else {
            refusalBar.hide()
            return
        }
        refusalText.text = notice.sentence
        refusalBar.showAll()
        refusalActions.show(notice)
        if notice.action == .continueInBrowser { browserButton.addStyleClass("suggested-action") }
    }

    /// "Continue in your browser": this sign-in ends as handed off, and the sample's session
    /// starts it again in the system browser.
    func continueInBrowser() {
        guard let current, view != nil else { return }
        trace.record("continue-in-browser", [("accountType", current.accountType)])
        current.handOff()
    }

    /// The sign-in is in the system browser: the window says so (Cancel still ends it).
    func showBrowserWait(_ session: SignInSession) throws(WindowClosed) {
        guard !closed else { throw WindowClosed() }
        current = session
        view?.end()
        views.show(browserPage)
        browserButton.hide()
        title.text = L("Sign in — in your browser")
        onShow?()
    }

    /// The browser's sign-in ended.
    func hideBrowserWait(_ session: SignInSession) {
        guard current?.id == session.id else { return }
        current = nil
        onHide?(false)
    }

    /// The network is back: a sign-in page that could not be reached loads again.
    func networkReturned() {
        guard current != nil else { return }
        view?.reloadUnreachablePage()
    }

    /// Closes sign-in without a result (Cancel, or the window closing).
    func cancel() {
        current?.cancel()
    }

    /// "Forget sign-in data": every group's cookies and web data — through the live views'
    /// contexts, and on disk for groups whose view was let go.
    func forgetSignInData() {
        trace.record("sign-in-data-forgotten")
        for view in viewsByGroup.values { view.forgetSignInData() }
        for context in memoryContexts.values { context.clearWebsiteData() }
        guard let webDataDirectory else { return }
        let groups = (try? FileManager.default.contentsOfDirectory(atPath: webDataDirectory.path)) ?? []
        for group in groups where viewsByGroup[group] == nil {
            try? FileManager.default.removeItem(at: webDataDirectory.appending(path: group))
        }
    }

    /// No browser engine runs while nobody signs in: a few seconds after a sign-in ends (so that
    /// one that follows at once reuses the view), the views and their WebKit processes are let
    /// go; the next sign-in starts them again. The cookies stay on disk, so the service's single
    /// sign-on is kept ("stay signed in"; a session cookie ends with the sign-in, as a browser's
    /// does when it closes). Views in memory only (tests) keep their cookie jar for the window's
    /// life; WebDriver's view (`--automation-mode`) stays.
    private func retireViewsWhenIdle() {
        guard !automation else { return }
        retiring?.cancel()
        retiring = Task { [weak self] in
            try? await Task.sleep(for: Self.idleBeforeRetiring)
            guard let self, !Task.isCancelled, self.current == nil else { return }
            for view in self.viewsByGroup.values {
                self.views.remove(view.root)
            }
            self.viewsByGroup = [:]
            self.view = nil
            // What the views and their engine's client side held is free now; glibc keeps freed
            // heap pages mapped unless asked: they go back to the system (RssAnon, `make bench`).
            Heap.returnFreePages()
            self.trace.record("sign-in-view-released")
        }
    }

    /// How long the views stay after a sign-in ends.
    static let idleBeforeRetiring: Duration = .seconds(3)
    private var retiring: Task<Void, Never>?
    /// The cookie jars of views without a data directory (tests), kept across views.
    private var memoryContexts: [String: WebContext] = [:]

    private func signInView(forGroup group: String) -> SignInView {
        retiring?.cancel()
        if automation, let shared = viewsByGroup.values.first { return shared }
        if let existing = viewsByGroup[group] { return existing }
        var context: WebContext?
        if webDataDirectory == nil, !automation {
            context = memoryContexts[group] ?? WebContext(dataDirectory: nil, automation: false)
            memoryContexts[group] = context
        }
        let view = SignInView(
            dataDirectory: webDataDirectory?.appending(path: group), trace: trace, automation: automation, context: context)
        view.onLoadFinished = { [weak self] in self?.onPageFinished?() }
        view.onTrouble = { [weak self] in self?.browserButton.addStyleClass("suggested-action") }
        view.onUnreachable = { [weak self] in
            guard let self, self.onTryDemo != nil else { return }
            self.demoButton.show()
        }
        view.onRefusalPage = { [weak self] details in
            guard let self, let current = self.current else { return }
            self.showRefusal(RefusalNotice(page: details, authorizationURL: current.authorizationURL))
        }
        viewsByGroup[group] = view
        views.add(view.root, name: group)
        return view
    }
}

/// Why a sign-in could not be shown: the window it would be shown in is closed.
struct WindowClosed: Error, CustomStringConvertible {
    var description: String { "the window is closed" }
}
