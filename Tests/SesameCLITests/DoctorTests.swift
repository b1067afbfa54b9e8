import Foundation
import SesameTestSupport
import XCTest

/// What the doctor's tests share: `sesame`'s environment, settings with a secret, the emulator,
/// running `sesame doctor`, and the check that no secret was printed.
final class DoctorHarness {
    private var cleanup: [() -> Void] = []

    /// Removes what the tests made and stops the emulators they started.
    func tearDown() {
        for step in cleanup.reversed() { step() }
        cleanup = []
    }

    static let clientSecret = "not-a-real-secret-4711"

    /// `sesame`'s environment: files of its own, no session bus, no proxy.
    func environment() -> [String: String] {
        let data = Repository.temporaryDirectory("sesame-doctor")
        cleanup.append { try? FileManager.default.removeItem(at: data) }
        var environment = ProcessInfo.processInfo.environment
        for name in ["http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY"] {
            environment[name] = nil
        }
        environment["XDG_DATA_HOME"] = data.appending(path: "data").path
        // Its own state too: the latest refusal another test left is not this setup's.
        environment["XDG_STATE_HOME"] = data.appending(path: "state").path
        environment["XDG_CURRENT_DESKTOP"] = nil
        environment["SESAME_REQUIRE_SECRET_SERVICE"] = nil
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
        return environment
    }

    /// The bundled Tasks file as a confidential client: its secret must never be printed.
    func confidentialTasksFile() throws -> URL {
        let folder = Repository.temporaryDirectory("sesame-doctor-settings")
        cleanup.append { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appending(path: "confidential-tasks.plist")
        try String(contentsOf: Repository.settings("tasks.plist"), encoding: .utf8)
            .replacingOccurrences(of: "<string>B2C_Acccount</string>", with: "<string>ConfidentialTasks</string>")
            .replacingOccurrences(
                of: "<key>clientSecret</key>\n    <string></string>", with: "<key>clientSecret</key><string>\(Self.clientSecret)</string>"
            )
            .write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    func startEmulator(_ arguments: [String] = []) throws -> (EmulatorProcess, String) {
        let state = Repository.temporaryDirectory("sesame-doctor-emulator")
        cleanup.append { try? FileManager.default.removeItem(at: state) }
        let emulator = try EmulatorProcess(["--port", "0", "--users", "20", "--state-dir", state.path] + arguments)
        cleanup.append { emulator.stop() }
        let line = try XCTUnwrap(emulator.readLine(), "the emulator did not start: \(emulator.standardError)")
        return (emulator, String(try XCTUnwrap(line.split(separator: " ").last)))
    }

    func doctor(_ arguments: [String], environment: [String: String]? = nil) throws -> ProcessRunner.Result {
        try ProcessRunner.run(try Repository.product("sesame"), ["doctor"] + arguments, environment: environment ?? self.environment())
    }

    /// The report's finding lines (two spaces, then OK, FIX or --).
    func findings(_ result: ProcessRunner.Result) -> [Substring] {
        result.stdout.split(separator: "\n").filter { $0.hasPrefix("  ") }
    }

    func assertNoSecret(_ result: ProcessRunner.Result, file: StaticString = #filePath, line: UInt = #line) {
        for secret in [Self.clientSecret, "proxy-password-4711"] {
            XCTAssertFalse(
                result.stdout.contains(secret) || result.stderr.contains(secret), "\(secret) was printed", file: file, line: line)
        }
    }
}

/// `sesame doctor`, run as a process against the emulator: a healthy setup says OK on every line
/// and exits 0; a closed port, a clock ten minutes off and a certificate authority this computer
/// does not trust each get the window's sentence (or the doctor's own for the clock) and a
/// non-zero exit. Never a secret in the output.
final class DoctorTests: XCTestCase {
    private let harness = DoctorHarness()

    override func tearDown() { harness.tearDown() }

    func testAHealthySetupIsOKOnEveryLine() throws {
        let (_, base) = try harness.startEmulator()
        let settings =
            try ["directory.plist", "tasks.plist", "me.plist"].map { Repository.settings($0).path } + [harness.confidentialTasksFile().path]
        let result = try harness.doctor(["--emulator", base] + settings.flatMap { ["--settings", $0] })
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        let lines = harness.findings(result)
        XCTAssertGreaterThan(lines.count, 30, result.stdout)
        // The identity broker's section informs (who serves the name, the latest calls): nothing to fix.
        let broker = lines.filter { $0.contains("identity broker:") || $0.contains("broker call") }
        XCTAssertEqual(broker.count, 2, result.stdout)
        for line in broker { XCTAssertTrue(line.hasPrefix("  OK ") || line.hasPrefix("  -- "), "not OK: \(line)") }
        // So does the device's: sign-ins in files here, so this computer cannot be registered.
        let device = lines.filter { $0.contains(" device: ") }
        XCTAssertEqual(
            device,
            ["  --  device: sign-ins are kept in files, not a keyring: this computer cannot be registered (its keys never go to a file)"])
        let informing = broker + device
        for line in lines where !informing.contains(line) { XCTAssertTrue(line.hasPrefix("  OK "), "not OK: \(line)") }
        for accountType in ["myGraphService", "B2C_Acccount", "msalGraph", "ConfidentialTasks"] {
            XCTAssertTrue(("\n" + result.stdout).contains("\n\(accountType) (a "), "no section for \(accountType): \(result.stdout)")
        }
        XCTAssertTrue(result.stdout.contains("  OK   proxy for \(base.dropFirst("http://".count)): direct"), result.stdout)
        XCTAssertTrue(
            result.stdout.contains("  OK   discovery: \(base)/contoso.onmicrosoft.com/v2.0/.well-known/openid-configuration answered in "))
        XCTAssertTrue(result.stdout.contains("  OK   clock: agrees with the service's"), result.stdout)
        // The confidential client's secret goes in the form at Microsoft's authorities, as MSAL sends it.
        XCTAssertTrue(result.stdout.contains("  OK   client authentication: client_secret_post"), result.stdout)
        XCTAssertTrue(result.stdout.contains("  OK   sign-ins kept in: files under "), result.stdout)
        XCTAssertTrue(result.stdout.hasSuffix("Everything Sesame checked is OK.\n"), result.stdout)
        harness.assertNoSecret(result)
    }

    func testDiscoveryAtAClosedPortIsConnectionRefused() throws {
        let port = try FreePort.pick()
        let result = try harness.doctor([
            "--emulator", "http://127.0.0.1:\(port)", "--settings", Repository.settings("directory.plist").path,
        ])
        XCTAssertEqual(result.status, 1, result.stdout + result.stderr)
        XCTAssertTrue(
            result.stdout.contains(
                "  FIX  discovery: 127.0.0.1:\(port) refused the connection: nothing answers there. Check the address, or try again later."),
            result.stdout)
        XCTAssertTrue(result.stdout.contains("  --   clock: not checked"), result.stdout)
        XCTAssertTrue(result.stdout.hasSuffix("1 to fix: see the lines marked FIX.\n"), result.stdout)
    }

    /// A file that cannot be used is the one thing to fix for it; the other files are still checked.
    func testASettingsFileThatCannotBeUsedIsReportedAndTheOthersAreChecked() throws {
        let (_, base) = try harness.startEmulator()
        let broken = try harness.confidentialTasksFile()
        try String(contentsOf: broken, encoding: .utf8).replacingOccurrences(of: "<key>clientID</key>", with: "<key>clientid</key>")
            .write(to: broken, atomically: true, encoding: .utf8)
        let result = try harness.doctor(["--emulator", base, "--settings", broken.path, "--settings", Repository.settings("me.plist").path])
        XCTAssertEqual(result.status, 1, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.hasPrefix("\(broken.path) (cannot be used)\n  FIX  settings: \(broken.path): key "), result.stdout)
        XCTAssertTrue(result.stdout.contains("the file has \"clientid\": did you mean \"clientID\"?"), result.stdout)
        XCTAssertTrue(result.stdout.contains("\nmsalGraph (a Me (MSAL) settings file: "), result.stdout)
        XCTAssertEqual(harness.findings(result).filter { $0.hasPrefix("  FIX") }.count, 1, result.stdout)
        harness.assertNoSecret(result)
    }

    func testAClockTenMinutesOffIsToldAndHowToFixIt() throws {
        // The service's clock ten minutes ahead: this computer's is ten minutes behind it.
        let (_, base) = try harness.startEmulator(["--clock-offset", "600"])
        let result = try harness.doctor(["--emulator", base, "--settings", Repository.settings("me.plist").path])
        XCTAssertEqual(result.status, 1, result.stdout + result.stderr)
        XCTAssertTrue(
            result.stdout.contains(
                "  FIX  clock: This computer's clock is 10 minutes behind the service's; tokens will look expired or not yet valid. "
                    + "Set the time automatically in Settings → Date & Time.\n"), result.stdout)
        XCTAssertEqual(harness.findings(result).filter { $0.hasPrefix("  FIX") }.count, 1, result.stdout)
    }

    func testACertificateAuthorityThisComputerDoesNotTrustIsNamed() throws {
        let (_, base) = try harness.startEmulator(["--tls"])
        let host = String(base.dropFirst("https://".count))
        let result = try harness.doctor(["--emulator", base, "--settings", harness.confidentialTasksFile().path])
        XCTAssertEqual(result.status, 1, result.stdout + result.stderr)
        let untrusted =
            "The certificate of \(host) is not trusted on this computer, so Sesame did not connect. If your organization inspects its "
            + "traffic, ask IT to install its certificate authority."
        XCTAssertTrue(
            result.stdout.contains(
                "  FIX  certificate of \(host): issued by CN=Sesame identity emulator local CA, O=Sesame identity emulator. \(untrusted)"),
            result.stdout)
        XCTAssertTrue(result.stdout.contains("  FIX  discovery: \(untrusted)"), result.stdout)
        harness.assertNoSecret(result)
    }
}

/// `sesame doctor` at work: the service is reachable only through the company's proxy
/// (``CompanyNetwork``). Without the proxy the doctor says the name resolves to nothing; with
/// it (from `https_proxy`, credentials and all) it shows the route, masked, and finds discovery
/// and the company's certificate authority.
final class DoctorAtWorkTests: XCTestCase {
    private var network: CompanyNetwork?
    private let harness = DoctorHarness()

    override func setUp() async throws {
        try XCTSkipUnless(CompanyNetwork.isAvailable, "a company network needs root (ip netns, the trust store)")
        let network = try await CompanyNetwork()
        self.network = network
        try network.installCertificateAuthority()
    }

    override func tearDown() {
        harness.tearDown()
        network?.stop()
        network = nil
    }

    func testWithoutTheProxyTheServiceHasNoSuchHost() throws {
        let network = try XCTUnwrap(network)
        let result = try harness.doctor([
            "--emulator", network.base.absoluteString, "--settings", Repository.settings("directory.plist").path,
        ])
        XCTAssertEqual(result.status, 1, result.stdout + result.stderr)
        XCTAssertTrue(
            result.stdout.contains(
                "  FIX  discovery: There is no server named \(CompanyNetwork.hostname). Check the address and the network connection."),
            result.stdout)
        XCTAssertTrue(result.stdout.contains("  OK   proxy for \(CompanyNetwork.hostname): direct"), result.stdout)
    }

    func testThroughTheProxyDiscoveryAndTheCompanysCertificateAuthorityAreFound() throws {
        let network = try XCTUnwrap(network)
        let settings = try harness.confidentialTasksFile()
        for (proxy, shown) in [
            ("http://127.0.0.1:\(network.proxyPort)", "http://127.0.0.1:\(network.proxyPort)"),
            // tinyproxy asks for no credentials; Sesame sends them and never prints them.
            ("http://alex:proxy-password-4711@127.0.0.1:\(network.proxyPort)", "http://•••@127.0.0.1:\(network.proxyPort)"),
        ] {
            var environment = harness.environment()
            environment["https_proxy"] = proxy
            environment["no_proxy"] = "localhost,127.0.0.1"
            let tunnels = network.tunnels.count
            let result = try harness.doctor(
                ["--emulator", network.base.absoluteString, "--settings", settings.path], environment: environment)
            XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
            XCTAssertTrue(result.stdout.contains("  OK   proxy for \(CompanyNetwork.hostname): \(shown) ("), result.stdout)
            XCTAssertTrue(
                result.stdout.contains(
                    "  OK   certificate of \(CompanyNetwork.hostname): trusted, issued by CN=Sesame identity emulator local CA"),
                result.stdout)
            XCTAssertTrue(result.stdout.contains("  OK   discovery: https://\(CompanyNetwork.hostname)/"), result.stdout)
            XCTAssertFalse(result.stdout.contains("alex"), result.stdout)
            harness.assertNoSecret(result)
            // Discovery, the keys and the certificate's own handshake each went through the proxy
            // (tinyproxy's log lines can come after the doctor ended: waited for, not assumed).
            _ = Eventually.holdsBlocking(within: .seconds(60), every: .milliseconds(50)) { network.tunnels.count - tunnels >= 2 }
            XCTAssertGreaterThanOrEqual(network.tunnels.count - tunnels, 2, "\(network.tunnels)")
        }
    }
}
