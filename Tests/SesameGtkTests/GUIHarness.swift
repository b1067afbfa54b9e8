import CGtkWebKit
import Foundation
import IdentityEmulator
import SesameCore
import XCTest

@testable import SesameGtk

/// The real window against an in-process identity emulator, and the moves a user makes in it.
@MainActor
final class GUIHarness {
    final class Codes: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func record(_ line: String) { lock.withLock { lines.append(line) } }
        func code(for user: String) -> String? {
            lock.withLock { lines.last { $0.hasPrefix("mfa-code \(user) ") }.map { String($0.split(separator: " ")[2]) } }
        }
    }

    let codes = Codes()
    let trace: FlowTrace
    let window: MainWindow
    let base: URL
    private var shot = 0
    private let screenshotPrefix: String?

    /// Starts an emulator and opens the window on `sample` with the bundled `settingsFile`.
    init(settingsFile: String, sample: AppModel.Sample.Kind, screenshotPrefix: String? = nil) throws {
        XCTAssertTrue(SignInPolicyTests.displayReady, "no display: run the GUI tests under xvfb-run (make test does)")
        self.screenshotPrefix = screenshotPrefix
        base = try Self.startEmulator(codes: codes)
        let resources = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../Resources/settings").standardized
        let settings = try SampleSettings.load(contentsOf: resources.appending(path: settingsFile)).pointed(at: base)
        trace = try FlowTrace(file: nil)
        let transport = TracingTransport(trace: trace)
        let storage = FileTokenStorage(directory: FileManager.default.temporaryDirectory.appending(path: "sesame-gui-\(UUID().uuidString)"))
        var model: AppModel?
        let trace = trace
        Task { @MainActor in
            model = await AppModel(store: AccountStore(storage: storage, transport: transport), settings: [settings], trace: trace,
                                   webDataDirectory: nil, transport: transport)
        }
        XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { model != nil })
        window = MainWindow(application: nil, model: try XCTUnwrap(model), initialSample: sample)
    }

    func close() { gtk_widget_destroy(window.window) }

    static func startEmulator(codes: Codes, demo: Bool = false, users: Int = 300, accessTokenLifetime: Int? = nil) throws -> URL {
        var configuration = EmulatorConfiguration()
        configuration.userCount = users
        configuration.demoMode = demo
        configuration.accessTokenLifetime = accessTokenLifetime
        configuration.announce = { codes.record($0) }
        let started = DispatchSemaphore(value: 0)
        final class Box: @unchecked Sendable { var url: URL?; var error: (any Error)? }
        let box = Box()
        Task.detached {
            do {
                let emulator = try await IdentityEmulator(configuration: configuration)
                try await emulator.run { url, _ in box.url = url; started.signal() }
            } catch {
                box.error = error
                started.signal()
            }
        }
        started.wait()
        if let error = box.error { throw error }
        return try XCTUnwrap(box.url)
    }

    static var screenshots: URL {
        ProcessInfo.processInfo.environment["SESAME_SCREENSHOTS"].map { URL(filePath: $0) }
            ?? URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../.build/screenshots").standardized
    }

    func screenshot(_ name: String) {
        guard let screenshotPrefix else { return }
        shot += 1
        let file = Self.screenshots.appending(path: String(format: "%@%02d-%@.png", screenshotPrefix, shot, name))
        // Nothing announces that WebKit has painted a page it loaded: give it a moment, for the
        // picture only (no test step waits on this).
        MainLoopBridge.spin(timeout: 0.4) { false }
        do { try Screenshot.save(window.window, to: file) } catch { XCTFail("screenshot \(name): \(error)") }
    }

    var pagesLoaded: Int { trace.events.filter { $0.name == "page-loaded" }.count }

    func has(_ event: String) -> Bool { trace.events.contains { $0.name == event } }

    /// The page loads the test has already waited for: a step waits for a load after these, so
    /// that a page still showing from before never passes for the one the step expects.
    private var pagesSeen = 0

    /// Runs JavaScript in the sign-in page and waits for the page the service answers with.
    func act(_ script: String, _ step: String) {
        let before = pagesLoaded
        window.signIn.view.runJavaScript(script)
        XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { self.pagesLoaded > before }, "\(step): no page loaded")
        pagesSeen = pagesLoaded
    }

    /// Clicks the primary button without waiting for a page (the last click redirects to the app).
    func click(_ id: String) { window.signIn.view.runJavaScript("document.getElementById('\(id)').click();") }

    /// Waits for sign-in to show a page it loaded after every page the test has seen so far.
    func waitForSignInPage(_ step: String) {
        XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { self.window.signIn.view.isShown && self.pagesLoaded > self.pagesSeen },
                      "\(step): sign-in did not open")
        pagesSeen = pagesLoaded
    }

    static func fill(_ id: String, _ value: String, click button: String = "idSIButton9") -> String {
        "document.getElementById('\(id)').value=\(SignInPolicyTests.TestSite.jsString(value)); document.getElementById('\(button)').click();"
    }
}
