import CGtkWebKit
import Foundation
import IdentityEmulator
import SesameCore
import XCTest

@testable import SesameGtk

/// The whole Directory tutorial through the real window and the real web view, against the
/// identity emulator: megan signs in (username, password, SMS code, stay signed in, consent), the
/// redirect is intercepted, and the directory list fills. Each screen is saved as a PNG in
/// `$SESAME_SCREENSHOTS` (default `.build/screenshots`).
final class SignInFlowTests: XCTestCase {
    final class Codes: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func record(_ line: String) { lock.withLock { lines.append(line) } }
        func code(for user: String) -> String? {
            lock.withLock { lines.last { $0.hasPrefix("mfa-code \(user) ") }.map { String($0.split(separator: " ")[2]) } }
        }
    }

    /// Starts an emulator on a free port and returns its base URL.
    static func startEmulator(codes: Codes) throws -> URL {
        var configuration = EmulatorConfiguration()
        configuration.userCount = 300
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

    func testMeganSignsInThroughTheRealViewWithHerSMSCodeAndTheDirectoryFills() throws {
        let codes = Codes()
        let base = try Self.startEmulator(codes: codes)
        try MainActor.assumeIsolated {
            XCTAssertTrue(SignInPolicyTests.displayReady, "no display: run the GUI tests under xvfb-run (make test does)")
            let resources = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../Resources/settings").standardized
            let settings = try SampleSettings.load(contentsOf: resources.appending(path: "directory.plist")).pointed(at: base)
            let trace = try FlowTrace(file: nil)
            let storage = FileTokenStorage(directory: FileManager.default.temporaryDirectory.appending(path: "sesame-gui-\(UUID().uuidString)"))
            var model: AppModel?
            Task { @MainActor in model = await AppModel(store: AccountStore(storage: storage), settings: [settings], trace: trace, webDataDirectory: nil) }
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { model != nil })
            let window = MainWindow(application: nil, model: try XCTUnwrap(model), initialSample: .directory)
            defer { gtk_widget_destroy(window.window) }

            var shot = 0
            @MainActor func screenshot(_ name: String) {
                shot += 1
                let file = Self.screenshots.appending(path: String(format: "%02d-%@.png", shot, name))
                do { try Screenshot.save(window.window, to: file) } catch { XCTFail("screenshot \(name): \(error)") }
            }
            @MainActor func pagesLoaded() -> Int { trace.events.filter { $0.name == "page-loaded" }.count }
            /// Waits for the next page the identity service sends, and lets it paint.
            @MainActor func waitForPage(after count: Int, _ step: String) {
                XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { pagesLoaded() > count }, "\(step): no page loaded")
                MainLoopBridge.spin(timeout: 0.4) { false }
            }
            @MainActor func run(_ script: String) -> Int {
                let before = pagesLoaded()
                window.signIn.view.runJavaScript(script)
                return before
            }

            // The sample has no account: sign-in opens by itself, on the emulator's username page.
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { pagesLoaded() >= 1 }, "the sign-in page never loaded")
            MainLoopBridge.spin(timeout: 0.5) { false }
            XCTAssertTrue(window.signIn.view.isShown)
            XCTAssertTrue(window.signIn.view.hostBarText.contains("127.0.0.1"))
            screenshot("username")

            var before = run("document.getElementById('i0116').value='megan@contoso.onmicrosoft.com'; document.getElementById('idSIButton9').click();")
            waitForPage(after: before, "password page")
            screenshot("password")

            before = run("document.getElementById('i0118').value='Passw0rd!'; document.getElementById('idSIButton9').click();")
            waitForPage(after: before, "SMS page")
            let code = try XCTUnwrap(codes.code(for: "megan@contoso.onmicrosoft.com"), "the emulator sent no SMS code")
            screenshot("sms-code")

            before = run("document.getElementById('idTxtBx_SAOTCC_OTC').value='\(code)'; document.getElementById('idSubmit_SAOTCC_Continue').click();")
            waitForPage(after: before, "stay signed in")
            screenshot("stay-signed-in")

            before = run("document.getElementById('idSIButton9').click();")
            waitForPage(after: before, "consent")
            screenshot("consent")

            _ = run("document.getElementById('idSIButton9').click();")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { trace.events.contains { $0.name == "redirect-intercepted" } }, "the redirect was not intercepted")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { trace.events.contains { $0.name == "token-acquired" } }, "no token")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { (window.directoryPage?.rowCount ?? 0) > 0 && trace.events.contains { $0.name == "list-rendered" } },
                          "the directory list stayed empty")
            XCTAssertFalse(window.signIn.view.isShown)
            MainLoopBridge.spin(timeout: 0.5) { false }
            screenshot("directory")

            let rendered = try XCTUnwrap(trace.events.last { $0.name == "list-rendered" })
            XCTAssertTrue(rendered.fields.contains { $0.0 == "rows" && (Int($0.1) ?? 0) > 0 })
            for event in trace.events { XCTAssertFalse(event.jsonLine.contains(code), "the SMS code reached the trace") }
        }
    }
}
