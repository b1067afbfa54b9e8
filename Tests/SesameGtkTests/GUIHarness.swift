import Foundation
import IdentityEmulator
import SesameCore
import SesameGIO
import SesameSamples
import SesameService
import SesameTestSupport
import SesameWindowModel
import XCTest

@testable import SesameGtk

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// GUI tests: synchronous XCTest on the main thread (XCTest on Linux calls test methods as
/// nonisolated functions there; each body enters the main actor with `MainActor.assumeIsolated`).
/// Every test fails if GTK or GLib printed a critical warning while it ran.
class GUITestCase: XCTestCase {
    /// Whether a display is open (GTK initialised, the main-loop bridge installed, critical
    /// warnings recorded).
    static let displayReady: Bool = MainActor.assumeIsolated {
        GLibWarnings.startRecording()
        let ready = SesameApplication.initializeDisplay()
        if ready { MainLoopBridge.install() }
        return ready
    }

    override func setUp() {
        super.setUp()
        XCTAssertTrue(Self.displayReady, "no display: run the GUI tests under xvfb-run (make test does)")
        _ = GLibWarnings.take()
    }

    override func tearDown() {
        // Let what the test left behind (closed windows, cancelled requests) run its course.
        MainActor.assumeIsolated { _ = MainLoopBridge.spin(timeout: 0.3) { false } }
        let criticals = GLibWarnings.take()
        XCTAssertEqual(criticals, [], "GTK or GLib printed critical warnings")
        super.tearDown()
    }
}

/// The real window against an in-process identity emulator, and the moves a user makes in it,
/// by the widgets' accessible names (as a screen reader finds them).
@MainActor
final class GUIHarness {
    /// The in-process emulator, unless the test brought its own service.
    let emulator: RunningEmulator?
    let trace: FlowTrace
    let window: MainWindow
    /// Where the identity service is.
    let base: URL
    var codes: OneTimeCodes { emulator?.codes ?? OneTimeCodes() }
    private var shot = 0
    private let screenshotPrefix: String?
    /// The page loads the test has already waited for: a step waits for a load after these, so
    /// that a page still showing from before never passes for the one the step expects.
    private var pagesSeen = 0
    /// Where the window's store keeps its sign-ins (files).
    let storageDirectory: URL

    /// Starts an emulator (`configure` changes its configuration) — or takes the test's own
    /// `service` — and opens the window on `sample` with the bundled `settingsFile` (`adjust`
    /// changes the settings). With `network`, the test says when the network comes and goes (the
    /// window does not follow the desktop's monitor). `startedForAProgram`: opened as the account
    /// service opens it for a program's call.
    init(
        settingsFile: String, sample: Sample.Kind, screenshotPrefix: String? = nil,
        configure: @escaping @Sendable (inout EmulatorConfiguration) -> Void = { _ in },
        adjust: (SampleSettings) -> SampleSettings = { $0 }, transportTimeout: Duration = .seconds(60),
        service: URL? = nil, network: NetworkStatus? = nil, settingsWarnings: [SettingsWarning] = [], stateFile: URL? = nil,
        moreSettingsFiles: [String] = [], storageDirectory: URL? = nil, tryDemo: (@MainActor () -> Void)? = nil,
        longestWaitBeforeShowing: Duration? = nil, startedForAProgram: Bool = false
    ) throws {
        self.screenshotPrefix = screenshotPrefix
        emulator = try service == nil ? RunningEmulator.startBlocking(configure: configure) : nil
        base = try service ?? XCTUnwrap(emulator).base
        let settings = adjust(try SampleSettings.load(contentsOf: Repository.settings(settingsFile)).pointed(at: base))
        let emulatorBase = base
        let more = try moreSettingsFiles.map { try SampleSettings.load(contentsOf: Repository.settings($0)).pointed(at: emulatorBase) }
        trace = try FlowTrace(file: nil)
        let transport = TracingTransport(base: AsyncHTTPClientTransport(timeout: transportTimeout), trace: trace)
        self.storageDirectory = storageDirectory ?? Repository.temporaryDirectory("sesame-gui")
        let storage = FileTokenStorage(directory: self.storageDirectory)
        var model: AppModel?
        let trace = trace
        Task { @MainActor in
            model = await AppModel(
                store: AccountStore(storage: storage, transport: transport), settings: [settings] + more, trace: trace,
                transport: transport,
                network: network ?? NetworkStatus())
        }
        XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { model != nil })
        var options = MainWindow.Options(
            webDataDirectory: nil, initialSample: sample, followsDesktopNetwork: network == nil, settingsWarnings: settingsWarnings,
            stateFile: stateFile, tryDemo: tryDemo)
        if let longestWaitBeforeShowing { options.longestWaitBeforeShowing = longestWaitBeforeShowing }
        options.startedForAProgram = startedForAProgram
        window = MainWindow(application: nil, model: try XCTUnwrap(model), options: options)
    }

    /// Closes the window, as the user does.
    func close() {
        window.window.destroy()
        emulator?.stop()
    }

    // MARK: What the user sees

    /// The sign-in view on screen, if one is.
    var signInPage: WebView? {
        window.window.descendants.lazy.compactMap { $0 as? WebView }.first { $0.isMapped }
    }

    var signInShown: Bool { signInPage != nil }

    /// The host bar's text.
    var hostBar: String { window.window.find(Label.self, named: L("Sign-in host"))?.text ?? "" }

    /// The error bar's text while a sign-in error shows.
    var signInError: String? {
        window.window.find(Label.self, named: L("Sign-in error")).flatMap { $0.isMapped ? $0.text : nil }
    }

    /// The people table.
    var people: TextTable? { window.window.find(TextTable.self, named: L("People")) }

    var peopleRows: Int { people?.rowCount ?? 0 }

    /// The pages, once built.
    var directoryPage: DirectoryPage? { window.samples[.directory] as? DirectoryPage }
    var tasksPage: TasksPage? { window.samples[.tasks] as? TasksPage }
    var mePage: MePage? { window.samples[.me] as? MePage }

    /// What the directory says in its list's place (its status page's sentence), if it shows one.
    var directorySays: String {
        guard let page = directoryPage, page.listStatus.root.isMapped else { return "" }
        return page.listStatus.status?.description ?? ""
    }

    /// Presses a button by its accessible name, once it is on screen and sensitive (as a user
    /// can only press what they see).
    func click(button name: String) {
        var found: Widget?
        let shown = MainLoopBridge.spin(timeout: 15) {
            found =
                self.window.window.descendants.first { ($0 is Button || $0 is MenuItem) && $0.accessibleName == L(name) && $0.isMapped }
                ?? self.window.window.find(Button.self, named: L(name))
            return found.map { $0.isMapped && $0.isSensitive } ?? false
        }
        guard let widget = found, shown else {
            XCTFail("no button named '\(name)' showed")
            return
        }
        if let item = widget as? MenuItem { item.click() } else { (widget as? Button)?.click() }
    }

    /// Types into the directory's search field.
    func search(_ text: String) {
        window.window.find(SearchEntry.self, named: L("Search the directory"))?.text = text
    }

    var pagesLoaded: Int { trace.events.filter { $0.name == "page-loaded" }.count }

    /// Posts to the emulator's control endpoint `/.emulator/PATH` (what an administrator does in
    /// the Entra admin center) and waits for the answer.
    func emulatorControl(_ path: String, body: String? = nil) throws {
        final class Outcome: @unchecked Sendable { var status = 0 }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        var request = URLRequest(url: base.appending(path: ".emulator/\(path)"))
        request.httpMethod = "POST"
        request.httpBody = body.map { Data($0.utf8) }
        URLSession.shared.dataTask(with: request) { _, response, _ in
            outcome.status = (response as? HTTPURLResponse)?.statusCode ?? 0
            done.signal()
        }.resume()
        XCTAssertEqual(done.wait(timeout: .now() + 15), .success)
        XCTAssertEqual(outcome.status, 200, "POST /.emulator/\(path)")
    }

    func has(_ event: String) -> Bool { trace.events.contains { $0.name == event } }

    // MARK: The identity service's pages

    /// Runs JavaScript in the sign-in page and waits for the page the service answers with.
    func act(_ script: String, _ step: String) {
        let before = pagesLoaded
        signInPage?.evaluateJavaScript(script)
        XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { self.pagesLoaded > before }, "\(step): no page loaded")
        pagesSeen = pagesLoaded
    }

    /// Clicks a button in the page without waiting for a page (the last click redirects to the app).
    func clickInPage(_ id: String) { signInPage?.evaluateJavaScript("document.getElementById('\(id)').click();") }

    /// Waits for sign-in to show a page it loaded after every page the test has seen so far.
    func waitForSignInPage(_ step: String) {
        XCTAssertTrue(
            MainLoopBridge.spin(timeout: 15) { self.signInShown && self.pagesLoaded > self.pagesSeen }, "\(step): sign-in did not open")
        pagesSeen = pagesLoaded
    }

    /// Waits until the sign-in view shows the page titled `title` and has recorded its load (a
    /// page that posts itself on — AD FS's answer — loads more than one page per step).
    func waitForSignInPage(titled title: String, _ step: String) {
        XCTAssertTrue(
            MainLoopBridge.spin(timeout: 15) {
                guard let page = self.signInPage, page.title == title, let shown = page.uri.flatMap(URL.init(string:)) else { return false }
                let loaded = self.trace.events.last { $0.name == "page-loaded" }
                return loaded?.fields.contains { $0 == ("url", FlowTrace.redacted(shown)) } == true
            }, "\(step): the view shows '\(signInPage?.title ?? "nothing")'")
        pagesSeen = pagesLoaded
    }

    /// alex's user name, password and "stay signed in", up to the consent page (the test answers it).
    func signInAsAlexUpToConsent() {
        act(Self.fill(SignInPageIDs.userName, "alex@contoso.onmicrosoft.com"), "password page")
        act(Self.fill(SignInPageIDs.password, SignInPageIDs.demoPassword), "stay signed in")
        act("document.getElementById('\(SignInPageIDs.primaryButton)').click();", "consent")
    }

    static func fill(_ id: String, _ value: String, click button: String = SignInPageIDs.primaryButton) -> String {
        "document.getElementById('\(id)').value=\(jsString(value)); document.getElementById('\(button)').click();"
    }

    static func jsString(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    /// Runs the loop until it is idle: everything already queued (redraws, main-actor work) ran.
    func drainIdle() {
        var idle = false
        MainLoop.whenIdle { idle = true }
        XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { idle })
    }

    // MARK: Screenshots

    static var screenshots: URL {
        ProcessInfo.processInfo.environment["SESAME_SCREENSHOTS"].map { URL(filePath: $0) }
            ?? Repository.root.appending(path: ".build/screenshots")
    }

    func screenshot(_ name: String) {
        guard let screenshotPrefix else { return }
        shot += 1
        let file = Self.screenshots.appending(path: String(format: "%@%02d-%@.png", screenshotPrefix, shot, name))
        // Nothing announces that WebKit has painted a page it loaded: give it a moment, for the
        // picture only (no test step waits on this). GTK's own widgets are painted on the frame
        // clock's next ticks: a few frames are enough.
        MainLoopBridge.spin(timeout: signInShown ? 0.4 : 0.1) { false }
        do { try Screenshot.save(window.window, to: file) } catch { XCTFail("screenshot \(name): \(error)") }
    }
}
