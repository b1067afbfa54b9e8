import Foundation
import SesameCore
import SesameSamples

/// The window: a header bar switching between the samples, the sign-in page that takes the
/// window while the identity service's pages are up, the error bar (the seeds' alert with Retry
/// and Cancel), and the flow inspector.
@MainActor
public final class MainWindow: SignInFailurePresenter {
    /// The window.
    public let window: Window
    let model: AppModel
    /// The sign-in page: the Core's user agent for every sample.
    let signIn: SignInPane
    /// The system browser as the sign-in's user agent (a sample's `signInWith`, or "Continue in your browser").
    private let browserAgent: BrowserSignInAgent
    private let mainStack = Stack(sizedByVisibleChild: true)
    private let samples = Stack(crossfade: true, sizedByVisibleChild: true)
    /// The flow inspector, built once the window is on screen (it replays the trace so far).
    private(set) var inspector: FlowInspector?
    private let inspectorSlot = Box(vertical: true, spacing: 0)
    private let errorBar = Box(vertical: false, spacing: 8)
    private let errorLabel = Label("", wrap: true, xalign: 0)
    /// "You are offline", while the desktop says so.
    private let offlineBar = Box(vertical: false, spacing: 8)
    /// The desktop's network monitor, feeding the model's ``NetworkStatus``.
    private var networkMonitor: DesktopNetworkMonitor?
    /// The error bar shows a failure that got no answer: the network's return answers Retry.
    private var errorWantsNetwork = false
    /// Who is signed in for the sample showing, with its menu.
    private let account = MenuButton(title: "")
    private let accountName = Label("", xalign: 0)
    private let accountUser = Label("", xalign: 0)
    private let accountTenant = Label("", xalign: 0)
    private let switchAccountButton: Button
    private let signOutButton: Button
    private let signInButton: Button
    private var errorChoice: CheckedContinuation<Bool, Never>?
    private(set) var pages: [Sample.Kind: any SamplePage] = [:]
    /// The sample shown first, and its session (made before its page: see ``start()``).
    private var first: (sample: Sample, session: SampleSession)?
    private var firstPageBuilt = false
    /// `start()` began the first sample's sign-in before its page was built: the page joins it.
    private var firstPageJoinsSignIn = false
    private var appearing: Task<Void, Never>?
    private var isClosed = false
    /// Watches the main loop for stalls (`Options.reportStalls`).
    private var stallWatch: MainLoopWatch?

    /// Options of the window that are not the samples'.
    public struct Options: Sendable {
        /// Where each storage group's web data (cookies) lives; nil keeps it in memory.
        public var webDataDirectory: URL?
        /// `--automation-mode`: WebKitWebDriver may drive the sign-in view.
        public var automation: Bool
        /// The sample to show first.
        public var initialSample: Sample.Kind?
        /// Where sign-ins are kept, when the user should know (files, not a keyring): the
        /// folder, shown in the account menu.
        public var filesStorage: URL?
        /// Record every main-loop stall longer than a frame (16 ms) in the trace as
        /// `main-loop-stall` (with `--trace-events`: a window that froze shows in the file).
        public var reportStalls: Bool
        /// Follow the desktop's network monitor (GIO's); without it, whoever made the model's
        /// ``NetworkStatus`` says when the network comes and goes.
        public var followsDesktopNetwork: Bool

        public init(
            webDataDirectory: URL?, automation: Bool = false, initialSample: Sample.Kind? = nil, filesStorage: URL? = nil,
            reportStalls: Bool = false, followsDesktopNetwork: Bool = true
        ) {
            self.webDataDirectory = webDataDirectory
            self.automation = automation
            self.initialSample = initialSample
            self.filesStorage = filesStorage
            self.reportStalls = reportStalls
            self.followsDesktopNetwork = followsDesktopNetwork
        }
    }

    public init(application: Application?, model: AppModel, options: Options) {
        self.model = model
        if options.reportStalls {
            stallWatch = MainLoopWatch(reportingStallsOver: .milliseconds(16)) { [trace = model.trace] stall in
                trace.record("main-loop-stall", [("ms", String(format: "%.1f", stall / .milliseconds(1)))])
            }
        }
        switchAccountButton = Button(L("Switch account"), accessibleName: L("Sign in as someone else"))
        signOutButton = Button(L("Sign out"), accessibleName: L("Sign out of this sample"))
        signInButton = Button(L("Sign in"), accessibleName: L("Sign in to this sample"))
        window = Window(application: application, title: "Sesame", width: 1240, height: 720)
        signIn = SignInPane(trace: model.trace, webDataDirectory: options.webDataDirectory, automation: options.automation)
        browserAgent = BrowserSignInAgent(pane: signIn, window: window, trace: model.trace)

        let header = HeaderBar(title: "Sesame")
        let switcher = StackSwitcher(samples)
        switcher.accessibleName = L("Samples")
        header.setCustomTitle(switcher)
        window.setTitlebar(header)

        mainStack.add(samples, name: "samples")
        mainStack.add(signIn.root, name: "sign-in")

        errorBar.setMargin(8)
        errorLabel.accessibleName = L("Sign-in error")
        errorBar.setName("sign-in-error")
        errorBar.pack(errorLabel, expand: true)
        let offlineLabel = Label(UserMessage.offline, wrap: true, xalign: 0)
        offlineLabel.accessibleName = L("Offline")
        offlineBar.setMargin(8)
        offlineBar.setName("offline")
        offlineBar.pack(offlineLabel, expand: true)
        let content = Box(vertical: true, spacing: 0)
        content.pack(offlineBar)
        content.pack(errorBar)
        content.pack(mainStack, expand: true)
        let panes = Paned(content, inspectorSlot, position: 660, resizeEnd: true)
        window.setContent(panes)

        // The sample shown first: its session now, its page in `start()`; the others' once the
        // window is on screen.
        if let sample = model.samples.first(where: { $0.kind == options.initialSample }) ?? model.samples.first {
            first = (sample, SampleSession(sample: sample, model: model, userAgent: signIn, browser: browserAgent, failures: self))
        }

        // The account of the sample showing: who, and what can be done about it (one sign-out).
        account.accessibleName = L("Account")
        accountName.setMarkup("")
        accountUser.addStyleClass("dim-label")
        accountTenant.addStyleClass("dim-label")
        accountName.accessibleName = L("Signed-in user")
        for widget in [accountName, accountUser, accountTenant, signInButton, switchAccountButton, signOutButton] as [Widget] {
            account.content.pack(widget)
        }
        let forget = Button(L("Forget sign-in data"))
        account.content.pack(forget)
        if let folder = options.filesStorage {
            let storage = Label(
                String(format: L("No keyring is in use: sign-ins are kept in files under %@, readable by you only."), folder.path),
                wrap: true,
                xalign: 0)
            storage.accessibleName = L("Where sign-ins are kept")
            storage.addStyleClass("dim-label")
            account.content.pack(storage)
        }
        account.content.showAll()
        header.packEnd(account)
        signInButton.onClick { [weak self] in
            self?.fromAccountMenu { page in
                _ = await page.session.signInOnRequest()
                await page.appear()
            }
        }
        switchAccountButton.onClick { [weak self] in self?.fromAccountMenu { page in await page.switchAccount() } }
        signOutButton.onClick { [weak self] in self?.fromAccountMenu { page in await page.signOut() } }
        forget.onClick { [weak self] in
            self?.account.close()
            self?.signIn.forgetSignInData()
            self?.model.trace.record("sign-in-data-forgotten")
        }
        errorBar.pack(Button(L("Retry"), accessibleName: L("Retry sign-in")) { [weak self] in self?.answerError(retry: true) })
        errorBar.pack(
            Button(L("Cancel"), accessibleName: L("Cancel after the sign-in error")) { [weak self] in
                self?.answerError(retry: false)
            })

        signIn.onShow = { [weak self] in
            self?.mainStack.visibleChildName = "sign-in"
            self?.showWindow()
        }
        signIn.onHide = { [weak self] in
            self?.mainStack.visibleChildName = "samples"
            self?.completeWindow()
        }
        // While the first sign-in page loads, the main thread is WebKit's: the rest of the
        // window is built once it has loaded (or failed), at the latest a second after showing.
        signIn.onPageFinished = { [weak self] in self?.completeWindow() }
        window.onCloseRequest { [weak self] in
            self?.signIn.cancel()
            return false
        }
        window.onDestroy { [weak self] in self?.close() }

        header.showAll()
        panes.showAll()
        errorBar.hide()
        offlineBar.isVisible = !model.network.isOnline
        model.network.observe { [weak self] online in self?.networkChanged(online: online) }
        if options.followsDesktopNetwork { networkMonitor = DesktopNetworkMonitor(feeding: model.network) }
        showAccount()
        start()
        Task { [weak self] in
            try? await Task.sleep(for: Self.longestWaitBeforeShowing)
            self?.showWindow()
        }
    }

    /// How long the window may wait for its first sample before it shows.
    static let longestWaitBeforeShowing: Duration = .milliseconds(250)
    private var isShown = false

    /// The window shows once its first sample knows whether someone must sign in — and if
    /// someone must (and the sample signs in when shown), with the sign-in page already asked
    /// for, before the sample's page is even built: WebKit starts its processes while the window
    /// is laid out and painted, as they do for a bare window with a web view — and at the
    /// latest after `longestWaitBeforeShowing` (a slow keyring).
    private func start() {
        guard let first else {
            showWindow()
            return
        }
        appearing = Task { [weak self] in
            let restored = await first.session.restore()
            guard let self, !self.isClosed else { return }
            if restored == nil, !self.isShown, first.sample.kind.signsInWhenShown {
                // The page, built once the sign-in page has loaded (or an error shows the window
                // without one), joins this sign-in.
                self.firstPageJoinsSignIn = true
                first.session.beginSignIn()
                return
            }
            self.showWindow()
            guard let page = self.pages[first.sample.kind] else { return }
            await page.appear()
        }
    }

    /// Builds the first sample's page (once) and shows it.
    private func buildFirstPage() {
        guard !firstPageBuilt, !isClosed else { return }
        firstPageBuilt = true
        guard let first else { return }
        buildPage(first.sample, session: first.session)
        samples.visibleChildName = first.sample.kind.rawValue
        samples.onVisibleChildChanged { [weak self] in
            self?.showAccount()
            self?.currentPageAppears()
        }
        showAccount()
        if firstPageJoinsSignIn, let page = pages[first.sample.kind] {
            appearing = Task { await page.appear() }
        }
    }

    /// Shows the window (once): with its first sample's page, or with the sign-in page alone
    /// while that loads (WebKit's processes need the main thread then; the samples' pages come
    /// once it has loaded).
    private func showWindow() {
        guard !isShown, !isClosed else { return }
        isShown = true
        if !signIn.isSigningIn { buildFirstPage() }
        window.show()
        MainLoop.whenIdle { [weak self] in
            guard let self, !self.isClosed else { return }
            self.model.trace.record("window-shown")
            if !self.signIn.isSigningIn { self.completeWindow() }
        }
        Task { [weak self] in
            try? await Task.sleep(for: .seconds(1))
            self?.completeWindow()
        }
    }

    /// Builds what the window's first frame went without: the samples not shown first and the
    /// flow inspector.
    private func completeWindow() {
        guard !isClosed else { return }
        buildRemainingPages()
        buildInspector()
    }

    /// Builds a sample's page and its tab (in the samples' order).
    private func buildPage(_ sample: Sample, session: SampleSession? = nil) {
        guard pages[sample.kind] == nil else { return }
        let session = session ?? SampleSession(sample: sample, model: model, userAgent: signIn, browser: browserAgent, failures: self)
        let page: any SamplePage =
            switch sample.kind {
            case .directory: DirectoryPage(session: session, trace: model.trace)
            case .tasks: TasksPage(session: session, trace: model.trace)
            case .me, .openID: MePage(session: session)
            }
        pages[sample.kind] = page
        let position = model.samples.filter { pages[$0.kind] != nil }.firstIndex { $0.kind == sample.kind }
        samples.add(page.root, name: sample.kind.rawValue, title: page.title, position: position)
        page.root.showAll()
        session.onAccountChange = { [weak self, kind = sample.kind] in
            if self?.currentKind == kind { self?.showAccount() }
        }
    }

    /// Builds the pages of the samples not shown first.
    private func buildRemainingPages() {
        guard !isClosed else { return }
        buildFirstPage()
        for sample in model.samples { buildPage(sample) }
    }

    /// Builds the flow inspector (once), after the window's first frame — and while a first
    /// sign-in page loads, after it: it replays the trace so far.
    @discardableResult
    private func buildInspector() -> FlowInspector {
        if let inspector { return inspector }
        let inspector = FlowInspector(trace: model.trace, parent: window)
        self.inspector = inspector
        inspectorSlot.pack(inspector.root, expand: true)
        inspector.root.showAll()
        return inspector
    }

    /// The sample showing.
    var currentKind: Sample.Kind? { samples.visibleChildName.flatMap(Sample.Kind.init(rawValue:)) }

    /// Shows a sample, as clicking its tab does.
    public func show(_ kind: Sample.Kind) {
        buildRemainingPages()
        samples.visibleChildName = kind.rawValue
    }

    private func currentPageAppears() {
        guard !isClosed, let kind = currentKind, let page = pages[kind], !signIn.isSigningIn else { return }
        appearing = Task { [weak self] in
            await page.appear()
            self?.showWindow()
        }
    }

    // MARK: The network

    /// The desktop says the network went or came back. Offline, the window says so once, above
    /// whatever failed; back online, what failed for want of it is tried again by itself: a
    /// sign-in page that could not load reloads, a sign-in error that got no answer is retried,
    /// each page retries what it could not read.
    private func networkChanged(online: Bool) {
        guard !isClosed else { return }
        model.trace.record(online ? "network-online" : "network-offline")
        offlineBar.isVisible = !online
        guard online else { return }
        signIn.networkReturned()
        if errorWantsNetwork { answerError(retry: true) }
        for page in pages.values { page.networkReturned() }
    }

    // MARK: SignInFailurePresenter

    /// Shows a failed sign-in in the error bar and waits for Retry or Cancel — or, when it got no
    /// answer at all, for the network to come back.
    public func retryAfter(_ error: AccountStoreError) async -> Bool {
        guard !isClosed else { return false }
        showWindow()
        answerError(retry: false)
        // A sentence made for the user, in their language, with the service's code (AADSTS65004).
        let offline = !model.network.isOnline && NetworkStatus.isNoAnswer(error)
        errorLabel.text = offline ? UserMessage.offline : UserMessage.text(for: error)
        errorWantsNetwork = NetworkStatus.isNoAnswer(error)
        errorBar.showAll()
        return await withCheckedContinuation { errorChoice = $0 }
    }

    private func answerError(retry: Bool) {
        errorWantsNetwork = false
        errorBar.hide()
        let choice = errorChoice
        errorChoice = nil
        choice?.resume(returning: retry)
    }

    /// Closes the account menu and acts on the sample showing.
    private func fromAccountMenu(_ act: @escaping @MainActor (any SamplePage) async -> Void) {
        account.close()
        guard let kind = currentKind, let page = pages[kind] else { return }
        Task { await act(page) }
    }

    /// The header's account: the name (or "Not signed in"), and in its menu the user name, the
    /// tenant and what can be done.
    private func showAccount() {
        guard !isClosed else { return }
        let signedIn = currentKind.flatMap { pages[$0] }?.session.account
        account.label.text = signedIn?.displayName ?? L("Not signed in")
        accountName.setMarkup("<b>\(Self.markupEscaped(signedIn?.displayName ?? L("Not signed in")))</b>")
        accountUser.text = signedIn?.username ?? ""
        accountTenant.text = signedIn.map { String(format: L("Tenant: %@"), $0.realm) } ?? ""
        accountUser.isVisible = signedIn != nil
        accountTenant.isVisible = signedIn != nil
        switchAccountButton.isVisible = signedIn != nil
        signOutButton.isVisible = signedIn != nil
        signInButton.isVisible = signedIn == nil
    }

    private static func markupEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(
            of: ">", with: "&gt;")
    }

    /// Writes the flow diagram as SVG or PNG (what the inspector's Export menu saves): the whole
    /// flow, or from the trace's event `since` on.
    public func exportFlowDiagram(_ format: Canvas.Format, to file: URL, since: Int = 0) throws {
        let inspector = buildInspector()
        inspector.showPending()
        try inspector.diagram.export(format, to: file, since: since)
    }

    /// The window was destroyed: stop every request and sign-in; no widget is touched again.
    private func close() {
        guard !isClosed else { return }
        isClosed = true
        stallWatch?.stop()
        appearing?.cancel()
        signIn.cancel()
        answerError(retry: false)
        for page in pages.values { page.close() }
        inspector?.close()
    }
}
