import Foundation
import SesameTestSupport
import XCTest

/// A browser's single sign-on through linux-entra-sso's native host (pinned, unchanged), which
/// runs under python3: the program the user decides about is "python3 started by that browser",
/// as the kernel names the host's parent, not every Python program of the user.
final class BrowserNativeHostTests: XCTestCase {
    private var cleanup: [() -> Void] = []

    override func tearDown() {
        for step in cleanup.reversed() { step() }
        cleanup = []
    }

    /// Always for the host Firefox starts, Deny for python3 alone (both on file from an earlier
    /// day): the host started by the browser gets the user and a cookie with no question; the same
    /// script run by python3 from anywhere else is python3, and its Deny stands.
    func testTheBrowsersHostIsPythonStartedByThatBrowserNotEveryPythonProgram() throws {
        let desktop = try DeviceCommandTests.Desktop(cleanup: &cleanup)
        _ = try desktop.register()
        let python = URL(filePath: "/usr/bin/python3").resolvingSymlinksInPath().path
        let home = URL(filePath: try XCTUnwrap(desktop.environment["HOME"]))
        // The browser's stand-in: coreutils' `timeout` under Firefox's name starts the host as a
        // child process and waits for it, as Firefox starts an extension's native host.
        let firefox = home.appending(path: "firefox-esr/firefox-esr")
        try FileManager.default.createDirectory(at: firefox.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "/usr/bin/timeout", toPath: firefox.path)
        let data = URL(filePath: try XCTUnwrap(desktop.environment["XDG_DATA_HOME"])).appending(path: "sesame")
        let decision = { (program: String, allowed: Bool) in
            """
            {"program":\(program),"accountType":"device","homeAccountID":"\(DeviceCommandTests.alexHomeAccountID)",\
            "username":"\(DeviceCommandTests.alex)","resource":"",\
            "scopes":["Sign you in to every site and app of your organization as this computer (single sign-on)"],\
            "allowed":\(allowed),"decidedAt":"2026-11-20T09:00:00Z"}
            """
        }
        let decisions = [
            decision(#"{"kind":"executable","id":"\#(python)","startedBy":"\#(firefox.path)"}"#, true),
            decision(#"{"kind":"executable","id":"\#(python)"}"#, false),
        ]
        try #"{"version":2,"decisions":[\#(decisions.joined(separator: ","))]}"#.write(
            to: data.appending(path: "program-access.json"), atomically: true, encoding: .utf8)
        let service = Process()
        service.executableURL = try Repository.product("sesame-service")
        service.arguments = ["--emulator", desktop.base]
        service.environment = desktop.environment
        service.standardOutput = FileHandle.nullDevice
        service.standardError = FileHandle.nullDevice
        try service.start()
        cleanup.append { if service.isRunning { service.terminate() } }
        XCTAssertTrue(
            Eventually.holdsBlocking(within: .seconds(60)) { desktop.keyring.bus.hasOwner("com.microsoft.identity.broker1") },
            "sesame-service never served the broker")

        let host = Repository.root.appending(path: "Tests/ThirdParty/linux-entra-sso/linux-entra-sso.py").path
        let startedByFirefox = { (arguments: [String]) throws -> ProcessRunner.Result in
            let result = try ProcessRunner.run(firefox, ["120", "/usr/bin/python3", host] + arguments, environment: desktop.environment)
            desktop.outputs += [result.stdout, result.stderr]
            return result
        }
        let startedElsewhere = { (arguments: [String]) throws -> ProcessRunner.Result in
            let result = try ProcessRunner.run(URL(filePath: "/usr/bin/python3"), [host] + arguments, environment: desktop.environment)
            desktop.outputs += [result.stdout, result.stderr]
            return result
        }
        let usernames = { (result: ProcessRunner.Result) -> [String] in
            let listed = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any]
            return ((listed?["accounts"] as? [[String: Any]]) ?? []).compactMap { $0["username"] as? String }
        }

        let accounts = try startedByFirefox(["-i", "getAccounts"])
        XCTAssertEqual(accounts.status, 0, accounts.stderr)
        XCTAssertEqual(usernames(accounts), [DeviceCommandTests.alex], "the host Firefox started: \(accounts.stdout)")
        let cookie = try startedByFirefox(["-i", "acquirePrtSsoCookie", "-s", desktop.base + "/"])
        XCTAssertEqual(cookie.status, 0, cookie.stderr)
        XCTAssertTrue(cookie.stdout.contains("\"cookieItems\""), "no cookie for the host Firefox started")

        // The same script, run by python3 from a shell or another program: python3 alone, denied.
        let elsewhere = try startedElsewhere(["-i", "getAccounts"])
        XCTAssertEqual(usernames(elsewhere), [], "a Python program no browser started saw the user: \(elsewhere.stdout)")
        let noCookie = try startedElsewhere(["-i", "acquirePrtSsoCookie", "-s", desktop.base + "/"])
        XCTAssertFalse(noCookie.stdout.contains("\"cookieItems\""), "a Python program no browser started got the cookie")
        // The call log tells the two apart only by what each got; never a cookie.
        let log = try String(contentsOf: home.appending(path: ".local/state/sesame/broker-calls.log"), encoding: .utf8)
        XCTAssertTrue(log.contains("a single sign-on cookie"), log)
        service.terminate()
        service.waitUntilExit()
    }
}
