import Foundation
import SesameTestSupport
import Synchronization
import XCTest

/// When the tenant says no, from the command line: each refusal the emulator's tenant policy can
/// put up reaches `sesame token` or `sesame login` as Sesame's sentence, the one action that helps,
/// and the details an IT help desk asks for — holding the ids the emulator logged for that very
/// request — and `sesame doctor` shows the latest again.
final class RefusalTests: XCTestCase {
    static let alex = "alex@contoso.onmicrosoft.com"
    static let directoryApp = "6731de76-14a6-49ae-97bc-6eba6914391e"

    private var cleanup: [() -> Void] = []
    private var base = ""
    private var codes = OneTimeCodes()
    private let announced = Announced()

    /// What the emulator printed, line by line, as it comes.
    final class Announced: Sendable {
        private let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        func withLock<T>(_ body: (inout [String]) -> T) -> T { lines.withLock { body(&$0) } }
    }
    private var environment: [String: String] = [:]

    override func tearDown() {
        for step in cleanup.reversed() { step() }
        cleanup = []
    }

    private func start(_ extra: [String] = []) throws {
        let emulator = try EmulatorProcess(
            ["--port", "0", "--users", "50", "--device-code-interval", "1", "--access-token-lifetime", "2"] + extra)
        cleanup.append { emulator.stop() }
        base = String(try XCTUnwrap(emulator.readLine()).split(separator: " ").last!)
        let codes = OneTimeCodes()
        self.codes = codes
        Thread.detachNewThread { [announced] in
            while let line = emulator.readLine() {
                codes.record(line)
                announced.append(line)
            }
        }
        let folder = Repository.temporaryDirectory("sesame-refusals")
        cleanup.append { try? FileManager.default.removeItem(at: folder) }
        environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = folder.appending(path: "data").path
        environment["XDG_STATE_HOME"] = folder.appending(path: "state").path
        environment["SESAME_REQUIRE_SECRET_SERVICE"] = nil
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
    }

    private var browser: HeadlessBrowser { HeadlessBrowser.sockets(base: URL(string: base)!, codes: codes) }

    private func setPolicy(_ json: String) async throws {
        let answer = try await browser.send("/.emulator/policy", method: .post, headers: [:], body: json)
        XCTAssertEqual(answer.status.code, 200, answer.text)
    }

    /// `sesame login --device-code`, alex typing the code at "another device"; `page` gets the
    /// last page the pages walk reached.
    private func deviceLogin(
        registeringPhone phone: String? = nil, then page: ((HeadlessBrowser.Page, HeadlessBrowser) async throws -> Void)? = nil
    ) async throws
        -> (status: Int32, stdout: String, stderr: String)
    {
        let login = try DeviceCodeLoginTests.RunningProgram(
            Repository.product("sesame"), ["login", "--account-type", "myGraphService", "--device-code", "--emulator", base],
            environment: environment)
        guard let userCode = try? login.waitForStderr(DeviceCodeLoginTests.codePattern) else { return login.finish() }
        let browser = browser
        browser.phoneToRegister = phone
        let last = try await browser.verifyDevice(userCode: userCode, as: Self.alex)
        try await page?(last, browser)
        return login.finish()
    }

    private func sesame(_ arguments: [String]) throws -> ProcessRunner.Result {
        try ProcessRunner.run(Repository.product("sesame"), arguments + ["--emulator", base], environment: environment)
    }

    /// The request id the emulator logged for its latest refusal with `code`.
    private func loggedRequestID(_ code: String) -> String? {
        let line = announced.withLock { $0.last { $0.hasPrefix("refused \(code) ") } }
        return line?.split(separator: " ").drop { $0 != "request-id" }.dropFirst().first.map(String.init)
    }

    /// Alex signs in; then the tenant's `policy` applies, and `sesame token` asks again.
    private func tokenRefused(by policy: String) async throws -> ProcessRunner.Result {
        try start()
        let signedIn = try await deviceLogin()
        XCTAssertEqual(signedIn.status, 0, signedIn.stderr)
        try await setPolicy(policy)
        // A 2-second access token has less left than `sesame token` asks of one it prints
        // (AccountStore.minimumRemainingValidity): the next one is a refresh, which the policy meets.
        return try sesame(["token", "--account-type", "myGraphService"])
    }

    private func assertHelpDeskDetails(_ text: String, code: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(text.contains("Details for your IT help desk:"), text, file: file, line: line)
        XCTAssertTrue(text.contains("Error code: \(code)"), text, file: file, line: line)
        if let id = loggedRequestID(code) {
            XCTAssertTrue(
                text.contains("Request Id: \(id)"), "not the request the emulator logged (\(id)): \(text)", file: file, line: line)
        } else {
            XCTFail("the emulator logged no refusal \(code)", file: file, line: line)
        }
        XCTAssertTrue(text.contains("Correlation Id: "), text, file: file, line: line)
        XCTAssertTrue(text.contains("Timestamp: "), text, file: file, line: line)
        XCTAssertTrue(text.contains("App id: \(Self.directoryApp)"), text, file: file, line: line)
        XCTAssertTrue(text.contains("Tenant: contoso.onmicrosoft.com"), text, file: file, line: line)
        XCTAssertFalse(text.contains("eyJ"), "a token reached the text", file: file, line: line)
    }

    // MARK: At the token endpoint (a refresh)

    func testConditionalAccessBlockSaysSoWithTheHelpDesksDetailsAndDoctorKeepsThem() async throws {
        let token = try await tokenRefused(
            by: #"{"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [{"name": "Block Linux", "require": "block"}]}}}"#)
        XCTAssertEqual(token.status, 2, token.stderr)
        XCTAssertEqual(token.stdout, "")
        XCTAssertTrue(token.stderr.contains("Your organization's access policy blocks this sign-in."), token.stderr)
        assertHelpDeskDetails(token.stderr, code: "AADSTS53003")
        let doctor = try sesame(["doctor"])
        XCTAssertTrue(doctor.stdout.contains("The last refusal (send these details to your IT help desk)"), doctor.stdout)
        XCTAssertTrue(doctor.stdout.contains("Request Id: \(loggedRequestID("AADSTS53003") ?? "?")"), doctor.stdout)
    }

    func testAManagedDeviceRuleOffersTheBrowser() async throws {
        let token = try await tokenRefused(
            by: #"{"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [{"require": "managedDevice"}]}}}"#)
        XCTAssertEqual(token.status, 2, token.stderr)
        XCTAssertTrue(token.stderr.contains("only from a device it manages"), token.stderr)
        XCTAssertTrue(token.stderr.contains("Sign in with your browser"), token.stderr)
        assertHelpDeskDetails(token.stderr, code: "AADSTS530003")
    }

    func testACompliantDeviceRuleOffersTheBrowserToo() async throws {
        let token = try await tokenRefused(
            by: #"{"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [{"require": "compliantDevice"}]}}}"#)
        XCTAssertEqual(token.status, 2, token.stderr)
        XCTAssertTrue(token.stderr.contains("Sign in with your browser"), token.stderr)
        assertHelpDeskDetails(token.stderr, code: "AADSTS53000")
    }

    func testAPhishingResistantStrengthSaysWhatWorksAndOffersTheBrowserOrAnotherDevice() async throws {
        let token = try await tokenRefused(
            by:
                #"{"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [{"require": {"authenticationStrength": "phishingResistantMfa"}}]}}}"#
        )
        XCTAssertEqual(token.status, 2, token.stderr)
        XCTAssertEqual(token.stdout, "")
        XCTAssertTrue(
            token.stderr.contains("a passkey or a security key (FIDO2), Windows Hello for Business or a certificate"), token.stderr)
        XCTAssertTrue(token.stderr.contains("`sesame login` without --device-code"), token.stderr)
        XCTAssertTrue(token.stderr.contains("`sesame login --device-code`"), token.stderr)
        XCTAssertTrue(token.stderr.contains("Error code: AADSTS50076"), token.stderr)
        XCTAssertTrue(token.stderr.contains("Authentication strength: Phishing-resistant MFA"), token.stderr)
        XCTAssertFalse(token.stderr.contains("capolids") || token.stderr.contains("eyJ"), token.stderr)
        let doctor = try sesame(["doctor"])
        XCTAssertTrue(doctor.stdout.contains("Authentication strength: Phishing-resistant MFA"), doctor.stdout)
    }

    func testMFARegistrationSaysWhereToRegister() async throws {
        let token = try await tokenRefused(
            by: #"{"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [{"require": "mfaRegistration"}]}}}"#)
        XCTAssertEqual(token.status, 2, token.stderr)
        XCTAssertTrue(token.stderr.contains("Register a second way to sign in: https://aka.ms/mfasetup"), token.stderr)
    }

    func testAnMFARuleAsksForASignInAndTheSignInAsksForTheCode() async throws {
        let token = try await tokenRefused(by: #"{"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [{"require": "mfa"}]}}}"#)
        XCTAssertEqual(token.status, 2, token.stderr)
        XCTAssertTrue(token.stderr.contains("another sign-in step (multi-factor authentication)"), token.stderr)
        XCTAssertTrue(token.stderr.contains("AADSTS50076"), token.stderr)
        // The next sign-in asks alex, who registered no second factor, for a phone and then its
        // code (the pages' walk does both, as he would), and tokens flow again.
        let again = try await deviceLogin(registeringPhone: "+1 425 555 0100")
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertNotNil(codes.code(for: Self.alex), "the sign-in did not ask for the SMS code")
        XCTAssertEqual(try sesame(["token", "--account-type", "myGraphService"]).status, 0)
    }

    func testMFARegistrationAtSignInWalksThroughTheRegistrationPages() async throws {
        try start()
        try await setPolicy(#"{"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [{"require": "mfaRegistration"}]}}}"#)
        let login = try await deviceLogin { page, browser in
            guard page.contains("More information required"), let ctx = page.hidden("ctx"), let action = page.formAction else {
                return XCTFail("no More information required page: \(page.text.prefix(300))")
            }
            let phone = try await browser.post(action, form: [("ctx", ctx), ("step", "proofup")])
            XCTAssertTrue(phone.contains("Keep your account secure"), phone.text.prefix(300).description)
            let refused = try await browser.post(action, form: [("ctx", ctx), ("step", "proofup-phone"), ("phone", "12")])
            XCTAssertTrue(refused.contains("Enter a valid phone number."), refused.text.prefix(300).description)
            let sms = try await browser.post(action, form: [("ctx", ctx), ("step", "proofup-phone"), ("phone", "+1 425 555 0100")])
            let code = try XCTUnwrap(self.codes.code(for: Self.alex), "no SMS code after the registration: \(sms.text.prefix(300))")
            let kmsi = try await browser.post(action, form: [("ctx", ctx), ("step", "otc"), ("otc", code)])
            var last = kmsi
            if let next = kmsi.hidden("ctx"), let nextAction = kmsi.formAction {
                last = try await browser.post(nextAction, form: [("ctx", next), ("step", "kmsi"), ("kmsi", "yes")])
            }
            if last.contains("permissionList"), let next = last.hidden("ctx"), let nextAction = last.formAction {
                _ = try await browser.post(nextAction, form: [("ctx", next), ("step", "consent"), ("consent", "accept")])
            }
        }
        XCTAssertEqual(login.status, 0, login.stderr)
        XCTAssertEqual(try sesame(["token", "--account-type", "myGraphService"]).status, 0, "registered and signed in with MFA")
    }

    func testALockedAccountSaysWhenToTryAgain() async throws {
        let token = try await tokenRefused(
            by: #"{"tenants": {"contoso.onmicrosoft.com": {"accounts": {"alex@contoso.onmicrosoft.com": {"state": "locked"}}}}}"#)
        XCTAssertEqual(token.status, 2, token.stderr)
        XCTAssertTrue(token.stderr.contains("Wait a few minutes, then try again"), token.stderr)
        assertHelpDeskDetails(token.stderr, code: "AADSTS50053")
    }

    func testADisabledAccountSendsThePersonToTheHelpDesk() async throws {
        let token = try await tokenRefused(
            by: #"{"tenants": {"contoso.onmicrosoft.com": {"accounts": {"alex@contoso.onmicrosoft.com": {"state": "disabled"}}}}}"#)
        XCTAssertEqual(token.status, 2, token.stderr)
        XCTAssertTrue(token.stderr.contains("Your account is disabled."), token.stderr)
        assertHelpDeskDetails(token.stderr, code: "AADSTS50057")
    }

    /// `sesame token` typed at a terminal while Sesame's account service runs goes through it: the
    /// refusal reads the same as when the command meets it itself — the sentence, the help desk
    /// (never a sign-in command, for a disabled account), the details of the very request the
    /// emulator logged — and `sesame doctor` shows it as the latest.
    func testThroughTheAccountServiceARefusalReadsAndIsKeptAsWithout() async throws {
        let direct = try await tokenRefused(
            by: #"{"tenants": {"contoso.onmicrosoft.com": {"accounts": {"alex@contoso.onmicrosoft.com": {"state": "disabled"}}}}}"#)
        let firstRequest = try XCTUnwrap(loggedRequestID("AADSTS50057"))
        // The same refusal through the service, on a session bus of the test's own.
        var environment = environment
        let bus = try SessionBus(environment: environment)
        cleanup.append { bus.stop() }
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        let service = try DeviceCodeLoginTests.RunningProgram(
            Repository.product("sesame"), ["--service", "--emulator", base], environment: environment)
        cleanup.append { service.process.terminate() }
        // gdbus waits for the name's owner itself (its bound only a guard against a service that never comes).
        let serving = try ProcessRunner.run(
            URL(filePath: "/usr/bin/gdbus"), ["wait", "--session", "--timeout", "120", "org.sesame.Sesame"], environment: environment)
        XCTAssertEqual(serving.status, 0, "the service did not take its name: \(service.stderr)")
        let typed = try Terminal.type(
            "\(try Repository.product("sesame").path) token --account-type myGraphService", environment: environment)
        XCTAssertEqual(typed.status, 2, typed.shown)
        let secondRequest = try XCTUnwrap(loggedRequestID("AADSTS50057"))
        XCTAssertNotEqual(firstRequest, secondRequest, "the service did not ask the identity service")
        for text in [direct.stderr, typed.shown] {
            XCTAssertTrue(text.contains("Your account is disabled."), text)
            XCTAssertFalse(text.contains("sesame login"), "a disabled account was told to sign in: \(text)")
        }
        assertHelpDeskDetails(typed.shown, code: "AADSTS50057")
        // Kept for `sesame doctor`, as the command keeps what it meets itself.
        let doctor = try ProcessRunner.run(Repository.product("sesame"), ["doctor", "--emulator", base], environment: self.environment)
        XCTAssertTrue(doctor.stdout.contains(secondRequest), "doctor shows an older refusal: \(doctor.stdout)")
    }

    func testAnExpiredPasswordAsksForASignInAndThePageTakesANewPassword() async throws {
        let token = try await tokenRefused(
            by: #"{"tenants": {"contoso.onmicrosoft.com": {"accounts": {"alex@contoso.onmicrosoft.com": {"state": "passwordExpired"}}}}}"#)
        XCTAssertEqual(token.status, 2, token.stderr)
        XCTAssertTrue(token.stderr.contains("Your password has expired. Sign in again"), token.stderr)
        // The sign-in asks for a new password ("Update your password"), then goes on.
        let again = try await deviceLogin { page, browser in
            guard page.contains("Update your password"), let ctx = page.hidden("ctx"), let action = page.formAction else {
                return XCTFail("no Update your password page: \(page.text.prefix(300))")
            }
            let next = try await browser.post(
                action,
                form: [
                    ("ctx", ctx), ("step", "password-update"), ("oldpasswd", "Passw0rd!"), ("newpasswd", "Sp1ng-Summer-26"),
                    ("confirmnewpasswd", "Sp1ng-Summer-26"),
                ])
            XCTAssertTrue(
                next.contains("Stay signed in") || next.contains("staySignedIn") || next.contains("KmsiCheckboxField"),
                next.text.prefix(300).description)
            if let ctx = next.hidden("ctx"), let action = next.formAction {
                _ = try await browser.post(action, form: [("ctx", ctx), ("step", "kmsi"), ("kmsi", "yes")])
            }
        }
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(try sesame(["token", "--account-type", "myGraphService"]).status, 0)
    }

    // MARK: At sign-in

    func testNoPublicClientFlowsSaysToUseTheBrowser() async throws {
        try start()
        try await setPolicy(#"{"tenants": {"contoso.onmicrosoft.com": {"publicClientFlows": false}}}"#)
        let login = try await deviceLogin()
        XCTAssertEqual(login.status, 1, login.stderr)
        XCTAssertTrue(login.stderr.contains("does not allow signing in with a code"), login.stderr)
        XCTAssertTrue(login.stderr.contains("Error code: AADSTS7000218"), login.stderr)
    }

    func testApprovalRequestsAreSentAndTheUserIsToldWhatHappensNext() async throws {
        try start()
        try await setPolicy(#"{"tenants": {"contoso.onmicrosoft.com": {"userConsent": "adminOnlyWithRequests"}}}"#)
        let login = try await deviceLogin { page, browser in
            guard page.contains("Approval required"), let ctx = page.hidden("ctx"), let action = page.formAction else {
                return XCTFail("no Approval required page: \(page.text.prefix(300))")
            }
            _ = try await browser.post(
                action, form: [("ctx", ctx), ("step", "admin-request"), ("approval", "request"), ("justification", "Mail on Linux")])
        }
        XCTAssertEqual(login.status, 1, login.stderr)
        XCTAssertTrue(login.stderr.contains("Ask for approval on the sign-in page"), login.stderr)
        XCTAssertTrue(login.stderr.contains("/v2.0/adminconsent?client_id=\(Self.directoryApp)"), login.stderr)
        XCTAssertTrue(login.stderr.contains("Error code: AADSTS90095"), login.stderr)
        let requests = try await browser.get("/.emulator/adminConsentRequests")
        XCTAssertTrue(requests.text.contains(#""user":"alex@contoso.onmicrosoft.com""#), requests.text)
        XCTAssertTrue(requests.text.contains("Mail on Linux"), requests.text)
        // The link, opened by the administrator: alex may not grant it; Megan, an administrator, does.
        let link = try XCTUnwrap(login.stderr.firstMatch(of: /https?:\/\/[^\/\s]+(\/\S+\/v2\.0\/adminconsent\?\S+)/)?.1)
        let page = try await browser.get(String(link))
        XCTAssertTrue(page.contains("Sign in as an administrator"), page.text.prefix(300).description)
        let action = try XCTUnwrap(page.formAction)
        let notAdmin = try await browser.post(action, form: [("step", "signin"), ("loginfmt", Self.alex), ("passwd", "Passw0rd!")])
        XCTAssertTrue(notAdmin.contains("is not an administrator"), notAdmin.text.prefix(400).description)
        let megan = [("loginfmt", "megan@contoso.onmicrosoft.com"), ("passwd", "Passw0rd!")]
        let permissions = try await browser.post(action, form: [("step", "signin")] + megan)
        XCTAssertTrue(permissions.contains("Permissions requested"), permissions.text.prefix(400).description)
        let granted = try await browser.post(action, form: [("step", "accept")] + megan)
        XCTAssertTrue(granted.contains("Permissions granted"), granted.text.prefix(400).description)
        let approved = try await deviceLogin()
        XCTAssertEqual(approved.status, 0, approved.stderr)
    }

    func testDoctorSaysWhatToFixInTheAppRegistration() throws {
        try start()
        let doctor = try sesame(["doctor"])
        XCTAssertTrue(
            doctor.stdout.contains("OK   app registration: the sign-in page opens for client \(Self.directoryApp)"), doctor.stdout)
        let folder = Repository.temporaryDirectory("settings")
        let original = try String(contentsOf: Repository.settings("directory.plist"), encoding: .utf8)
        let wrongRedirect = folder.appending(path: "wrong-redirect.plist")
        try original.replacing("common/oauth2/nativeclient", with: "common/oauth2/elsewhere").write(
            to: wrongRedirect, atomically: true, encoding: .utf8)
        let unknownApp = folder.appending(path: "unknown-app.plist")
        try original.replacing(Self.directoryApp, with: "0badc0de-0000-4000-8000-000000000000").write(
            to: unknownApp, atomically: true, encoding: .utf8)
        let redirect = try sesame(["doctor", "--settings", wrongRedirect.path])
        XCTAssertEqual(redirect.status, 1)
        XCTAssertTrue(
            redirect.stdout.contains(
                "FIX  app registration: The app registration (client \(Self.directoryApp)) does not list the redirect URI https://login.microsoftonline.com/common/oauth2/elsewhere (AADSTS50011)"
            ), redirect.stdout)
        let unknown = try sesame(["doctor", "--settings", unknownApp.path])
        XCTAssertEqual(unknown.status, 1)
        XCTAssertTrue(
            unknown.stdout.contains(
                "FIX  app registration: No app with client id 0badc0de-0000-4000-8000-000000000000 is registered in this tenant (AADSTS700016)"
            ), unknown.stdout)
    }

    func testABadPolicyFileIsRefusedWithWhatToFix() throws {
        let file = Repository.temporaryDirectory("policy").appending(path: "policy.json")
        try #"{"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [{"require": "sometimes"}]}}}"#.write(
            to: file, atomically: true, encoding: .utf8)
        let run = try ProcessRunner.run(Repository.product("identity-emulator"), ["--port", "0", "--policy", file.path])
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.stderr.contains("--policy \(file.path):"), run.stderr)
        XCTAssertTrue(run.stderr.contains("conditionalAccess"), run.stderr)
    }
}
