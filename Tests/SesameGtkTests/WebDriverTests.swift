import Foundation
import XCTest

@testable import SesameGtk

/// `sesame --automation-mode` as a WebDriver browser: WebKitWebDriver (Debian's
/// webkit2gtk-driver) starts it, Selenium fills the identity pages in its sign-in view, and the
/// app intercepts the redirect and shows the directory — checked in `--trace-events`.
final class WebDriverTests: XCTestCase {
    func testSeleniumSignsInThroughSesamesSignInView() throws {
        let (seen, events, base) = try drive("alex")
        XCTAssertEqual(seen["first_page"] as? String, base.appending(path: "common/oauth2/v2.0/authorize").absoluteString)
        XCTAssertEqual(seen["title"] as? String, "Sign in to your account")
        XCTAssertEqual(seen["kmsi_page"] as? String, base.appending(path: "common/login").absoluteString)
        XCTAssertTrue((seen["consent"] as? [String])?.contains("Read all users’ basic profiles") == true)
        XCTAssertTrue(events.contains { $0.contains(#""event":"automation-session""#) }, "WebDriver did not drive the sign-in view")
        XCTAssertTrue(events.contains { $0.contains(#""event":"redirect-intercepted""#) })
        XCTAssertTrue(events.contains { $0.contains(#""event":"token-acquired""#) && $0.contains("myGraphService") })
        XCTAssertTrue(events.contains { $0.contains(#""event":"list-rendered""#) && $0.contains(#""view":"directory""#) })
        XCTAssertFalse(events.contains { $0.contains("Passw0rd") }, "the password reached the trace")
    }

    func testAWrongPasswordShowsTheInlineErrorThenTheRightOneSignsIn() throws {
        let (seen, events, base) = try drive("wrong-password")
        XCTAssertEqual(seen["inline_error"] as? String, "Your account or password is incorrect. If you don't remember your password, reset it now.")
        XCTAssertEqual(seen["still_on"] as? String, base.appending(path: "common/login").absoluteString, "a wrong password must not redirect")
        XCTAssertEqual(events.filter { $0.contains(#""event":"redirect-intercepted""#) }.count, 1)
        XCTAssertFalse(events.contains { $0.contains(#""event":"sign-in-failed""#) }, "a wrong password is not a failed sign-in")
        XCTAssertTrue(events.contains { $0.contains(#""event":"list-rendered""#) })
        XCTAssertFalse(events.contains { $0.contains("not-the-password") })
    }

    func testMeganSignsInWithTheSMSCodeThroughWebDriver() throws {
        let (seen, events, _) = try drive("megan")
        XCTAssertTrue((seen["sms_page"] as? String)?.contains("+X XXXXXXX99") == true)
        XCTAssertTrue(events.contains { $0.contains(#""event":"token-acquired""#) })
        XCTAssertTrue(events.contains { $0.contains(#""event":"list-rendered""#) && $0.contains(#""view":"directory""#) })
    }

    /// Runs the WebDriver script for `flow` against a fresh demo-mode emulator; returns what the
    /// script saw and the app's trace events.
    func drive(_ flow: String) throws -> (seen: [String: Any], events: [String], base: URL) {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: "/usr/bin/WebKitWebDriver"),
                      "WebKitWebDriver is missing: install webkit2gtk-driver (make test does)")
        let python = try WireTestsPython.interpreter()
        let base = try MainActor.assumeIsolated { try GUIHarness.startEmulator(codes: GUIHarness.Codes(), demo: true) }
        let scratch = FileManager.default.temporaryDirectory.appending(path: "sesame-webdriver-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let trace = scratch.appending(path: "trace.jsonl")

        let script = Process()
        script.executableURL = python
        script.arguments = [
            URL(filePath: #filePath).deletingLastPathComponent().appending(path: "WebDriver/sign_in_with_webdriver.py").path,
            try CommandLineTests.sesame.path, base.absoluteString, trace.path, flow,
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = scratch.appending(path: "data").path
        // Each run starts signed out: tokens go to files in this run's XDG_DATA_HOME, not to the
        // session's keyring (which every run would share).
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
        environment["SESAME_REQUIRE_SECRET_SERVICE"] = nil
        environment["WEBKIT_DISABLE_COMPOSITING_MODE"] = "1"
        script.environment = environment
        let output = Pipe()
        let errors = Pipe()
        script.standardOutput = output
        script.standardError = errors
        try script.run()
        let stdout = output.fileHandleForReading.readDataToEndOfFile()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        script.waitUntilExit()
        XCTAssertEqual(script.terminationStatus, 0, "WebDriver: \(stderr.suffix(2000))")

        let seen = try XCTUnwrap(try JSONSerialization.jsonObject(with: stdout) as? [String: Any], stderr)
        let events = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n").map(String.init)
        return (seen, events, base)
    }
}

/// The Python `make test` prepares (MSAL and Selenium from PyPI).
enum WireTestsPython {
    static func interpreter() throws -> URL {
        let configured = ProcessInfo.processInfo.environment["SESAME_TEST_PYTHON"].map { URL(filePath: $0) }
        let venv = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../.build/test-venv/bin/python").standardized
        return try XCTUnwrap([configured, venv].compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0.path) },
                            "No test Python: run `make test` (it creates .build/test-venv with msal and selenium) or set SESAME_TEST_PYTHON.")
    }
}
