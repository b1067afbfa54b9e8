import Foundation
import SesameTestSupport
import XCTest

/// `sesame device` as a person at a terminal uses it, against the emulator and a keyring of the
/// test's own: the computer registered with a code typed on another device, then one sign-in for
/// every app — `sesame login` opens no browser, `sesame token` names the device — until
/// `sesame device remove` takes it away on both sides. Nothing secret reaches any output.
final class DeviceCommandTests: XCTestCase {
    typealias RunningProgram = DeviceCodeLoginTests.RunningProgram
    static let alex = "alex@contoso.onmicrosoft.com"
    /// The Me sample's client (me.plist), which an administrator consented to for everyone.
    static let meClient = "66855f8a-60cd-445e-a9bb-8cd8eadbd3fa"
    static let alexHomeAccountID = "4c1b9a54-7f4e-4f2b-9a5f-2a0c6c1d7e01.9f2b1c3e-5a7d-4e2b-8c41-0d6a3f5b7e21"
    static let azureCLI = "04b07795-8ddb-461a-bbee-02f9e1bf7b46"
    /// The Directory sample's (directory.plist), consented to as well.
    static let directoryClient = "6731de76-14a6-49ae-97bc-6eba6914391e"

    /// A Conditional Access policy file: `requirement` for the samples' apps.
    static func policy(_ requirement: String) -> String {
        """
        {"tenants":{"contoso.onmicrosoft.com":{"conditionalAccess":[{"name":"Known computers only","apps":["\(meClient)","\(directoryClient)"],"require":"\(requirement)"}]}}}
        """
    }

    private var cleanup: [() -> Void] = []

    override func tearDown() {
        for step in cleanup.reversed() { step() }
        cleanup = []
    }

    /// A desktop of the test's own: the emulator (its printed lines kept), a keyring on a bus of
    /// its own, Sesame's sign-ins in that keyring, the samples' apps consented to by an
    /// administrator, and a browser on another computer.
    final class Desktop {
        let base: String
        let lines = OneTimeCodes()
        let browser: HeadlessBrowser
        let keyring: PrivateKeyring
        var environment: [String: String]
        /// Everything the programs printed, to search for secrets.
        var outputs: [String] = []

        /// `tpm`: the TPM the computer's keys go to (else software keys, even where a TPM is).
        init(cleanup: inout [() -> Void], tpm: SoftwareTPM? = nil) throws {
            let emulator = try EmulatorProcess(["--port", "0", "--users", "50", "--device-code-interval", "1"])
            cleanup.append { emulator.stop() }
            base = String(try XCTUnwrap(emulator.readLine()).split(separator: " ").last!)
            Thread.detachNewThread { [lines] in
                while let line = emulator.readLine() { lines.record(line) }
            }
            let scratch = Repository.temporaryDirectory("sesame-device-command")
            cleanup.append { try? FileManager.default.removeItem(at: scratch) }
            let keyring = try PrivateKeyring(home: scratch.appending(path: "home"))
            cleanup.append { keyring.stop() }
            self.keyring = keyring
            environment = keyring.environment
            environment["SESAME_REQUIRE_SECRET_SERVICE"] = nil
            environment["SESAME_TPM"] = tpm?.tcti ?? "none"
            // Sesame keeps its sign-ins in the keyring (what a first run on a desktop records).
            let marker = URL(filePath: try XCTUnwrap(environment["XDG_DATA_HOME"])).appending(path: "sesame")
            try FileManager.default.createDirectory(at: marker, withIntermediateDirectories: true)
            try "secret-service\n".write(to: marker.appending(path: "storage"), atomically: true, encoding: .utf8)
            browser = HeadlessBrowser.sockets(base: URL(string: base)!, codes: lines)
            for client in [DeviceCommandTests.meClient, DeviceCommandTests.directoryClient] {
                _ = try blocking { [browser] in try await browser.post("/.emulator/clients/\(client)/adminConsent", form: []) }
            }
        }

        /// `sesame ARGUMENTS` as a program runs it.
        func sesame(_ arguments: String...) throws -> ProcessRunner.Result {
            let result = try ProcessRunner.run(Repository.product("sesame"), arguments + ["--emulator", base], environment: environment)
            outputs += [result.stdout, result.stderr]
            return result
        }

        /// `sesame ARGUMENTS` typed at a terminal.
        func typed(_ arguments: String) throws -> Terminal.Session {
            let session = try Terminal.type(
                "\(try Repository.product("sesame").path) \(arguments) --emulator \(base)", environment: environment)
            outputs.append(session.shown)
            return session
        }

        func policy(_ requirement: String) throws {
            let body = DeviceCommandTests.policy(requirement)
            _ = try blocking { [browser] in try await browser.send("/.emulator/policy", method: .post, headers: [:], body: body) }
        }

        /// Registers with a code alex types on another computer; returns the device id.
        func register() throws -> String {
            let register = try RunningProgram(
                Repository.product("sesame"), ["device", "register", "--yes", "--name", "alex-laptop", "--emulator", base],
                environment: environment)
            let userCode = try register.waitForStderr(DeviceCodeLoginTests.codePattern)
            let last = try blocking { [browser] in try await browser.verifyDevice(userCode: userCode, as: DeviceCommandTests.alex) }
            XCTAssertTrue(
                last.contains("You have signed in to the Microsoft Authentication Broker application"), "\(last.text.prefix(500))")
            let registered = register.finish()
            outputs += [registered.stdout, registered.stderr]
            XCTAssertEqual(registered.status, 0, registered.stderr)
            XCTAssertTrue(registered.stdout.contains("your organization knows this computer as “alex-laptop”"), registered.stdout)
            let deviceID = try XCTUnwrap(registered.stdout.firstMatch(of: /device ([0-9a-f-]{36})/).map { String($0.1) }, registered.stdout)
            XCTAssertTrue(lines.all.contains("device-registered \(deviceID) \(DeviceCommandTests.alex)"), "\(lines.all)")
            return deviceID
        }
    }

    func testRegisteredWithACodeEveryAppSignsInWithNoPageUntilRemovedThere() throws {
        let desktop = try Desktop(cleanup: &cleanup)
        try desktop.policy("registeredDevice")
        let before = try desktop.sesame("device", "status")
        XCTAssertEqual(before.status, 0, before.stderr)
        XCTAssertTrue(before.stdout.contains("This computer is not registered with an organization."), before.stdout)
        XCTAssertTrue(try desktop.sesame("doctor").stdout.contains("not registered with an organization: each app signs in on its own"))

        let deviceID = try desktop.register()
        let status = try desktop.sesame("device", "status")
        XCTAssertTrue(status.stdout.contains("device id:     \(deviceID)"), status.stdout)
        XCTAssertTrue(status.stdout.contains("registered by: \(Self.alex)"), status.stdout)
        XCTAssertTrue(status.stdout.contains("not managed, not joined"), status.stdout)
        let doctor = try desktop.sesame("doctor").stdout
        XCTAssertTrue(doctor.contains("registered with 127.0.0.1 as \(deviceID) by \(Self.alex)"), doctor)
        XCTAssertTrue(doctor.contains("software keys, kept in the Secret Service"), doctor)
        XCTAssertTrue(doctor.contains(" old; renewed at its next use after "), doctor)
        let again = try desktop.sesame("device", "register", "--yes")
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.stderr.contains("registered already (device \(deviceID))"), again.stderr)

        // One sign-in for every app: `sesame login` needs no browser (none is set up here), and the
        // organization's rule for registered computers admits it.
        let login = try desktop.sesame("login", "--account-type", "msalGraph")
        XCTAssertEqual(login.status, 0, login.stderr)
        XCTAssertEqual(login.stdout, "Signed in as Alex Wilber <\(Self.alex)> (msalGraph).\n")
        XCTAssertFalse(login.stderr.contains("Continue the sign-in in your browser"), login.stderr)
        XCTAssertTrue(desktop.lines.all.contains("prt-token \(deviceID) \(Self.meClient)"), "\(desktop.lines.all)")
        let typed = try desktop.typed("token --account-type msalGraph")
        XCTAssertEqual(typed.status, 0, typed.shown)
        let token = try XCTUnwrap(typed.token, typed.shown)
        let claims = try XCTUnwrap(Base64URLDecoding.json(String(token.split(separator: ".")[1])), "the token's claims cannot be read")
        XCTAssertEqual(claims["deviceid"] as? String, deviceID)

        // Registered is not managed: a policy asking for a compliant computer still refuses, in Sesame's words.
        try desktop.policy("compliantDevice")
        let compliant = try desktop.typed("token --account-type myGraphService")
        XCTAssertEqual(compliant.status, 1, compliant.shown)
        XCTAssertTrue(compliant.shown.contains("Your organization allows this only from a device it manages"), compliant.shown)
        XCTAssertTrue(compliant.shown.contains("Error code: AADSTS53000"), compliant.shown)

        // What is kept is in the keyring only, and none of its secrets reached any output or file.
        try assertNoSecretPrinted(desktop)

        // Removed in My Account (Graph, as the user): the next sign-in by the PRT says so, once,
        // forgets the registration and falls back to a sign-in of its own (here: "sign in").
        let devices = try blocking { [browser = desktop.browser] in
            try await browser.get("/v1.0/me/registeredDevices", headers: [.authorization: "Bearer \(token)"])
        }
        let objectID = try XCTUnwrap(
            ((devices.json["value"] as? [[String: Any]]) ?? []).first { $0["deviceId"] as? String == deviceID }?["id"] as? String,
            devices.text)
        let deleted = try blocking { [browser = desktop.browser] in
            try await browser.send("/v1.0/devices/\(objectID)", method: .delete, headers: [.authorization: "Bearer \(token)"], body: nil)
        }
        XCTAssertEqual(deleted.status, 204, deleted.text)
        try desktop.policy("")
        let lost = try desktop.typed("token --account-type myGraphService")
        XCTAssertEqual(lost.status, 2, lost.shown)
        XCTAssertTrue(
            lost.shown.contains(
                "sesame: note: This computer is no longer registered with your organization. (AADSTS700003) Sesame has forgotten its registration"
            ), lost.shown)
        XCTAssertNil(try desktop.keyring.lookup(group: "device-identity", kind: "device"), "a removed registration is kept")
        XCTAssertTrue(try desktop.sesame("device", "status").stdout.contains("not registered"))
        let nothing = try desktop.sesame("device", "remove")
        XCTAssertEqual(nothing.status, 0, nothing.stderr)
        XCTAssertTrue(nothing.stdout.contains("nothing to remove"), nothing.stdout)
    }

    func testRemovingTheComputerRemovesItInTheOrganizationToo() throws {
        let desktop = try Desktop(cleanup: &cleanup)
        let deviceID = try desktop.register()
        let removed = try desktop.sesame("device", "remove")
        XCTAssertEqual(removed.status, 0, removed.stderr)
        XCTAssertTrue(removed.stdout.contains("Removed: your organization no longer knows this computer (device \(deviceID))"))
        XCTAssertTrue(desktop.lines.all.contains("device-removed \(deviceID)"), "\(desktop.lines.all)")
        XCTAssertNil(try desktop.keyring.lookup(group: "device-identity", kind: "device"))
        XCTAssertTrue(try desktop.sesame("device", "status").stdout.contains("not registered"))
        // Sign-ins show their pages again: `sesame login` turns to the browser (none here).
        let login = try desktop.sesame("login", "--account-type", "msalGraph")
        XCTAssertNotEqual(login.status, 0, login.stdout)
    }

    /// Siemens' linux-entra-sso native host (its published source, pinned and unchanged), as the
    /// browser extension drives it, against Sesame's broker on the desktop's bus: `getAccounts`
    /// names the computer's user, and `acquirePrtSsoCookie` gives a cookie the sign-in service
    /// signs the browser in with, no page. The user's Always for the browser's single sign-on is on
    /// file from an earlier day (the question itself: `BrokerSingleSignOnTests`).
    func testLinuxEntraSSOsNativeHostGetsACookieTheSignInServiceHonours() throws {
        let desktop = try Desktop(cleanup: &cleanup)
        let deviceID = try desktop.register()
        let python = URL(filePath: "/usr/bin/python3").resolvingSymlinksInPath().path
        let data = URL(filePath: try XCTUnwrap(desktop.environment["XDG_DATA_HOME"])).appending(path: "sesame")
        let decision = """
            {"version":2,"decisions":[{"program":{"kind":"executable","id":"\(python)"},"accountType":"device",\
            "homeAccountID":"\(Self.alexHomeAccountID)","username":"\(Self.alex)","resource":"",\
            "scopes":["Sign you in to every site and app of your organization as this computer (single sign-on)"],\
            "allowed":true,"decidedAt":"2026-11-20T09:00:00Z"}]}
            """
        try decision.write(to: data.appending(path: "program-access.json"), atomically: true, encoding: .utf8)
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
        let accounts = try ProcessRunner.run(
            URL(filePath: "/usr/bin/python3"), [host, "-i", "getAccounts"], environment: desktop.environment)
        desktop.outputs += [accounts.stdout, accounts.stderr]
        XCTAssertEqual(accounts.status, 0, accounts.stderr)
        let listed = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(accounts.stdout.utf8)) as? [String: Any], accounts.stdout)
        let names = ((listed["accounts"] as? [[String: Any]]) ?? []).compactMap { $0["username"] as? String }
        XCTAssertEqual(names, [Self.alex], accounts.stdout)

        let answer = try ProcessRunner.run(
            URL(filePath: "/usr/bin/python3"), [host, "-i", "acquirePrtSsoCookie", "-s", desktop.base + "/"],
            environment: desktop.environment)
        XCTAssertEqual(answer.status, 0, answer.stderr)
        let reply = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(answer.stdout.utf8)) as? [String: Any], answer.stdout)
        let item = try XCTUnwrap((reply["cookieItems"] as? [[String: Any]])?.first, answer.stdout.prefix(300).description)
        let name = try XCTUnwrap(item["cookieName"] as? String)
        let cookie = try XCTUnwrap(item["cookieContent"] as? String)
        XCTAssertEqual(name, "x-ms-RefreshTokenCredential")

        // What the extension then does: the header on the sign-in service's request. A code, no page.
        let authorize =
            "\(desktop.base)/organizations/oauth2/v2.0/authorize?client_id=\(Self.azureCLI)&response_type=code"
            + "&redirect_uri=http%3A%2F%2Flocalhost&scope=openid%20profile"
        let signedIn = try blocking { [browser = HeadlessBrowser.sockets(base: URL(string: desktop.base)!, codes: desktop.lines)] in
            try await browser.get(authorize, header: name, value: cookie)
        }
        XCTAssertEqual(signedIn.status, 302, signedIn.text.prefix(300).description)
        XCTAssertTrue(signedIn.location?.hasPrefix("http://localhost/?code=") == true, signedIn.location ?? "")
        XCTAssertTrue(desktop.lines.all.contains("prt-sso \(deviceID) \(Self.azureCLI)"), "\(desktop.lines.all)")
        // The broker's call log names the cookie, never holds it.
        let home = URL(filePath: try XCTUnwrap(desktop.environment["HOME"]))
        let log = try String(contentsOf: home.appending(path: ".local/state/sesame/broker-calls.log"), encoding: .utf8)
        XCTAssertTrue(log.contains("acquirePrtSsoCookie") && log.contains("a single sign-on cookie"), log)
        XCTAssertFalse(log.contains(cookie.prefix(40)))
        service.terminate()
        service.waitUntilExit()
        try assertNoSecretPrinted(desktop)
    }

    /// A `sesame-service` already running (D-Bus starts it at the session's first call) sees
    /// `sesame device register` and `sesame device remove` at once: the browser's `getAccounts`
    /// names the computer's user right after the register; a service that served the
    /// registration names nobody right after the remove, and gives no cookie from the removed PRT.
    func testARunningServiceSeesRegisterAndRemoveAtOnce() throws {
        let desktop = try Desktop(cleanup: &cleanup)
        let python = URL(filePath: "/usr/bin/python3").resolvingSymlinksInPath().path
        let data = URL(filePath: try XCTUnwrap(desktop.environment["XDG_DATA_HOME"])).appending(path: "sesame")
        let decision = """
            {"version":2,"decisions":[{"program":{"kind":"executable","id":"\(python)"},"accountType":"device",\
            "homeAccountID":"\(Self.alexHomeAccountID)","username":"\(Self.alex)","resource":"",\
            "scopes":["Sign you in to every site and app of your organization as this computer (single sign-on)"],\
            "allowed":true,"decidedAt":"2026-11-20T09:00:00Z"}]}
            """
        try decision.write(to: data.appending(path: "program-access.json"), atomically: true, encoding: .utf8)
        let broker = "com.microsoft.identity.broker1"
        func startService() throws -> Process {
            let service = Process()
            service.executableURL = try Repository.product("sesame-service")
            service.arguments = ["--emulator", desktop.base]
            service.environment = desktop.environment
            service.standardOutput = FileHandle.nullDevice
            service.standardError = FileHandle.nullDevice
            try service.start()
            cleanup.append { if service.isRunning { service.terminate() } }
            XCTAssertTrue(
                Eventually.holdsBlocking(within: .seconds(60)) { desktop.keyring.bus.hasOwner(broker) },
                "sesame-service never served the broker")
            return service
        }
        let host = Repository.root.appending(path: "Tests/ThirdParty/linux-entra-sso/linux-entra-sso.py").path
        func accounts() throws -> [String] {
            let answer = try ProcessRunner.run(
                URL(filePath: "/usr/bin/python3"), [host, "-i", "getAccounts"], environment: desktop.environment)
            desktop.outputs += [answer.stdout, answer.stderr]
            let listed = try JSONSerialization.jsonObject(with: Data(answer.stdout.utf8)) as? [String: Any]
            return ((listed?["accounts"] as? [[String: Any]]) ?? []).compactMap { $0["username"] as? String }
        }

        let first = try startService()
        XCTAssertEqual(try accounts(), [], "not registered yet")
        _ = try desktop.register()
        XCTAssertEqual(try accounts(), [Self.alex], "the running service did not see the registration")
        try assertNoSecretPrinted(desktop)

        // A service that has served the registration (started after it, should the first not have seen it).
        first.terminate()
        first.waitUntilExit()
        XCTAssertTrue(Eventually.holdsBlocking(within: .seconds(30)) { !desktop.keyring.bus.hasOwner(broker) })
        let second = try startService()
        XCTAssertEqual(try accounts(), [Self.alex])
        let removed = try desktop.sesame("device", "remove")
        XCTAssertEqual(removed.status, 0, removed.stderr)
        XCTAssertEqual(try accounts(), [], "the running service still names the removed computer's user")
        let cookie = try ProcessRunner.run(
            URL(filePath: "/usr/bin/python3"), [host, "-i", "acquirePrtSsoCookie", "-s", desktop.base + "/"],
            environment: desktop.environment)
        XCTAssertFalse(cookie.stdout.contains("cookieContent"), "the running service gave a cookie from the removed PRT")
        second.terminate()
        second.waitUntilExit()
    }

    /// With a TPM the user may use, the keys are made in it and never leave it: what the keyring
    /// keeps is of no use without that TPM, every app still signs in with no page, and a TPM gone
    /// is said in words, with what to do.
    func testWithATPMTheKeysStayInItAndEveryAppStillSignsInWithNoPage() throws {
        let tpm = try SoftwareTPM()
        cleanup.append { tpm.stop() }
        let desktop = try Desktop(cleanup: &cleanup, tpm: tpm)
        let deviceID = try desktop.register()
        let status = try desktop.sesame("device", "status")
        XCTAssertTrue(
            status.stdout.contains(
                "keys:          in the TPM (\(tpm.tcti)), which also seals the PRT's session key; the Secret Service keeps"),
            status.stdout)
        XCTAssertTrue(try desktop.sesame("doctor").stdout.contains("in the TPM (\(tpm.tcti))"))
        let kept = try XCTUnwrap(try desktop.keyring.lookup(group: "device-identity", kind: "device"))
        let form = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(kept.utf8)) as? [String: Any])
        XCTAssertEqual(form["keyStore"] as? String, "tpm")
        XCTAssertNil(form["sessionKey"], "the session key is kept sealed by the TPM only")
        XCTAssertFalse(kept.contains("PRIVATE KEY"))

        let typed = try desktop.typed("token --account-type msalGraph")
        XCTAssertEqual(typed.status, 0, typed.shown)
        let token = try XCTUnwrap(typed.token, typed.shown)
        let claims = try XCTUnwrap(Base64URLDecoding.json(String(token.split(separator: ".")[1])))
        XCTAssertEqual(claims["deviceid"] as? String, deviceID)
        XCTAssertTrue(desktop.lines.all.contains("prt-token \(deviceID) \(Self.meClient)"), "\(desktop.lines.all)")
        try assertNoSecretPrinted(desktop)

        // The TPM gone: the next app's sign-in says why the computer's sign-in cannot be used.
        tpm.stop()
        let failed = try desktop.typed("token --account-type myGraphService")
        XCTAssertNotEqual(failed.status, 0, failed.shown)
        XCTAssertTrue(failed.shown.contains("This computer's keys are in its TPM (\(tpm.tcti)), which could not be used"), failed.shown)
        XCTAssertNotNil(try desktop.keyring.lookup(group: "device-identity", kind: "device"), "a TPM away is no reason to forget")
        XCTAssertTrue(failed.shown.contains("Sign-ins show their pages until they can be used again."), failed.shown)
        XCTAssertTrue(try desktop.sesame("device", "status").stdout.contains("device id:     \(deviceID)"))

        // Back (the computer restarted): the PRT serves again — removing asks the organization with it.
        try tpm.start()
        let removed = try desktop.sesame("device", "remove")
        XCTAssertEqual(removed.status, 0, removed.stderr)
        XCTAssertTrue(desktop.lines.all.contains("device-removed \(deviceID)"), "\(desktop.lines.all)")
        XCTAssertNil(try desktop.keyring.lookup(group: "device-identity", kind: "device"))
    }

    /// The kept PRT, session key and keys appear in no output, no line of the emulator's and no
    /// file under the test's home.
    private func assertNoSecretPrinted(_ desktop: Desktop) throws {
        let kept = try XCTUnwrap(try desktop.keyring.lookup(group: "device-identity", kind: "device"), "no device identity in the keyring")
        let form = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(kept.utf8)) as? [String: Any])
        // The session key as it is (software keys), or as the TPM sealed it.
        let secrets = ["primaryRefreshToken", "sessionKey", "sealedSessionKey", "keys"].compactMap { form[$0] as? String }
        XCTAssertEqual(secrets.count, 3, "\(form.keys.sorted())")
        let home = URL(filePath: try XCTUnwrap(desktop.environment["HOME"]))
        let files = FileManager.default.enumerator(atPath: home.path)?.compactMap { $0 as? String } ?? []
        for secret in secrets.map({ String($0.prefix(40)) }) {
            for output in desktop.outputs + desktop.lines.all { XCTAssertFalse(output.contains(secret), "a device secret was printed") }
            for file in files {
                let text = (try? String(contentsOf: home.appending(path: file), encoding: .utf8)) ?? ""
                XCTAssertFalse(text.contains(secret), "a device secret is in the file \(file)")
            }
        }
    }

    func testWithoutAKeyringTheComputerCannotBeRegistered() throws {
        let scratch = Repository.temporaryDirectory("sesame-device-files")
        defer { try? FileManager.default.removeItem(at: scratch) }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = scratch.path
        environment["SESAME_REQUIRE_SECRET_SERVICE"] = nil
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
        let result = try ProcessRunner.run(
            Repository.product("sesame"), ["device", "register", "--yes", "--emulator", "http://127.0.0.1:9"], environment: environment)
        XCTAssertEqual(result.status, 4, result.stderr)
        XCTAssertTrue(result.stderr.contains("never kept in a file, so it cannot be registered"), result.stderr)
    }
}

/// `body`'s result, waited for on this thread (a synchronous test's, where programs it starts are
/// reaped as they end).
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try box.result!.get()
}

final class ResultBox<T>: @unchecked Sendable { var result: Result<T, any Error>? }

/// A JWT segment's JSON.
enum Base64URLDecoding {
    static func json(_ segment: String) -> [String: Any]? {
        var base64 = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    }
}
