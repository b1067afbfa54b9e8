import Foundation
import FoundationNetworking
import IdentityEmulator
import SesameCore
import SesameGIO
import SesameSamples
import SesameTestSupport
import SesameWindowModel
import XCTest

@testable import SesameGtk

/// The second factors organizations ask for, met in the window's real browser engine as a person
/// meets them: the number on the screen typed into the phone, an authenticator app's code, a
/// Temporary Access Pass that sets up Microsoft Authenticator, and a phishing-resistant rule that
/// an SMS cannot satisfy. The phone is the test's: it answers through the emulator's controls.
final class SecondFactorWindowTests: GUITestCase {
    typealias IDs = SignInPageIDs
    static let alex = "alex@contoso.onmicrosoft.com"
    static let megan = "megan@contoso.onmicrosoft.com"
    /// The authenticator app's secret in the tests' policy (RFC 4648's example, twice).
    static let appSecret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"

    /// The window on the Directory sample against a tenant with `policy`.
    @MainActor
    private static func window(_ policy: String, screenshots: String) throws -> GUIHarness {
        let policies = try TenantPolicies.parse(Data(policy.utf8))
        let gui = try GUIHarness(
            settingsFile: "directory.plist", sample: .directory, screenshotPrefix: screenshots, configure: { $0.policies = policies })
        gui.waitForSignInPage("sign-in")
        return gui
    }

    /// The text of the page's element `id`, once the page shows it.
    @MainActor
    private static func read(_ gui: GUIHarness, _ id: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        var text: String?
        XCTAssertTrue(
            MainLoopBridge.spin(timeout: 15) {
                gui.signInPage?.evaluateJavaScript(
                    "(function(){var e=document.getElementById('\(id)');return e?e.textContent.trim():'';})()"
                ) { text = $0 }
                return !(text ?? "").isEmpty
            }, "the page shows no #\(id) (it shows '\(gui.signInPage?.title ?? "nothing")')", file: file, line: line)
        return try XCTUnwrap(text, file: file, line: line)
    }

    /// What a phone's camera reads off the window: the QR code the page shows, decoded by zbar's
    /// `zbarimg` from the window's picture (taken again until the page has painted it).
    @MainActor
    private static func scanQRCode(_ gui: GUIHarness) throws -> String {
        let zbarimg = "/usr/bin/zbarimg"
        guard FileManager.default.isExecutableFile(atPath: zbarimg) else {
            throw TestSupportError("zbarimg is missing: install the Debian package zbar-tools (`make deps` does)")
        }
        let picture = Repository.temporaryDirectory("qr-scan").appending(path: "window.png")
        var text: String?
        XCTAssertTrue(
            MainLoopBridge.spin(timeout: 15) {
                guard (try? Screenshot.save(gui.window.window, to: picture)) != nil,
                    let read = try? ProcessRunner.run(
                        URL(filePath: zbarimg), ["--raw", "-q", "-Sdisable", "-Sqrcode.enable", picture.path]),
                    read.status == 0
                else { return false }
                text = read.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                return true
            }, "no QR code could be read off the window")
        return try XCTUnwrap(text)
    }

    /// POSTs `body` to the emulator's control `path` and returns its JSON answer.
    @MainActor
    private static func control(_ gui: GUIHarness, _ path: String, _ body: String) throws -> [String: Any] {
        final class Outcome: @unchecked Sendable { var data: Data? }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        var request = URLRequest(url: gui.base.appending(path: ".emulator/\(path)"))
        request.httpMethod = "POST"
        request.httpBody = Data(body.utf8)
        URLSession.shared.dataTask(with: request) { data, _, _ in
            outcome.data = data
            done.signal()
        }.resume()
        XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { done.wait(timeout: .now()) == .success })
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: XCTUnwrap(outcome.data)) as? [String: Any], "POST \(path)")
    }

    /// "Stay signed in?" → Yes, consent → Accept, and the Directory fills.
    @MainActor
    private static func finish(_ gui: GUIHarness) {
        gui.waitForSignInPage(titled: "Stay signed in?", "stay signed in")
        gui.act("document.getElementById('\(IDs.primaryButton)').click();", "consent")
        gui.clickInPage(IDs.primaryButton)
        XCTAssertTrue(MainLoopBridge.spin(timeout: 60) { gui.has("token-acquired") }, "no token")
        XCTAssertTrue(MainLoopBridge.spin(timeout: 60) { gui.peopleRows > 0 }, "the directory list stayed empty")
    }

    func testMeganApprovesTheNumberHerScreenShowsOnHerPhone() throws {
        try MainActor.assumeIsolated {
            let gui = try Self.window(
                #"{"tenants": {"contoso.onmicrosoft.com": {"registeredMethods": {"megan@contoso.onmicrosoft.com": "#
                    + #"{"methods": ["microsoftAuthenticator", "sms"]}}}}}"#, screenshots: "number-matching-")
            defer { gui.close() }
            gui.act(GUIHarness.fill(IDs.userName, Self.megan), "password page")
            gui.act(GUIHarness.fill(IDs.password, IDs.demoPassword), "Approve sign in request")
            // She reads the number off the screen and types it into Authenticator.
            let number = try Self.read(gui, IDs.displaySign)
            XCTAssertNotNil(Int(number), number)
            XCTAssertEqual(try Self.read(gui, "pageTitle"), "Approve sign in request")
            gui.screenshot("approve")
            XCTAssertFalse(gui.has("token-acquired"))
            let answer = try Self.control(gui, "users/\(Self.megan)/authenticator", #"{"answer": "approve", "number": \#(number)}"#)
            XCTAssertEqual(answer["outcome"] as? String, "approved")
            // The page, which was waiting on the phone, moves on by itself.
            Self.finish(gui)
            gui.screenshot("directory")
        }
    }

    func testAUserWithOnlyAnAuthenticatorAppTypesItsCode() throws {
        try MainActor.assumeIsolated {
            let gui = try Self.window(
                #"{"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [{"users": ["alex@contoso.onmicrosoft.com"], "#
                    + #""require": "mfa"}], "registeredMethods": {"alex@contoso.onmicrosoft.com": {"methods": ["softwareOath"], "#
                    + #""softwareOathSecretKey": "\#(Self.appSecret)"}}}}}"#, screenshots: "app-code-")
            defer { gui.close() }
            gui.act(GUIHarness.fill(IDs.userName, Self.alex), "password page")
            gui.act(GUIHarness.fill(IDs.password, IDs.demoPassword), "Enter code")
            let description = try Self.read(gui, "idDiv_SAOTCC_Description")
            XCTAssertEqual(description, "Enter the code displayed in the authenticator app on your mobile device")
            gui.screenshot("enter-code")
            // The code his app shows now.
            let code = TOTP.code(secret: try TOTPSecret(base32: Self.appSecret), at: Date())
            gui.act(GUIHarness.fill(IDs.smsCode, code, click: IDs.smsContinue), "stay signed in")
            Self.finish(gui)
        }
    }

    func testATemporaryAccessPassOnboardsAlexWhoSetsUpMicrosoftAuthenticator() throws {
        try MainActor.assumeIsolated {
            let gui = try Self.window(#"{"tenants": {}}"#, screenshots: "access-pass-")
            defer { gui.close() }
            // His administrator gives him a one-time pass.
            let issued = try Self.control(gui, "users/\(Self.alex)/temporaryAccessPass", #"{"isUsableOnce": true}"#)
            let pass = try XCTUnwrap(issued["temporaryAccessPass"] as? String)
            gui.act(GUIHarness.fill(IDs.userName, Self.alex), "Enter Temporary Access Pass")
            XCTAssertEqual(try Self.read(gui, "pageTitle"), "Enter Temporary Access Pass")
            gui.act(GUIHarness.fill(IDs.accessPass, pass), "Keep your account secure")
            gui.screenshot("keep-your-account-secure")
            gui.act("document.getElementById('\(IDs.primaryButton)').click();", "Scan the QR code")
            // The phone's camera reads the QR code off the screen (zbar reads the window's picture).
            gui.screenshot("scan-the-qr-code")
            let scanned = try Self.scanQRCode(gui)
            XCTAssertTrue(scanned.hasPrefix("phonefactor://activate_account?code="), scanned)
            let code = try XCTUnwrap(URLComponents(string: scanned)?.queryItems?.first { $0.name == "code" }?.value)
            XCTAssertEqual(code, try Self.read(gui, IDs.activationCode), "the QR code and the code under \"Can't scan image?\" differ")
            _ = try Self.control(gui, "authenticator/activate", #"{"code": "\#(code)", "device": "Alex's phone"}"#)
            gui.act("document.getElementById('\(IDs.primaryButton)').click();", "Let's try it out")
            let number = try Self.read(gui, IDs.displaySign)
            let answer = try Self.control(gui, "users/\(Self.alex)/authenticator", #"{"answer": "approve", "number": \#(number)}"#)
            XCTAssertEqual(answer["outcome"] as? String, "approved")
            gui.waitForSignInPage(titled: "Keep your account secure", "Success!")
            XCTAssertEqual(try Self.read(gui, "pageTitle"), "Success!")
            gui.act("document.getElementById('\(IDs.primaryButton)').click();", "stay signed in")
            Self.finish(gui)
        }
    }
}
