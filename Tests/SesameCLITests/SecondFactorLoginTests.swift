import Foundation
import SesameTestSupport
import XCTest

/// `sesame login` in both of its ways — the desktop's default browser, and a device code typed at
/// another device — through the second factors Entra asks for today, against the real emulator
/// and the real `sesame`: Microsoft Authenticator's number matching (the person reads the number
/// off the page and types it on the phone), an authenticator app's code, and a Temporary Access
/// Pass that onboards a user who then sets up the app. Afterwards `sesame token` works, and the
/// token says how the user proved who they are (`amr`).
final class SecondFactorLoginTests: XCTestCase {
    static let megan = "megan@contoso.onmicrosoft.com"
    static let alex = "alex@contoso.onmicrosoft.com"

    private var cleanup: [() -> Void] = []
    private var base = ""
    private var codes = OneTimeCodes()
    private var environment: [String: String] = [:]
    private var home = URL(filePath: "/nonexistent")

    override func tearDown() {
        for step in cleanup.reversed() { step() }
        cleanup = []
    }

    /// The emulator (one-second device code polls), what it prints (SMS codes, pushes, refusals),
    /// and `sesame`'s store of its own (files: no session bus).
    private func start(_ extra: [String] = []) throws {
        let emulator = try EmulatorProcess(["--port", "0", "--users", "50", "--device-code-interval", "1"] + extra)
        cleanup.append { emulator.stop() }
        base = String(try XCTUnwrap(emulator.readLine()).split(separator: " ").last!)
        let codes = OneTimeCodes()
        self.codes = codes
        Thread.detachNewThread {
            while let line = emulator.readLine() { codes.record(line) }
        }
        home = Repository.temporaryDirectory("sesame-second-factor")
        cleanup.append { [home] in try? FileManager.default.removeItem(at: home) }
        environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = home.appending(path: "data").path
        environment["XDG_STATE_HOME"] = home.appending(path: "state").path
        environment["SESAME_REQUIRE_SECRET_SERVICE"] = nil
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
    }

    /// A browser at another device (or the desktop's), over sockets to the emulator.
    private func newBrowser() -> HeadlessBrowser { HeadlessBrowser.sockets(base: URL(string: base)!, codes: codes) }

    /// An administrator's call to the emulator (`POST /.emulator/…`); its JSON answer.
    @discardableResult
    private func administrator(_ path: String, _ json: String) async throws -> [String: Any] {
        let answer = try await newBrowser().send(
            "/.emulator/\(path)", method: .post, headers: [.contentType: "application/json"], body: json)
        XCTAssertEqual(answer.status.code, 200, "\(path): \(answer.text)")
        return answer.json
    }

    /// `sesame login --device-code`: the person types the code printed at another device and
    /// signs in there as `user` with `browser` (which answers the second factor as a person with
    /// a phone). The last page the person saw, and how `sesame login` ended.
    private func deviceCodeLogin(
        as user: String, with browser: HeadlessBrowser
    ) async throws -> (
        last: HeadlessBrowser.Page, ended: (status: Int32, stdout: String, stderr: String)
    ) {
        let login = try DeviceCodeLoginTests.RunningProgram(
            Repository.product("sesame"), ["login", "--account-type", "myGraphService", "--device-code", "--emulator", base],
            environment: environment)
        let userCode = try login.waitForStderr(DeviceCodeLoginTests.codePattern)
        let last = try await browser.verifyDevice(userCode: userCode, as: user)
        return (last, login.finish())
    }

    /// `sesame login` without --device-code: it opens the desktop's default browser, here a
    /// stand-in registered the desktop way (a .desktop file named in mimeapps.list) that only
    /// writes down the address it was given; the person then signs in at that address as `user`
    /// with `browser`, whose last answer redirects to Sesame's loopback address, which the
    /// browser follows. The page Sesame's loopback answered, and how `sesame login` ended.
    private func systemBrowserLogin(
        as user: String, with browser: HeadlessBrowser
    ) async throws -> (
        last: HeadlessBrowser.Page, ended: (status: Int32, stdout: String, stderr: String)
    ) {
        let applications = home.appending(path: "data/applications")
        let config = home.appending(path: "config")
        try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        let opened = home.appending(path: "opened.txt")
        let script = home.appending(path: "default-browser.sh")
        try """
        #!/bin/sh
        printf '%s\\n' "$1" > "\(opened.path).part" && mv "\(opened.path).part" "\(opened.path)"

        """.write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        try """
        [Desktop Entry]
        Type=Application
        Name=Test Browser (writes the address down)
        Exec=\(script.path) %u
        NoDisplay=true

        """.write(to: applications.appending(path: "sesame-test-browser.desktop"), atomically: true, encoding: .utf8)
        try """
        [Default Applications]
        x-scheme-handler/http=sesame-test-browser.desktop
        x-scheme-handler/https=sesame-test-browser.desktop

        """.write(to: config.appending(path: "mimeapps.list"), atomically: true, encoding: .utf8)
        var environment = environment
        environment["XDG_CONFIG_HOME"] = config.path

        let login = try DeviceCodeLoginTests.RunningProgram(
            Repository.product("sesame"), ["login", "--account-type", "myGraphService", "--emulator", base], environment: environment)
        // Until the browser was started with the address, or `sesame login` ended without starting it.
        let address = Eventually.valueBlocking(within: .seconds(60), every: .milliseconds(50)) { () -> String? in
            if let text = try? String(contentsOf: opened, encoding: .utf8) { return text.trimmingCharacters(in: .whitespacesAndNewlines) }
            return login.process.isRunning ? nil : ""
        }
        guard let address, !address.isEmpty else {
            let ended = login.finish()
            throw TestSupportError("sesame login opened no browser (\(ended.status)): \(ended.stderr)")
        }
        XCTAssertTrue(address.hasPrefix("\(base)/"), "the browser was sent elsewhere: \(address)")
        let redirect = try await browser.signIn(user, authorize: address)
        guard let loopback = redirect.location, loopback.hasPrefix("http://127.0.0.1:") else {
            return (redirect, login.finish())
        }
        let last = try await browser.get(loopback)
        return (last, login.finish())
    }

    /// `sesame token` for the account just signed in, and the `amr` of the access token it prints.
    private func tokenAMR(file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let token = try ProcessRunner.run(
            Repository.product("sesame"), ["token", "--account-type", "myGraphService", "--emulator", base], environment: environment)
        XCTAssertEqual(token.status, 0, token.stderr, file: file, line: line)
        let parts = token.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".")
        guard parts.count == 3 else { throw TestSupportError("not a JWT: \(token.stdout.prefix(40))") }
        var payload = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        payload += String(repeating: "=", count: (4 - payload.count % 4) % 4)
        guard let data = Data(base64Encoded: payload),
            let claims = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let amr = claims["amr"] as? [String]
        else { throw TestSupportError("the access token has no amr") }
        return amr
    }

    /// The number `user`'s phone was asked to approve, as the emulator printed it (`authenticator-push`).
    private func pushedNumbers(_ user: String) -> [String] {
        codes.all.filter { $0.hasPrefix("authenticator-push \(user) ") }.map { String($0.split(separator: " ")[2]) }
    }

    // MARK: Microsoft Authenticator's number matching

    func testMeganApprovesTheNumberOnHerPhoneForADeviceCodeSignIn() async throws {
        try start()
        try await administrator("users/\(Self.megan)/methods", #"{"methods": ["microsoftAuthenticator"]}"#)
        let browser = newBrowser()
        let (last, ended) = try await deviceCodeLogin(as: Self.megan, with: browser)
        XCTAssertTrue(last.contains("You have signed in to the Sesame Directory application on your device."), last.text)
        XCTAssertEqual(pushedNumbers(Self.megan).count, 1, "megan's phone was not asked once: \(codes.all)")
        XCTAssertNil(codes.code(for: Self.megan), "megan was texted a code although she uses the app")
        XCTAssertEqual(ended.status, 0, ended.stderr)
        XCTAssertEqual(ended.stdout, "Signed in as Megan Bowen <megan@contoso.onmicrosoft.com> (myGraphService).\n")
        XCTAssertEqual(try tokenAMR(), ["pwd", "rsa", "mfa"])
    }

    func testMeganApprovesTheNumberOnHerPhoneForASignInInTheSystemBrowser() async throws {
        try start()
        try await administrator("users/\(Self.megan)/methods", #"{"methods": ["microsoftAuthenticator"]}"#)
        let browser = newBrowser()
        let (last, ended) = try await systemBrowserLogin(as: Self.megan, with: browser)
        XCTAssertTrue(last.contains("You can close this tab"), last.text.prefix(400).description)
        XCTAssertEqual(pushedNumbers(Self.megan).count, 1, "megan's phone was not asked once: \(codes.all)")
        XCTAssertTrue(browser.visited.contains { $0.hasSuffix("/login") }, "the sign-in pages were not walked: \(browser.visited)")
        XCTAssertEqual(ended.status, 0, ended.stderr)
        XCTAssertEqual(ended.stdout, "Signed in as Megan Bowen <megan@contoso.onmicrosoft.com> (myGraphService).\n")
        XCTAssertTrue(ended.stderr.contains("Continue the sign-in in your browser"), ended.stderr)
        XCTAssertEqual(try tokenAMR(), ["pwd", "rsa", "mfa"])
    }

    // MARK: An authenticator app's code

    func testAlexTypesHisAuthenticatorAppsCodeInTheSystemBrowser() async throws {
        try start()
        try await administrator("users/\(Self.alex)/methods", #"{"methods": ["softwareOath"]}"#)
        try await administrator(
            "policy",
            #"{"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [{"users": ["alex@contoso.onmicrosoft.com"], "require": "mfa"}]}}}"#
        )
        let browser = newBrowser()
        let (last, ended) = try await systemBrowserLogin(as: Self.alex, with: browser)
        XCTAssertTrue(last.contains("You can close this tab"), last.text.prefix(400).description)
        XCTAssertNil(codes.code(for: Self.alex), "alex was texted a code although he has only the app")
        XCTAssertEqual(ended.status, 0, ended.stderr)
        XCTAssertEqual(ended.stdout, "Signed in as Alex Wilber <alex@contoso.onmicrosoft.com> (myGraphService).\n")
        XCTAssertEqual(try tokenAMR(), ["pwd", "otp", "mfa"])
    }

    func testAlexTypesHisAuthenticatorAppsCodeForADeviceCodeSignIn() async throws {
        try start()
        try await administrator("users/\(Self.alex)/methods", #"{"methods": ["softwareOath"]}"#)
        try await administrator(
            "policy",
            #"{"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [{"users": ["alex@contoso.onmicrosoft.com"], "require": "mfa"}]}}}"#
        )
        let (last, ended) = try await deviceCodeLogin(as: Self.alex, with: newBrowser())
        XCTAssertTrue(last.contains("You have signed in to the Sesame Directory application on your device."), last.text)
        XCTAssertEqual(ended.status, 0, ended.stderr)
        XCTAssertEqual(try tokenAMR(), ["pwd", "otp", "mfa"])
    }

    // MARK: A Temporary Access Pass, then the app set up

    func testAlexOnboardsWithATemporaryAccessPassBySettingUpTheAppForADeviceCodeSignIn() async throws {
        try start()
        let issued = try await administrator(
            "users/\(Self.alex)/temporaryAccessPass", #"{"lifetimeInMinutes": 60, "isUsableOnce": true}"#)
        let browser = newBrowser()
        browser.temporaryAccessPass = try XCTUnwrap(issued["temporaryAccessPass"] as? String)
        browser.authenticatorToActivate = "Alex's Pixel"
        let (last, ended) = try await deviceCodeLogin(as: Self.alex, with: browser)
        XCTAssertTrue(last.contains("You have signed in to the Sesame Directory application on your device."), last.text)
        XCTAssertEqual(pushedNumbers(Self.alex).count, 1, "the app's set-up sent no test notification: \(codes.all)")
        XCTAssertEqual(ended.status, 0, ended.stderr)
        XCTAssertEqual(ended.stdout, "Signed in as Alex Wilber <alex@contoso.onmicrosoft.com> (myGraphService).\n")
        XCTAssertEqual(try tokenAMR(), ["mfa"])
        let methods = try await newBrowser().get("/.emulator/users/\(Self.alex)/methods").json
        XCTAssertEqual(methods["methods"] as? [String], ["microsoftAuthenticator"], "\(methods)")
        XCTAssertEqual(methods["microsoftAuthenticator"] as? String, "Alex's Pixel")
    }

    // MARK: An authentication strength the user's methods cannot meet

    /// The other device's page refuses (Error Code 50074, naming what would work). The emulator
    /// does not yet pass a page's refusal to the device polling with its code (Entra does: the
    /// device hears the AADSTS error), so today `sesame login` hears nothing until the code
    /// expires, and says so; the sentence that names what works (SesameCore's, for AADSTS50074
    /// with a strength) waits for the emulator to refuse the device too.
    func testPhishingResistantMFARefusesMegansDeviceCodeSignInOnThePage() async throws {
        try start()
        try await administrator(
            "policy",
            #"{"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [{"users": ["megan@contoso.onmicrosoft.com"], "#
                + #""require": {"authenticationStrength": "phishingResistantMfa"}}]}}}"#)
        let (last, ended) = try await deviceCodeLogin(as: Self.megan, with: newBrowser())
        XCTAssertTrue(last.contains("Error Code: 50074"), last.text.prefix(600).description)
        XCTAssertTrue(last.contains("a passkey or security key (FIDO2)"), last.text.prefix(600).description)
        XCTAssertNil(codes.code(for: Self.megan), "a text message was sent although it cannot meet the strength")
        XCTAssertEqual(ended.status, 1, ended.stderr)
        // The page's refusal reaches the waiting device, as with Entra: Sesame says what would work.
        XCTAssertTrue(ended.stderr.contains("a passkey or a security key (FIDO2)"), ended.stderr)
        XCTAssertTrue(ended.stderr.contains("Authentication strength: Phishing-resistant MFA"), ended.stderr)
        XCTAssertTrue(ended.stderr.contains("Nothing was stored."), ended.stderr)
        XCTAssertEqual(ended.stdout, "")
        let token = try ProcessRunner.run(
            Repository.product("sesame"), ["token", "--account-type", "myGraphService", "--emulator", base], environment: environment)
        XCTAssertNotEqual(token.status, 0, "a token without the strength's sign-in: \(token.stdout.prefix(20))")
    }
}
