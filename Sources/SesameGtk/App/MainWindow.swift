import FoundationEssentials
import SesameCore
import SesameGIO
import SesameSamples
import SesameSystem
import SesameWindowModel

/// The window: a header bar switching between the samples, the sign-in page that takes the
/// window while the identity service's pages are up, the offline and error bars (the seeds'
/// alert with Retry and Cancel), and the flow inspector.
///
/// Its life is ``WindowPhases``, a value tested without GTK: each moment (shown, a sign-in page
/// up or gone, the data in after a redirect, closed) yields effects, which ``apply(_:)`` carries
/// out here. The pages are ``SamplePages``'.
@MainActor
public final class MainWindow: SignInFailurePresenter {
    /// Options of the window that are not the samples'.
    public typealias Options = WindowOptions
    /// The window.
    public let window: Window
    let model: AppModel
    /// The sign-in page: the Core's user agent for every sample.
    let signIn: SignInPane
    /// The system browser as the sign-in's user agent (a sample's `signInWith`, or "Continue in your browser").
    let browserAgent: BrowserSignInAgent
    let mainStack = Stack(sizedByVisibleChild: true)
    /// The samples' pages.
    let samples: SamplePages
    /// The flow inspector's pane, built once the window is on screen.
    private(set) lazy var inspectorPane = InspectorPane(trace: model.trace, window: window, menu: primaryMenu)
    /// The flow inspector, once built.
    var inspector: FlowInspector? { inspectorPane.inspector }
    /// Where the inspector shows (F9 hides it).
    var inspectorSlot: Box { inspectorPane.slot }
    let errorBar = ErrorBar()
    /// Listens to the store: an account signed out elsewhere (the bus, another page) leaves the window.
    var storeEvents: Task<Void, Never>?
    let offlineBar = OfflineBar()
    let settingsNotice: SettingsNotice?
    /// The title bar: the tabs, the account menu, the primary menu.
    let header: WindowHeader
    var accountMenu: AccountMenu { header.accountMenu }
    var primaryMenu: PrimaryMenu { header.primaryMenu }
    /// The desktop's network monitor, feeding the model's ``NetworkStatus``.
    private var networkMonitor: NetworkMonitor?
    private var appearing: Task<Void, Never>?
    /// Watches the main loop for stalls (`Options.reportStalls`).
    private var stallWatch: MainLoopWatch?
    /// The samples (or sign-in) beside the flow inspector.
    var panes: Paned?
    /// The window's size and inspector, kept across restarts.
    private(set) lazy var keptState = KeptWindowState(
        file: stateFile, window: window, panes: { [weak self] in self?.panes }, inspector: inspectorSlot, trace: model.trace)
    private let stateFile: URL?
    /// The app, which Ctrl+Q ends (without one, Ctrl+Q closes the window).
    weak var application: Application?
    /// This computer's registration, asked for in the account menu (nil: the window cannot register).
    private(set) var computer: ComputerRegistration?
    /// What signs in for the account service's programs.
    private(set) lazy var serviceSignIns = ServiceSignIns(model: model, window: window, signIn: signIn, browserAgent: browserAgent) {
        [unowned self] kind in
        show(kind)
        return samples[kind]
    }
    /// How far the window has come, and the hold after a redirect (``WindowPhases``).
    private(set) var phases = WindowPhases()
    var phase: WindowPhases.Phase { phases.phase }

    public init(application: Application?, model: AppModel, options: Options) {
        self.model = model
        if options.reportStalls {
            stallWatch = MainLoopWatch(reportingStallsOver: .milliseconds(16)) { [trace = model.trace] stall in
                trace.record("main-loop-stall", [("ms", String(formatting: "%.1f", stall / .milliseconds(1)))])
            }
        }
        window = Window(application: application, title: "Sesame", width: 1240, height: 720)
        let signIn = SignInPane(trace: model.trace, webDataDirectory: options.webDataDirectory, automation: options.automation)
        self.signIn = signIn
        signIn.onTryDemo = options.tryDemo
        let browserAgent = BrowserSignInAgent(pane: signIn, window: window, trace: model.trace)
        self.browserAgent = browserAgent
        stateFile = options.stateFile
        self.application = application
        settingsNotice = options.settingsWarnings.isEmpty ? nil : SettingsNotice(options.settingsWarnings)
        // The sample shown first: its session now, its page when the window shows; the others' later.
        weak var presenter: MainWindow?
        samples = SamplePages(model: model, initial: options.initialSample) { sample in
            SampleSession(sample: sample, model: model, userAgent: signIn, browser: browserAgent, failures: presenter)
        }
        header = WindowHeader(
            window: window, samples: samples.stack, filesStorage: options.filesStorage, documentation: options.documentation)
        presenter = self
        layOut()
        inspectorSlot.isVisible = WindowState.initial.inspectorShown
        keptState.restore()
        inspectorPane.isShown = inspectorSlot.isVisible  // the menu's check mark as kept
        connect()
        offlineBar.show(offline: !model.network.isOnline)
        model.network.observe { [weak self] online in self?.networkChanged(online: online) }
        if options.followsDesktopNetwork {
            networkMonitor = NetworkMonitor { [weak network = model.network] online in network?.update(isOnline: online) }
        }
        showAccount()
        followStore()
        computer = ComputerRegistration(model: model, signIn: signIn, window: window)
        computer?.connect(menu: accountMenu, errorBar: errorBar)
        start(loadingFirst: !options.startedForAProgram)
        Task { [weak self] in
            try? await Task.sleep(for: options.longestWaitBeforeShowing)
            self?.showWindow()
        }
    }

    /// What the account menu, the sign-in page, the pages and the window itself do to the window.
    private func connect() {
        accountMenu.onSignIn = { [weak self] in
            self?.onCurrentPage { page in
                _ = await page.session.signInOnRequest()
                await page.appear()
            }
        }
        accountMenu.onSwitchAccount = { [weak self] in self?.onCurrentPage { page in await page.switchAccount() } }
        accountMenu.onSignOut = { [weak self] in self?.onCurrentPage { page in await page.signOut() } }
        primaryMenu.onForget = { [weak self] in self?.signIn.forgetSignInData() }
        samples.holdsHeader = { [weak self] in self?.phases.holdsHeader ?? false }
        samples.onAccountShown = { [weak self] in self?.showAccount() }
        samples.onPageShown = { [weak self] in self?.currentPageAppears() }
        signIn.onShow = { [weak self] in
            // A sign-in belongs to the page it began on: the tabs wait until it ends (Cancel).
            self?.header.isLocked = true
            self?.apply { $0.signInShown() }
        }
        signIn.onHide = { [weak self] afterRedirect in
            self?.header.isLocked = false
            self?.apply { $0.signInHidden(afterRedirect: afterRedirect) }
        }
        signIn.sampleTitle = { [weak self] accountType in
            self?.model.samples.first { $0.accountType == accountType }?.title
        }
        // While the first sign-in page loads, the main thread is WebKit's: the rest of the
        // window is built once it has loaded (or failed), at the latest a second after showing.
        signIn.onPageFinished = { [weak self] in self?.advance(to: .complete) }
        window.onCloseRequest { [weak self] in
            if let self, self.phase < .closed { self.keptState.save() }
            self?.signIn.cancel()
            return false
        }
        window.onKeyPress { [weak self] press in WindowShortcut(press).map { self?.shortcuts.perform($0) ?? false } ?? false }
        window.onDestroy { [weak self] in self?.advance(to: .closed) }
    }

    /// The window shows once its first sample knows whether someone must sign in — and if
    /// someone must (and the sample signs in when shown), with the sign-in page already asked
    /// for, before the sample's page is even built: WebKit starts its processes while the window
    /// is laid out and painted, as they do for a bare window with a web view — and at the
    /// latest after `Options.longestWaitBeforeShowing` (a slow keyring: the sign-in starts all the same,
    /// and the page, already shown, joins it). Started for a program, it reads, loads and signs in nothing.
    private func start(loadingFirst: Bool) {
        guard loadingFirst, let first = samples.first else {
            advance(to: .complete)
            return
        }
        appearing = Task { [weak self] in
            let restored = await first.session.restore()
            guard let self, self.phase == .starting || self.phase == .shown else { return }
            // Behind a locked keyring there may well be an account: the page says so, and offers to unlock it.
            if restored == nil, first.session.storageProblem == nil, first.sample.kind.signsInWhenShown {
                first.session.beginSignIn()
                // The sign-in page shows the window; the page, built once it has loaded, joins this sign-in.
                if self.phase == .starting { return }
            }
            self.showWindow()
            await self.samples[first.sample.kind]?.appear()
        }
    }

    /// Shows the window (once): the sign-in page alone while one is up, else the first sample's
    /// (a sign-in it began counts before its page is up: its page must join it).
    private func showWindow() {
        apply { $0.show(signingIn: signIn.isSigningIn || samples.first?.session.isSigningIn == true) }
    }

    /// Moves the window on (``WindowPhases/advance(to:)``).
    func advance(to next: WindowPhases.Phase) {
        apply { $0.advance(to: next) }
    }

    /// Carries out what a moment of the window's life does (the one place the window changes).
    private func apply(_ moment: (inout WindowPhases) -> [WindowPhases.Effect]) {
        for effect in moment(&phases) { perform(effect) }
    }

    private func perform(_ effect: WindowPhases.Effect) {
        switch effect {
        case .present: present()
        case .buildFirstPage(let joiningSignIn):
            let page = samples.buildFirstPage()
            if joiningSignIn, let page { appearing = Task { await page.appear() } }
        case .buildTheRest:
            samples.buildTheRest()
            inspectorPane.build()
            // While sign-in is on screen, the samples' widgets get what showing them needs (their
            // windows): the frame that leaves sign-in then only lays them out and paints.
            samples.stack.realizeAll()
        case .tearDown:
            stallWatch?.stop()
            appearing?.cancel()
            storeEvents?.cancel()
            signIn.cancel()
            errorBar.answer(retry: false)
            samples.closeAll()
            inspectorPane.close()
        case .showSignIn:
            mainStack.visibleChildName = "sign-in"
        case .showSamples:
            mainStack.visibleChildName = "samples"
        case .holdFrames:
            window.holdFrames()
        case .resumeFrames:
            window.resumeFrames()
        case .waitForData(let id):
            // After the redirect the user's data is usually a few milliseconds away: the frame
            // that leaves sign-in is the one that shows it (GTK paints at most one frame per refresh).
            samples.onContentShown { [weak self] in self?.apply { $0.dataShown(for: id) } }
            Task { [weak self] in
                try? await Task.sleep(for: WindowPhases.dataWait)
                self?.apply { $0.dataWaitEnded(for: id) }
            }
        case .showAccount: showAccount()
        case .signInLeft: signIn.left()
        case .focusCurrentPage: samples.current?.focusFirstControlWhenReady()
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

    /// Shows a sample, as clicking its tab does (nothing while a sign-in is up: it belongs to its page).
    public func show(_ kind: Sample.Kind) {
        guard !signIn.isSigningIn else { return }
        advance(to: .complete)
        samples.show(kind)
    }

    private func currentPageAppears() {
        guard phase < .closed, let page = samples.current, !signIn.isSigningIn else { return }
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
        samples.networkReturned()
    }

    /// SignInFailurePresenter: shows a failed sign-in in the error bar (a tenant's refusal with its
    /// action) and waits for Retry or Cancel — or, with no answer at all, for the network to return.
    public func retryAfter(_ error: AccountStoreError) async -> Bool {
        guard phase < .closed else { return false }
        showWindow()
        let notice = RefusalNotice(error, configuration: await model.store.configuration(forAccountType: error.accountType ?? ""))
        return await errorBar.ask(about: error, offline: !model.network.isOnline, notice: notice)
    }

    /// Acts on the sample showing (the account menu's choices).
    private func onCurrentPage(_ act: @escaping @MainActor (any SamplePage) async -> Void) {
        guard let page = samples.current else { return }
        Task { await act(page) }
    }

    /// The header's account menu shows the account of the sample showing.
    func showAccount() {
        guard phase < .closed else { return }
        accountMenu.show(samples.current?.session.account, nobody: samples.current?.session.waitText.header ?? L("Not signed in"))
    }
}
