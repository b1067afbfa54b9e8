import Foundation
import SesameTestSupport
import XCTest

/// `sesame` at work: the identity service is reachable only through the company's proxy
/// (Debian's tinyproxy in a network namespace, ``CompanyNetwork``), its certificate is signed by
/// the company's CA (installed the Debian way for the test), and the desktop names the proxy in
/// one of its three ways: the environment (`https_proxy`), GNOME's settings, a PAC file. Through
/// the window alex signs in (WebDriver fills the pages, which load through the proxy; the token
/// exchange and Graph go through it too) and the directory fills; `sesame login` signs in with a
/// device code, `sesame token` refreshes, and the proxy's log shows the tunnels. Without the
/// proxy, it says that the service's name resolves to nothing (how fast: `make bench`'s
/// failing-network figures).
final class CompanyNetworkTests: XCTestCase {
    private var network: CompanyNetwork?
    private var cleanup: [() -> Void] = []

    override func setUp() async throws {
        try XCTSkipUnless(CompanyNetwork.isAvailable, "a company network needs root (ip netns, the trust store)")
        let network = try await CompanyNetwork(emulatorArguments: ["--device-code-interval", "1", "--access-token-lifetime", "120"])
        self.network = network
        try network.installCertificateAuthority()
    }

    override func tearDown() {
        for step in cleanup.reversed() { step() }
        cleanup = []
        network?.stop()
        network = nil
    }

    /// `sesame`'s environment: a file store of its own, no session bus, no proxy.
    func environment() -> [String: String] {
        let data = Repository.temporaryDirectory("sesame-at-work")
        cleanup.append { try? FileManager.default.removeItem(at: data) }
        var environment = ProcessInfo.processInfo.environment
        for name in ["http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY"] {
            environment[name] = nil
        }
        environment["XDG_DATA_HOME"] = data.appending(path: "data").path
        environment["XDG_STATE_HOME"] = data.appending(path: "state").path
        // Files, also where a GNOME session's bus offers a Secret Service (one with no keyring).
        let sesameData = data.appending(path: "data/sesame")
        try? FileManager.default.createDirectory(at: sesameData, withIntermediateDirectories: true)
        try? Data("files\n".utf8).write(to: sesameData.appending(path: "storage"))
        environment["XDG_CONFIG_HOME"] = data.appending(path: "config").path
        environment["XDG_CURRENT_DESKTOP"] = nil
        environment["SESAME_REQUIRE_SECRET_SERVICE"] = nil
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
        return environment
    }

    /// A GNOME session of the test's own for `sesame`: a private D-Bus session bus (with dconf
    /// behind GSettings) whose `org.gnome.system.proxy` settings are `settings`, and
    /// `XDG_CURRENT_DESKTOP=GNOME`, so that GIO takes its proxy from GNOME's settings.
    func gnomeSession(_ settings: [(String, String, String)], environment: inout [String: String]) throws {
        environment["XDG_CURRENT_DESKTOP"] = "GNOME"
        let bus = try SessionBus(environment: environment)
        cleanup.append { bus.stop() }
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        for (schema, key, value) in settings {
            let set = try ProcessRunner.run(URL(filePath: "/usr/bin/gsettings"), ["set", schema, key, value], environment: environment)
            XCTAssertEqual(set.status, 0, "gsettings set \(schema) \(key) \(value): \(set.stderr)")
        }
    }

    /// Signs alex in through the window, then with a device code, through whatever proxy
    /// `environment` gives, then asks for a token (short-lived tokens: it refreshes); returns the
    /// proxy's tunnels `sesame token` opened.
    func signInAndRefresh(environment: [String: String]) async throws -> [String] {
        let network = try XCTUnwrap(network)
        let sesame = try Repository.product("sesame")
        let base = network.base.absoluteString

        let tunnelsBeforeWindow = network.tunnels.count
        let window = try windowSignsAlexIn(environment: environment)
        XCTAssertEqual(window.seen["host"] as? String, "🔒 \(CompanyNetwork.hostname) — secure connection", "the host bar")
        XCTAssertGreaterThan(window.seen["rows"] as? Int ?? 0, 0, "the directory did not fill")
        XCTAssertTrue(window.events.contains { $0["event"] as? String == "token-acquired" }, "no token through the proxy")
        XCTAssertTrue(
            window.events.contains { $0["event"] as? String == "api-call" && ($0["url"] as? String)?.contains("/users") == true },
            "Graph was not called")
        let windowTunnels = { network.tunnels.dropFirst(tunnelsBeforeWindow).filter { $0 == "\(CompanyNetwork.hostname):443" }.count }
        _ = Eventually.holdsBlocking(within: .seconds(60), every: .milliseconds(50)) { windowTunnels() >= 2 }
        XCTAssertGreaterThanOrEqual(
            windowTunnels(), 2,
            "the view's pages and Sesame's own requests each open a tunnel: \(network.tunnels)")
        // The window has ended before the commands run: while it lives it is the account service
        // on this session's bus, and `sesame token` would get its token from it, refreshed over
        // the window's tunnel, already open (WebDriver's quit does not wait for the app to end).
        if let bus = environment["DBUS_SESSION_BUS_ADDRESS"] {
            XCTAssertTrue(
                Eventually.holdsBlocking(within: .seconds(120)) { !SessionBus.hasOwner("org.sesame.Sesame", address: bus) },
                "the window did not end: org.sesame.Sesame is owned by \(SessionBus.owner(of: "org.sesame.Sesame", address: bus))")
        }
        let login = try DeviceCodeLoginTests.RunningProgram(
            sesame, ["login", "--account-type", "myGraphService", "--device-code", "--emulator", base], environment: environment)
        let userCode = try login.waitForStderr(DeviceCodeLoginTests.codePattern)
        XCTAssertTrue(login.stderr.contains("open the page \(base)/devicelogin"), login.stderr)

        let client = try network.client()
        defer { Task { try? await client.shutdown() } }
        let browser = HeadlessBrowser.sockets(base: network.base, codes: network.codes, client: client)
        let last = try await browser.verifyDevice(userCode: userCode, as: "alex@contoso.onmicrosoft.com")
        XCTAssertTrue(last.contains("You have signed in to the Sesame Directory application on your device."), last.text)
        let ended = login.finish()
        XCTAssertEqual(ended.status, 0, ended.stderr)
        XCTAssertEqual(ended.stdout, "Signed in as Alex Wilber <alex@contoso.onmicrosoft.com> (myGraphService).\n")

        // Typed at a terminal, as the person in that GNOME session would.
        let before = network.tunnels.count
        let typed = try Terminal.type("\(sesame.path) token --account-type myGraphService --emulator \(base)", environment: environment)
        XCTAssertNotNil(typed.token, "no token (the shell ended \(typed.status)): \(typed.shown)")
        // tinyproxy logs a tunnel when its turn comes, which on a busy machine can be after the
        // command has printed its token: wait for the line, not for a moment.
        _ = Eventually.holdsBlocking(within: .seconds(60), every: .milliseconds(50)) { network.tunnels.count > before }
        return Array(network.tunnels.dropFirst(before))
    }

    /// What the window flow (`e2e_flow.py company`) saw, and the app's trace.
    struct WindowRun {
        let seen: [String: Any]
        let events: [[String: Any]]
    }

    /// Runs the window flow `company` (alex signs in, the directory fills) with `environment`:
    /// the app under WebKitWebDriver, its pages filled by Selenium, its widgets read through the
    /// accessibility bus of the test's session (the app's own session bus, when `environment`
    /// names one, carries GNOME's settings).
    func windowSignsAlexIn(environment: [String: String]) throws -> WindowRun {
        try window("company", environment: environment)
    }

    /// Runs the window flow `flow` of e2e_flow.py against the company's service with `environment`.
    func window(_ flow: String, environment: [String: String]) throws -> WindowRun {
        let network = try XCTUnwrap(network)
        let scratch = URL(filePath: try XCTUnwrap(environment["XDG_DATA_HOME"])).deletingLastPathComponent()
        var flowEnvironment = environment
        flowEnvironment["DBUS_SESSION_BUS_ADDRESS"] = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"]
        flowEnvironment["SESAME_E2E_APP_BUS"] = environment["DBUS_SESSION_BUS_ADDRESS"]
        let script = Repository.root.appending(path: "Tests/SesameAppEndToEndTests/EndToEnd/e2e_flow.py")
        let result = try ProcessRunner.run(
            try Repository.python(),
            [script.path, flow, try Repository.product("sesame").path, network.base.absoluteString, scratch.path],
            environment: flowEnvironment)
        XCTAssertEqual(result.status, 0, "the window flow: \(result.stderr.suffix(3000))")
        let seen = try XCTUnwrap(
            try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
            "the window flow printed no result: \(result.stderr.suffix(3000))")
        let trace = (try? String(contentsOf: scratch.appending(path: "trace-1.jsonl"), encoding: .utf8)) ?? ""
        let events = trace.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        return WindowRun(seen: seen, events: events)
    }

    func testFromTheEnvironmentsProxyVariables() async throws {
        let network = try XCTUnwrap(network)
        var environment = environment()
        environment["https_proxy"] = "http://127.0.0.1:\(network.proxyPort)"
        environment["no_proxy"] = "localhost,127.0.0.1"
        let tunnels = try await signInAndRefresh(environment: environment)
        XCTAssertTrue(tunnels.contains("\(CompanyNetwork.hostname):443"), "sesame token opened no tunnel: \(network.tunnels)")
    }

    func testFromGnomesProxySettings() async throws {
        let network = try XCTUnwrap(network)
        var environment = environment()
        try gnomeSession(
            [
                ("org.gnome.system.proxy", "mode", "manual"),
                ("org.gnome.system.proxy.https", "host", "127.0.0.1"),
                ("org.gnome.system.proxy.https", "port", String(network.proxyPort)),
            ], environment: &environment)
        let tunnels = try await signInAndRefresh(environment: environment)
        XCTAssertTrue(tunnels.contains("\(CompanyNetwork.hostname):443"), "sesame token opened no tunnel: \(network.tunnels)")
    }

    func testFromAPACFile() async throws {
        let network = try XCTUnwrap(network)
        let pac = Repository.temporaryDirectory("pac").appending(path: "proxy.pac")
        cleanup.append { try? FileManager.default.removeItem(at: pac.deletingLastPathComponent()) }
        try """
        function FindProxyForURL(url, host) {
          if (dnsDomainIs(host, ".contoso.test")) return "PROXY 127.0.0.1:\(network.proxyPort)";
          return "DIRECT";
        }

        """.write(to: pac, atomically: true, encoding: .utf8)
        var environment = environment()
        try gnomeSession(
            [("org.gnome.system.proxy", "mode", "auto"), ("org.gnome.system.proxy", "autoconfig-url", pac.absoluteString)],
            environment: &environment)
        let tunnels = try await signInAndRefresh(environment: environment)
        XCTAssertTrue(tunnels.contains("\(CompanyNetwork.hostname):443"), "sesame token opened no tunnel: \(network.tunnels)")
    }

    /// The company's CA not installed (IT has not got to this computer yet): the view and Sesame's
    /// own client both refuse the service's certificate, in the same sentence, and neither goes on.
    func testWithoutTheCompanysCATheViewAndTheClientRefuseTheServiceAlike() throws {
        let network = try XCTUnwrap(network)
        network.removeCertificateAuthority()
        var environment = environment()
        environment["https_proxy"] = "http://127.0.0.1:\(network.proxyPort)"
        environment["no_proxy"] = "localhost,127.0.0.1"
        let sentence =
            "The certificate of \(CompanyNetwork.hostname) is not trusted on this computer, so Sesame did not connect. "
            + "If your organization inspects its traffic, ask IT to install its certificate authority."

        let login = try ProcessRunner.run(
            Repository.product("sesame"),
            ["login", "--account-type", "myGraphService", "--device-code", "--emulator", network.base.absoluteString],
            environment: environment)
        XCTAssertEqual(login.status, 1, login.stderr)
        XCTAssertTrue(login.stderr.hasSuffix("\nsesame: \(sentence) Nothing was stored.\n"), login.stderr)

        let window = try window("untrusted", environment: environment)
        XCTAssertEqual(window.seen["title"] as? String, "This connection is not secure")
        XCTAssertEqual(window.seen["error"] as? String, sentence)
        // The page never loaded (no connection was trusted): the bar names the host, and says nothing of encryption.
        XCTAssertEqual(window.seen["host"] as? String, CompanyNetwork.hostname, "the host bar")
        XCTAssertFalse(window.events.contains { $0["event"] as? String == "redirect-intercepted" })
    }

    func testWithoutTheProxyItSaysAtOnceThatTheServiceCannotBeFound() throws {
        let network = try XCTUnwrap(network)
        let tunnels = network.tunnels.count
        let login = try ProcessRunner.run(
            Repository.product("sesame"),
            ["login", "--account-type", "myGraphService", "--device-code", "--emulator", network.base.absoluteString],
            environment: environment())
        XCTAssertEqual(login.status, 1, login.stderr)
        XCTAssertTrue(
            login.stderr.contains("There is no server named \(CompanyNetwork.hostname). Check the address and the network connection."),
            login.stderr)
        XCTAssertEqual(network.tunnels.count, tunnels, "\(network.tunnels)")
    }
}
