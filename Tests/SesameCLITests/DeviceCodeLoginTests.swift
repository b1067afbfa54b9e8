import Foundation
import SesameTestSupport
import Synchronization
import XCTest

/// `sesame login --device-code` against the real emulator, as someone on a machine without a
/// browser does it: Sesame prints where to go and a code; a person at another computer (a second
/// process: the test's browser) opens the page, types the code and signs in; Sesame stores the
/// account and `sesame token` works after.
final class DeviceCodeLoginTests: XCTestCase {
    /// A program still running, whose stderr is read line by line as it comes.
    final class RunningProgram: @unchecked Sendable {
        let process = Process()
        private let out = Pipe()
        private let err = Pipe()
        private let printed = Mutex<(stdout: Data, stderr: String)>((Data(), ""))
        private let stdoutDone = DispatchSemaphore(value: 0)
        private let stderrDone = DispatchSemaphore(value: 0)

        init(_ executable: URL, _ arguments: [String], environment: [String: String]) throws {
            process.executableURL = executable
            process.arguments = arguments
            process.environment = environment
            process.standardOutput = out
            process.standardError = err
            try process.start()
            Thread.detachNewThread { [self] in
                while case let chunk = err.fileHandleForReading.availableData, !chunk.isEmpty {
                    printed.withLock { $0.stderr += String(decoding: chunk, as: UTF8.self) }
                }
                stderrDone.signal()
            }
            Thread.detachNewThread { [self] in
                let data = out.fileHandleForReading.readDataToEndOfFile()
                printed.withLock { $0.stdout = data }
                stdoutDone.signal()
            }
        }

        var stderr: String { printed.withLock { $0.stderr } }

        /// Waits until stderr matches `pattern` and returns its first capture group.
        func waitForStderr(_ pattern: String, timeout: TimeInterval = 30) throws -> String {
            let regex = try NSRegularExpression(pattern: pattern)
            var found: String?
            // Until it is printed, or the program has ended without printing it.
            _ = Eventually.holdsBlocking(within: .seconds(timeout), every: .milliseconds(50)) {
                let text = stderr
                if let match = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
                    let range = Range(match.range(at: 1), in: text)
                {
                    found = String(text[range])
                }
                return found != nil || !process.isRunning
            }
            guard let found else { throw TestSupportError("no /\(pattern)/ on stderr: \(stderr)") }
            return found
        }

        /// Waits for the end (at most `timeout`) and returns the status as a shell shows it (128 +
        /// the signal, for one a signal ended), stdout and stderr.
        func finish(timeout: TimeInterval = 60) -> (status: Int32, stdout: String, stderr: String) {
            if !Eventually.holdsBlocking(within: .seconds(timeout), every: .milliseconds(50), { !process.isRunning }) {
                process.terminate()
            }
            process.waitUntilExit()
            stdoutDone.wait()
            stderrDone.wait()
            let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
            return (status, String(decoding: printed.withLock { $0.stdout }, as: UTF8.self), stderr)
        }
    }

    private var cleanup: [() -> Void] = []

    override func tearDown() {
        for step in cleanup.reversed() { step() }
        cleanup = []
    }

    /// The emulator (one-second polls), its base URL and the SMS codes it sends.
    func startEmulator(_ extra: [String] = []) throws -> (base: String, codes: OneTimeCodes) {
        let emulator = try EmulatorProcess(["--port", "0", "--users", "50", "--device-code-interval", "1"] + extra)
        cleanup.append { emulator.stop() }
        let base = String(try XCTUnwrap(emulator.readLine()).split(separator: " ").last!)
        let codes = OneTimeCodes()
        Thread.detachNewThread {
            while let line = emulator.readLine() { codes.record(line) }
        }
        return (base, codes)
    }

    /// `sesame` with a store of its own (files: no session bus) pointed at the emulator.
    func environment() -> [String: String] {
        let data = Repository.temporaryDirectory("sesame-device-code")
        cleanup.append { try? FileManager.default.removeItem(at: data) }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = data.appending(path: "data").path
        environment["SESAME_REQUIRE_SECRET_SERVICE"] = nil
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
        return environment
    }

    func login(_ base: String, environment: [String: String]) throws -> RunningProgram {
        try RunningProgram(
            Repository.product("sesame"), ["login", "--account-type", "myGraphService", "--device-code", "--emulator", base],
            environment: environment)
    }

    static let codePattern = #"enter the code ([A-Z0-9]{9}) to authenticate"#

    func testMeganSignsInFromAnotherDeviceWithHerSMSCodeAndSesameTokenThenWorks() async throws {
        let (base, codes) = try startEmulator()
        let environment = environment()
        let login = try login(base, environment: environment)
        let userCode = try login.waitForStderr(Self.codePattern)
        XCTAssertTrue(login.stderr.contains("open the page \(base)/devicelogin"), login.stderr)

        let browser = HeadlessBrowser.sockets(base: URL(string: base)!, codes: codes)
        let last = try await browser.verifyDevice(userCode: userCode, as: "megan@contoso.onmicrosoft.com")
        XCTAssertTrue(last.contains("You have signed in to the Sesame Directory application on your device."), last.text)
        XCTAssertNotNil(codes.code(for: "megan@contoso.onmicrosoft.com"), "megan was not asked for her SMS code")

        let ended = login.finish()
        XCTAssertEqual(ended.status, 0, ended.stderr)
        XCTAssertEqual(ended.stdout, "Signed in as Megan Bowen <megan@contoso.onmicrosoft.com> (myGraphService).\n")

        let token = try ProcessRunner.run(
            Repository.product("sesame"), ["token", "--account-type", "myGraphService", "--emulator", base], environment: environment)
        XCTAssertEqual(token.status, 0, token.stderr)
        XCTAssertEqual(token.stdout.trimmingCharacters(in: .newlines).split(separator: ".").count, 3, "not a JWT: \(token.stdout)")
        let accounts = try ProcessRunner.run(
            Repository.product("sesame"), ["accounts", "--emulator", base], environment: environment)
        XCTAssertTrue(accounts.stdout.contains("Megan Bowen <megan@contoso.onmicrosoft.com>"), accounts.stdout)
    }

    func testCancelOnTheOtherDeviceSaysItWasDeclinedAndFails() async throws {
        let (base, codes) = try startEmulator()
        let login = try login(base, environment: environment())
        let userCode = try login.waitForStderr(Self.codePattern)
        let browser = HeadlessBrowser.sockets(base: URL(string: base)!, codes: codes)
        let last = try await browser.verifyDevice(userCode: userCode, as: "alex@contoso.onmicrosoft.com", cancel: true)
        XCTAssertTrue(last.contains("declined"), last.text)
        let ended = login.finish()
        XCTAssertEqual(ended.status, 1, ended.stderr)
        XCTAssertTrue(ended.stderr.contains("sesame: The sign-in was declined on the other device; nothing was stored."), ended.stderr)
        XCTAssertTrue(ended.stderr.contains("Run `sesame login --device-code` again for a new code."), ended.stderr)
        XCTAssertTrue(ended.stdout.isEmpty, ended.stdout)
    }

    func testACodeNobodyUsesExpiresWithAClearMessage() throws {
        let (base, _) = try startEmulator(["--device-code-lifetime", "2"])
        let login = try login(base, environment: environment())
        _ = try login.waitForStderr(Self.codePattern)
        let ended = login.finish(timeout: 30)
        XCTAssertEqual(ended.status, 1, ended.stderr)
        XCTAssertTrue(
            ended.stderr.contains("sesame: The code expired before anyone signed in with it; nothing was stored."), ended.stderr)
    }

    /// Without --device-code, `sesame login` opens the desktop's default browser — here
    /// WebKitGTK's MiniBrowser under WebDriver, registered by a .desktop file and mimeapps.list
    /// in the test's XDG folders — and takes the answer on a loopback port.
    func testLoginWithoutTheFlagSignsInInTheDefaultBrowser() throws {
        let (base, _) = try startEmulator()
        var environment = environment()
        let home = URL(filePath: try XCTUnwrap(environment["XDG_DATA_HOME"])).deletingLastPathComponent()
        let applications = home.appending(path: "data/applications")
        let config = home.appending(path: "config")
        try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        let browser = Repository.root.appending(path: "Tests/SesameAppEndToEndTests/EndToEnd/default_browser.py")
        try """
        [Desktop Entry]
        Type=Application
        Name=Test Browser (MiniBrowser)
        Exec=\(try Repository.python().path) \(browser.path) %u
        NoDisplay=true

        """.write(to: applications.appending(path: "sesame-test-browser.desktop"), atomically: true, encoding: .utf8)
        try """
        [Default Applications]
        x-scheme-handler/http=sesame-test-browser.desktop
        x-scheme-handler/https=sesame-test-browser.desktop

        """.write(to: config.appending(path: "mimeapps.list"), atomically: true, encoding: .utf8)
        environment["XDG_CONFIG_HOME"] = config.path
        let seen = home.appending(path: "browser.json")
        environment["SESAME_TEST_BROWSER_RESULT"] = seen.path
        // No session bus here, so no accessibility bus either: the browser's GTK must not wait for one.
        environment["NO_AT_BRIDGE"] = "1"

        let login = try RunningProgram(
            Repository.product("sesame"), ["login", "--account-type", "myGraphService", "--emulator", base], environment: environment)
        let ended = login.finish(timeout: 120)
        XCTAssertEqual(ended.status, 0, ended.stderr)
        XCTAssertEqual(ended.stdout, "Signed in as Alex Wilber <alex@contoso.onmicrosoft.com> (myGraphService).\n")
        XCTAssertTrue(ended.stderr.contains("Continue the sign-in in your browser"), ended.stderr)
        let browserSaw = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: seen)) as? [String: Any])
        XCTAssertEqual(browserSaw["title"] as? String, "You can close this tab – Sesame")
        XCTAssertTrue((browserSaw["answered_at"] as? String)?.hasPrefix("http://127.0.0.1:") == true, "\(browserSaw)")
        // The browser started with none of Sesame's sockets or pipes (its loopback listener, its
        // connections to the identity service).
        XCTAssertEqual(browserSaw["inherited"] as? [String], [], "the browser inherited Sesame's descriptors")

        let token = try ProcessRunner.run(
            Repository.product("sesame"), ["token", "--account-type", "myGraphService", "--emulator", base], environment: environment)
        XCTAssertEqual(token.status, 0, token.stderr)
    }

    /// Ctrl+C while a poll is at the identity service (whose answers take 5 s here): the
    /// documented status and sentence, never "Could not reach the identity service:
    /// CancellationError()".
    func testCtrlCWithAPollInFlightSaysCancelled() throws {
        let (base, _) = try startEmulator(["--faults", "token:latency=5s"])
        let login = try login(base, environment: environment())
        _ = try login.waitForStderr(Self.codePattern)
        // A poll reaches the token endpoint, which holds it.
        let polled = Eventually.holdsBlocking(within: .seconds(60), every: .milliseconds(50)) { Self.tokenRequests(base) >= 1 }
        XCTAssertTrue(polled, "no poll reached the identity service")
        kill(login.process.processIdentifier, SIGINT)
        let ended = login.finish(timeout: 60)
        XCTAssertEqual(ended.status, 130, ended.stderr)
        XCTAssertTrue(ended.stderr.contains("sesame: Sign-in cancelled; nothing was stored."), ended.stderr)
        XCTAssertFalse(ended.stderr.contains("CancellationError"), ended.stderr)
    }

    /// How many token requests (polls included) the emulator has received (`/.emulator/requests`).
    static func tokenRequests(_ base: String) -> Int {
        guard let data = try? Data(contentsOf: URL(string: base + "/.emulator/requests")!),
            let counts = try? JSONSerialization.jsonObject(with: data) as? [String: Int]
        else { return 0 }
        return counts["token"] ?? 0
    }

    func testCtrlCStopsWaitingAndSaysSo() throws {
        let (base, _) = try startEmulator()
        let login = try login(base, environment: environment())
        _ = try login.waitForStderr(Self.codePattern)
        kill(login.process.processIdentifier, SIGINT)
        let ended = login.finish(timeout: 10)
        XCTAssertEqual(ended.status, 130, ended.stderr)
        XCTAssertTrue(ended.stderr.contains("sesame: Sign-in cancelled; nothing was stored."), ended.stderr)
    }
}
