import Foundation
import IdentityEmulator
import SesameCore
import SesameGIO
import SesameSamples
import SesameTestSupport
import SesameWindowModel
import XCTest

@testable import SesameGtk

/// When the tenant's own page refuses the sign-in in the window — Conditional Access, a device
/// rule, a locked or disabled account, a user of another organization — Sesame reads the page's
/// troubleshooting details and says, above it, what that means and the one thing to do; "Copy
/// details for your IT help desk" puts the ids the emulator logged for that request on the clipboard.
final class RefusalFlowTests: GUITestCase {
    typealias IDs = SignInPageIDs
    static let alex = "alex@contoso.onmicrosoft.com"

    /// The window on the Directory sample against a tenant with `policy`; alex types his user name
    /// and password (`user` and the password page, for another organization's user).
    @MainActor
    private static func refusedSignIn(_ policy: String, user: String = alex, screenshots: String? = nil) throws -> GUIHarness {
        let policies = try TenantPolicies.parse(Data(policy.utf8))
        let gui = try GUIHarness(
            settingsFile: "directory.plist", sample: .directory, screenshotPrefix: screenshots, configure: { $0.policies = policies })
        gui.waitForSignInPage("sign-in")
        gui.act(GUIHarness.fill(IDs.userName, user), "password page")
        gui.act(GUIHarness.fill(IDs.password, IDs.demoPassword), "the tenant's refusal")
        return gui
    }

    @MainActor
    private static func refusalText(_ gui: GUIHarness) -> String? {
        gui.window.window.find(Label.self, named: L("Why the sign-in was refused")).flatMap { $0.isMapped ? $0.text : nil }
    }

    @MainActor
    private static func waitForRefusal(_ gui: GUIHarness, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        XCTAssertTrue(
            MainLoopBridge.spin(timeout: 15) { self.refusalText(gui) != nil },
            "no refusal shown over \(gui.signInPage?.title ?? "no page")",
            file: file, line: line)
        return try XCTUnwrap(Self.refusalText(gui), file: file, line: line)
    }

    /// The request id the emulator logged for its latest refusal with `code`.
    @MainActor
    private static func loggedRequestID(_ gui: GUIHarness, _ code: String) -> String? {
        gui.codes.all.last { $0.hasPrefix("refused \(code) ") }?.split(separator: " ").drop { $0 != "request-id" }.dropFirst().first
            .map(String.init)
    }

    func testABlockedSignInSaysWhyAndCopiesTheHelpDesksDetails() throws {
        try MainActor.assumeIsolated {
            let gui = try Self.refusedSignIn(
                #"{"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [{"require": "block"}]}}}"#, screenshots: "refusal-")
            defer { gui.close() }
            let text = try Self.waitForRefusal(gui)
            gui.screenshot("blocked")
            XCTAssertTrue(text.contains("access policy blocks this sign-in"), text)
            XCTAssertTrue(text.contains("AADSTS53003"), text)
            WebView.copyToClipboard("")
            gui.click(button: L("Copy details for your IT help desk"))
            let copied = try XCTUnwrap(WebView.clipboardText)
            XCTAssertTrue(copied.contains("Error code: AADSTS53003"), copied)
            XCTAssertTrue(copied.contains("Request Id: \(Self.loggedRequestID(gui, "AADSTS53003") ?? "?")"), copied)
            XCTAssertTrue(copied.contains("App id: 6731de76-14a6-49ae-97bc-6eba6914391e"), copied)
            XCTAssertTrue(copied.contains("Tenant: contoso.onmicrosoft.com"), copied)
            XCTAssertFalse(copied.contains("Passw0rd") || copied.contains("eyJ"), "a secret reached the clipboard")
        }
    }

    func testADeviceRuleSuggestsContinuingInTheBrowser() throws {
        try MainActor.assumeIsolated {
            let gui = try Self.refusedSignIn(
                #"{"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [{"require": "managedDevice"}]}}}"#)
            defer { gui.close() }
            let text = try Self.waitForRefusal(gui)
            XCTAssertTrue(text.contains("only from a device it manages"), text)
            XCTAssertTrue(gui.window.signIn.suggestsBrowser, "Continue in your browser is not the suggested way on")
            gui.click(button: L("Continue the sign-in in your web browser"))
            // The system-browser path: the embedded sign-in is handed off, and the sample starts it
            // again in the default browser (a managed browser may pass the device rule).
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 10) { gui.trace.events.contains { $0.name == "sign-in-moved-to-browser" } },
                "the sign-in did not move to the browser: \(gui.trace.events.map(\.name))")
        }
    }

    func testAPhishingResistantStrengthRefusesTheSMSCodeAndSaysWhatWouldWork() throws {
        try MainActor.assumeIsolated {
            // megan has only her phone (SMS): a policy that requires phishing-resistant MFA cannot be met.
            let gui = try Self.refusedSignIn(
                #"{"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [{"require": {"authenticationStrength": "phishingResistantMfa"}}]}}}"#,
                user: "megan@contoso.onmicrosoft.com", screenshots: "refusal-")
            defer { gui.close() }
            let text = try Self.waitForRefusal(gui)
            gui.screenshot("authentication-strength")
            XCTAssertTrue(text.contains("a passkey or a security key (FIDO2), Windows Hello for Business or a certificate"), text)
            XCTAssertTrue(text.contains("A text message, a code or an Authenticator approval is not enough"), text)
            XCTAssertTrue(gui.window.signIn.suggestsBrowser, "Continue in your browser is not the suggested way on")
            WebView.copyToClipboard("")
            gui.click(button: L("Copy details for your IT help desk"))
            let copied = try XCTUnwrap(WebView.clipboardText)
            XCTAssertTrue(copied.contains("Authentication strength: Phishing-resistant MFA"), copied)
            XCTAssertFalse(copied.contains("Passw0rd") || copied.contains("eyJ"), "a secret reached the clipboard")
        }
    }

    func testALockedAccountSaysWhenToTryAgain() throws {
        try MainActor.assumeIsolated {
            let gui = try Self.refusedSignIn(
                #"{"tenants": {"contoso.onmicrosoft.com": {"accounts": {"alex@contoso.onmicrosoft.com": {"state": "locked"}}}}}"#)
            defer { gui.close() }
            let text = try Self.waitForRefusal(gui)
            XCTAssertTrue(text.contains("Wait a few minutes, then try again"), text)
            XCTAssertTrue(text.contains("AADSTS50053"), text)
        }
    }

    func testADisabledAccountSendsThePersonToTheHelpDesk() throws {
        try MainActor.assumeIsolated {
            let gui = try Self.refusedSignIn(
                #"{"tenants": {"contoso.onmicrosoft.com": {"accounts": {"alex@contoso.onmicrosoft.com": {"state": "disabled"}}}}}"#)
            defer { gui.close() }
            let text = try Self.waitForRefusal(gui)
            XCTAssertTrue(text.contains("Your account is disabled"), text)
        }
    }

    func testAnotherOrganizationsUserIsToldToUseTheirAccountHere() throws {
        try MainActor.assumeIsolated {
            let gui = try Self.refusedSignIn(
                #"{"tenants": {"contoso.onmicrosoft.com": {"otherTenantDomains": ["partner.example"]}}}"#, user: "kim@partner.example")
            defer { gui.close() }
            let text = try Self.waitForRefusal(gui)
            XCTAssertTrue(text.contains("account of another organization"), text)
            XCTAssertTrue(text.contains("AADSTS50020"), text)
        }
    }

    func testAnUnregisteredRedirectSaysToRunTheDoctor() throws {
        try MainActor.assumeIsolated {
            let gui = try GUIHarness(
                settingsFile: "directory.plist", sample: .directory,
                adjust: { settings in
                    guard case .graph(var graph) = settings else { return settings }
                    graph.redirectURI = URL(string: "https://login.microsoftonline.com/common/oauth2/not-registered")!
                    return .graph(graph)
                })
            defer { gui.close() }
            let text = try Self.waitForRefusal(gui)
            XCTAssertTrue(text.contains("Run sesame doctor"), text)
            XCTAssertTrue(text.contains("AADSTS50011"), text)
        }
    }

    func testAnAppNotInTheTenantSaysToRunTheDoctor() throws {
        try MainActor.assumeIsolated {
            let gui = try GUIHarness(
                settingsFile: "directory.plist", sample: .directory,
                adjust: { settings in
                    guard case .graph(var graph) = settings else { return settings }
                    graph.clientID = "0badc0de-0000-4000-8000-000000000000"
                    return .graph(graph)
                })
            defer { gui.close() }
            let text = try Self.waitForRefusal(gui)
            XCTAssertTrue(text.contains("not registered in your organization"), text)
            XCTAssertTrue(text.contains("AADSTS700016"), text)
        }
    }
}
