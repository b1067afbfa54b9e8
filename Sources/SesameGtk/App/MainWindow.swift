import Foundation
import SesameCore
import SesameGIO
import SesameSamples

/// The window: a header bar switching between the samples, the sign-in page that takes the
/// window while the identity service's pages are up, the offline and error bars (the seeds'
/// alert with Retry and Cancel), and the flow inspector.
///
/// It starts in phases (``Phase``), moved through by one function, ``advance(to:)``: the first
/// frame shows either the first sample's page or, when someone must sign in, the sign-in page
/// alone (already loading); the other samples and the inspector come once that is on screen.
@MainActor
public final class MainWindow: SignInFailurePresenter {
    /// The window.
    public let window: Window
    let model: AppModel
    /// The sign-in page: the Core's user agent for every sample.
    let signIn: SignInPane
    /// The system browser as the sign-in's user agent (a sample's `signInWith`, or "Continue in your browser").
    private let browserAgent: BrowserSignInAgent
    let mainStack = Stack(sizedByVisibleChild: true)
    let samples = Stack(crossfade: true, sizedByVisibleChild: true)
    /// The flow inspector, built once the window is on screen (it replays the trace so far).
    private(set) var inspector: FlowInspector?
    let inspectorSlot = Box(vertical: true, spacing: 0)
    let errorBar = ErrorBar()
    /// The account service's question to the user: may this program use this account?
    /// Listens to the store: an account signed out elsewhere (the bus, another page) leaves the window.
    var storeEvents: Task<Void, Never>?
    let offlineBar = OfflineBar()
    let settingsNotice: SettingsNotice?
    let accountMenu: AccountMenu
    /// The desktop's network monitor, feeding the model's ``NetworkStatus``.
    private var networkMonitor: NetworkMonitor?
    private(set) var pages: [Sample.Kind: any SamplePage] = [:]
    /// The sample shown first, and its session (made before its page: see ``start()``).
    private var first: (sample: Sample, session: SampleSession)?
    private var appearing: Task<Void, Never>?
    /// Watches the main loop for stalls (`Options.reportStalls`).
    private var stallWatch: MainLoopWatch?
    /// The header's primary menu: Keyboard Shortcuts, About Sesame.
    let primaryMenu: PrimaryMenu
    /// The samples (or sign-in) beside the flow inspector.
    var panes: Paned?
    /// Where the window's size and inspector are kept across restarts (nil: nowhere).
    let stateFile: URL?
    /// The app, which Ctrl+Q ends (without one, Ctrl+Q closes the window).
    weak var application: Application?
    /// A sign-in ended: the page's first control takes the keyboard focus once it can.
    var focusesAfterSignIn = false

    /// How far the window has come. Phases only move forward; some are skipped.
    enum Phase: Comparable {
        /// Built, not shown: the first sample finds out whether someone must sign in.
        case starting
        /// On screen with the sign-in page alone, which loads (WebKit's processes need the main
        /// thread then); the samples' pages come once it has loaded.
        case firstSignIn
        /// On screen with the first sample's page.
        case shown
        /// Every sample's page and the flow inspector are built.
        case complete
        /// Destroyed: no request runs on, no widget is touched again.
        case closed
    }
    private(set) var phase = Phase.starting

    public init(application: Application?, model: AppModel, options: Options) {
        self.model = model
        if options.reportStalls {
            stallWatch = MainLoopWatch(reportingStallsOver: .milliseconds(16)) { [trace = model.trace] stall in
                trace.record("main-loop-stall", [("ms", String(format: "%.1f", stall / .milliseconds(1)))])
            }
        }
        window = Window(application: application, title: "Sesame", width: 1240, height: 720)
        signIn = SignInPane(trace: model.trace, webDataDirectory: options.webDataDirectory, automation: options.automation)
        browserAgent = BrowserSignInAgent(pane: signIn, window: window, trace: model.trace)
        accountMenu = AccountMenu(filesStorage: options.filesStorage)
        primaryMenu = PrimaryMenu(window: window, documentation: options.documentation)
        stateFile = options.stateFile
        self.application = application
        settingsNotice = options.settingsWarnings.isEmpty ? nil : SettingsNotice(options.settingsWarnings)
        // The sample shown first: its session now, its page when the window shows; the others' later.
        if let sample = model.samples.first(where: { $0.kind == options.initialSample }) ?? model.samples.first {
            first = (sample, SampleSession(sample: sample, model: model, userAgent: signIn, browser: browserAgent, failures: self))
        }
        layOut()
        restoreState()
        connect()
        offlineBar.show(offline: !model.network.isOnline)
        model.network.observe { [weak self] online in self?.networkChanged(online: online) }
        if options.followsDesktopNetwork {
            networkMonitor = NetworkMonitor { [weak network = model.network] online in network?.update(isOnline: online) }
        }
        showAccount()
        followStore()
        start()
        Task { [weak self] in
            try? await Task.sleep(for: Self.longestWaitBeforeShowing)
            self?.showWindow()
        }
    }

    /// What the account menu, the sign-in page and the window itself do to the window.
    private func connect() {
        accountMenu.onSignIn = { [weak self] in
            self?.onCurrentPage { page in
                _ = await page.session.signInOnRequest()
                await page.appear()
            }
        }
        accountMenu.onSwitchAccount = { [weak self] in self?.onCurrentPage { page in await page.switchAccount() } }
        accountMenu.onSignOut = { [weak self] in self?.onCurrentPage { page in await page.signOut() } }
        accountMenu.onForget = { [weak self] in
            self?.signIn.forgetSignInData()
            self?.model.trace.record("sign-in-data-forgotten")
        }
        signIn.onShow = { [weak self] in
            if self?.leaving != nil {
                self?.leaving = nil
                self?.window.resumeFrames()
            }
            self?.mainStack.visibleChildName = "sign-in"
            self?.showWindow()
        }
        signIn.onHide = { [weak self] afterRedirect in
            if afterRedirect { self?.leaveSignInWithTheData() } else { self?.leaveSignIn() }
        }
        // While the first sign-in page loads, the main thread is WebKit's: the rest of the
        // window is built once it has loaded (or failed), at the latest a second after showing.
        signIn.onPageFinished = { [weak self] in self?.advance(to: .complete) }
        window.onCloseRequest { [weak self] in
            self?.saveState()
            self?.signIn.cancel()
            return false
        }
        window.onKeyPress { [weak self] press in WindowShortcut(press).map { self?.perform($0) ?? false } ?? false }
        window.onDestroy { [weak self] in self?.advance(to: .closed) }
    }

    /// How long the window may wait for its first sample before it shows.
    static let longestWaitBeforeShowing: Duration = .milliseconds(250)

    /// The window shows once its first sample knows whether someone must sign in — and if
    /// someone must (and the sample signs in when shown), with the sign-in page already asked
    /// for, before the sample's page is even built: WebKit starts its processes while the window
    /// is laid out and painted, as they do for a bare window with a web view — and at the
    /// latest after `longestWaitBeforeShowing` (a slow keyring).
    private func start() {
        guard let first else {
            advance(to: .complete)
            return
        }
        appearing = Task { [weak self] in
            let restored = await first.session.restore()
            guard let self, self.phase == .starting || self.phase == .shown else { return }
            if restored == nil, self.phase == .starting, first.sample.kind.signsInWhenShown {
                // The sign-in page shows the window; the page, built once it has loaded, joins this sign-in.
                first.session.beginSignIn()
                return
            }
            self.showWindow()
            await self.pages[first.sample.kind]?.appear()
        }
    }

    /// Shows the window (once): the sign-in page alone while one is up, else the first sample's.
    private func showWindow() {
        advance(to: signIn.isSigningIn ? .firstSignIn : .shown)
    }

    /// The one place the window moves on: entering each phase does what it needs, once.
    func advance(to next: Phase) {
        guard next > phase else { return }
        let previous = phase
        phase = next
        switch next {
        case .starting:
            break
        case .firstSignIn:
            present()
        case .shown:
            buildFirstPage(joiningSignIn: false)
            present()
        case .complete:
            if previous == .starting { present() }
            // Built after the first sign-in page had loaded, the first page joins that sign-in.
            buildFirstPage(joiningSignIn: previous == .firstSignIn)
            for sample in model.samples { buildPage(sample) }
            buildInspector()
            // While sign-in is on screen, the samples' widgets get what showing them needs (their
            // windows): the frame that leaves sign-in then only lays them out and paints.
            samples.realizeAll()
        case .closed:
            stallWatch?.stop()
            appearing?.cancel()
            storeEvents?.cancel()
            signIn.cancel()
            errorBar.answer(retry: false)
            for page in pages.values { page.close() }
            inspector?.close()
        }
    }

    /// Puts the window on screen; it completes once the loop is idle (unless a sign-in page
    /// loads: then once that has loaded), and a second later at the latest.
    private func present() {
        window.show()
        MainLoop.whenIdle { [weak self] in
            guard let self, self.phase < .closed else { return }
            self.model.trace.record("window-shown")
            if !self.signIn.isSigningIn { self.advance(to: .complete) }
        }
        Task { [weak self] in
            try? await Task.sleep(for: .seconds(1))
            self?.advance(to: .complete)
        }
    }

    /// Builds the first sample's page (once) and shows it; when `joiningSignIn`, it joins the
    /// sign-in ``start()`` began.
    private func buildFirstPage(joiningSignIn: Bool) {
        guard let first, pages[first.sample.kind] == nil else { return }
        buildPage(first.sample, session: first.session)
        samples.visibleChildName = first.sample.kind.rawValue
        samples.onVisibleChildChanged { [weak self] in
            self?.showAccount()
            self?.currentPageAppears()
        }
        showAccount()
        if joiningSignIn, let page = pages[first.sample.kind] {
            appearing = Task { await page.appear() }
        }
    }

    /// Back from sign-in to the samples.
    private func leaveSignIn() {
        let held = leaving != nil
        leaving = nil
        mainStack.visibleChildName = "samples"
        advance(to: .complete)
        focusCurrentPageAfterSignIn()
        if held {
            signIn.left()
            showAccount()
            window.resumeFrames()
        }
    }

    /// After the redirect, the user's data is usually a few milliseconds away. The window holds
    /// its frames — the last sign-in page stays on screen — until the page has the data in its
    /// widgets, or for ``dataWait`` at most, so that the frame that leaves sign-in is the one
    /// that shows the data: GTK paints at most one frame per refresh (16.7 ms at 60 Hz), and any
    /// frame painted between (the header's new account, the empty page) would hold the data
    /// back until the next one.
    private func leaveSignInWithTheData() {
        let id = UUID()
        if leaving == nil { window.holdFrames() }
        leaving = id
        for page in pages.values {
            page.onContentShown = { [weak self] in
                if self?.leaving == id { self?.leaveSignIn() }
            }
        }
        Task { [weak self] in
            try? await Task.sleep(for: Self.dataWait)
            if self?.leaving == id { self?.leaveSignIn() }
        }
    }

    /// How long the last sign-in page may stay after the redirect, waiting for the data: past
    /// this, a wait the user feels, the window shows the page (and its progress) without it.
    static let dataWait: Duration = .milliseconds(100)
    /// The sign-in being left for the data, while the window waits for it.
    private var leaving: UUID?

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
            // While the window waits for the data after a redirect, the header waits too: it
            // changes in the frame that leaves sign-in (see leaveSignInWithTheData).
            if self?.currentKind == kind, self?.leaving == nil { self?.showAccount() }
        }
    }

    /// Builds the flow inspector (once): it replays the trace so far.
    @discardableResult
    func buildInspector() -> FlowInspector {
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
        advance(to: .complete)
        samples.visibleChildName = kind.rawValue
    }

    private func currentPageAppears() {
        guard phase < .closed, let kind = currentKind, let page = pages[kind], !signIn.isSigningIn else { return }
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
        guard phase < .closed else { return }
        model.trace.record(online ? "network-online" : "network-offline")
        offlineBar.show(offline: !online)
        guard online else { return }
        signIn.networkReturned()
        if errorBar.waitsForNetwork { errorBar.answer(retry: true) }
        for page in pages.values { page.networkReturned() }
    }

    // MARK: SignInFailurePresenter

    /// Shows a failed sign-in in the error bar and waits for Retry or Cancel — or, when it got no
    /// answer at all, for the network to come back.
    public func retryAfter(_ error: AccountStoreError) async -> Bool {
        guard phase < .closed else { return false }
        showWindow()
        return await errorBar.ask(about: error, offline: !model.network.isOnline)
    }

    /// Acts on the sample showing (the account menu's choices).
    private func onCurrentPage(_ act: @escaping @MainActor (any SamplePage) async -> Void) {
        guard let kind = currentKind, let page = pages[kind] else { return }
        Task { await act(page) }
    }

    /// The header's account menu shows the account of the sample showing.
    func showAccount() {
        guard phase < .closed else { return }
        accountMenu.show(currentKind.flatMap { pages[$0] }?.session.account)
    }
}
