import Foundation
import IdentityEmulator
import SesameCore
import SesameSamples
import SesameTestSupport
import XCTest

@testable import SesameGtk

/// What a user sees in the window when the tenant is strict: settings at /common for a
/// single-tenant app, an organization where only an administrator may consent, and MFA demanded
/// on a refresh.
final class RealTenantFlowTests: GUITestCase {
    typealias IDs = SignInPageIDs

    func testASingleTenantAppAtCommonSaysToUseTheTenantsAuthority() throws {
        try MainActor.assumeIsolated {
            let gui = try GUIHarness(
                settingsFile: "directory.plist", sample: .directory,
                adjust: { settings in
                    guard case .graph(var graph) = settings else { return settings }
                    graph.authority = graph.authority.deletingLastPathComponent().appending(path: "common")
                    return .graph(graph)
                })
            defer { gui.close() }
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.signInError != nil }, "no error shown")
            let text = try XCTUnwrap(gui.signInError)
            XCTAssertTrue(text.contains("tenant's authority"), text)
            XCTAssertTrue(text.contains("AADSTS50194"), text)
        }
    }

    func testWhereOnlyAnAdministratorMayConsentTheUserIsToldWhomToAsk() throws {
        try MainActor.assumeIsolated {
            let gui = try GUIHarness(settingsFile: "directory.plist", sample: .directory, configure: { $0.userConsent = .adminOnly })
            defer { gui.close() }
            gui.waitForSignInPage("sign-in")
            gui.act(GUIHarness.fill(IDs.userName, "alex@contoso.onmicrosoft.com"), "password page")
            gui.act(GUIHarness.fill(IDs.password, IDs.demoPassword), "stay signed in")
            gui.act("document.getElementById('\(IDs.primaryButton)').click();", "Need admin approval")
            // WebKit sets the title a moment after the load ends: wait for it.
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 15) { gui.signInPage?.title == "Need admin approval" },
                "the page is \(gui.signInPage?.title ?? "none")")
            gui.clickInPage(IDs.primaryButton)  // "Return to the application without granting consent"
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.signInError != nil }, "no error shown")
            let text = try XCTUnwrap(gui.signInError)
            XCTAssertTrue(text.contains("administrator"), text)
            XCTAssertTrue(text.contains("AADSTS90094"), text)
        }
    }

    func testMFADemandedOnARefreshAsksForTheSMSCodeAtTheNextCall() throws {
        try MainActor.assumeIsolated {
            // Access tokens live two minutes, so every call refreshes.
            let gui = try GUIHarness(settingsFile: "me.plist", sample: .me, configure: { $0.accessTokenLifetime = 120 })
            defer { gui.close() }
            gui.click(button: "Call Microsoft Graph")
            gui.waitForSignInPage("first call")
            gui.signInAsAlexUpToConsent()
            gui.clickInPage(IDs.primaryButton)
            let log = try XCTUnwrap(gui.window.window.find(TextLog.self, named: L("Log")))
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { log.text.contains("→ 200") }, log.text)

            // Conditional Access now demands MFA of alex: the refresh is refused with a claims
            // challenge, and the sign-in that follows asks for the SMS code.
            try gui.emulatorControl("users/alex@contoso.onmicrosoft.com/requireMFA")
            gui.click(button: "Call Microsoft Graph")
            gui.waitForSignInPage("the sign-in the challenge asks for")
            gui.act(GUIHarness.fill(IDs.userName, "alex@contoso.onmicrosoft.com"), "password page")
            gui.act(GUIHarness.fill(IDs.password, IDs.demoPassword), "SMS page")
            let code = try XCTUnwrap(gui.codes.code(for: "alex@contoso.onmicrosoft.com"), "no SMS code: the claims did not ask for MFA")
            gui.act(GUIHarness.fill(IDs.smsCode, code, click: IDs.smsContinue), "stay signed in")
            gui.clickInPage(IDs.primaryButton)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { log.text.components(separatedBy: "→ 200").count == 3 }, log.text)
            XCTAssertTrue(log.text.contains("multi-factor authentication"), log.text)
        }
    }
    /// A fault the user runs into: Graph answers a proxy's HTML error page. The page says so in a
    /// sentence with the status and offers Retry; once the fault is gone, Retry shows the people.
    func testAGraphOutageIsASentenceWithRetryAndRetryRecovers() throws {
        try MainActor.assumeIsolated {
            let gui = try GUIHarness(settingsFile: "directory.plist", sample: .directory)
            defer { gui.close() }
            gui.waitForSignInPage("sign-in")
            gui.signInAsAlexUpToConsent()
            gui.clickInPage(SignInPageIDs.primaryButton)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.peopleRows > 0 }, "the directory never filled")

            try gui.emulatorControl("faults", body: "graph:html")
            gui.search("meg")
            let status = try XCTUnwrap(gui.window.window.find(Label.self, named: L("Search status")))
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 15) { status.text.contains("(HTTP 502") }, "the outage was not told: \(status.text)")
            XCTAssertTrue(status.text.hasPrefix(L("Microsoft Graph is not available right now; try again later.")), status.text)

            try gui.emulatorControl("faults", body: "")
            gui.click(button: "Retry")
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 15) { gui.people?.text(row: 0, column: 0)?.hasPrefix("Meg") == true },
                "Retry did not search again: \(status.text)")
        }
    }
    /// The token endpoint down (an injected 503) when the code is redeemed: the error bar says so
    /// with the service's code and offers Retry; with the fault gone, Retry ends signed in.
    func testATokenEndpointOutageAtSignInIsAnErrorWithRetryAndRetryRecovers() throws {
        try MainActor.assumeIsolated {
            let gui = try GUIHarness(settingsFile: "directory.plist", sample: .directory)
            defer { gui.close() }
            gui.waitForSignInPage("sign-in")
            gui.signInAsAlexUpToConsent()
            try gui.emulatorControl("faults", body: "token:status=503")
            gui.clickInPage(SignInPageIDs.primaryButton)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.signInError != nil }, "no error shown")
            let text = try XCTUnwrap(gui.signInError)
            XCTAssertTrue(text.contains("(AADSTS90033)"), text)
            XCTAssertEqual(gui.peopleRows, 0)

            try gui.emulatorControl("faults", body: "")
            gui.click(button: "Retry sign-in")
            // alex has a session and has consented: the retry signs in without a page.
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.peopleRows > 0 }, "Retry did not end signed in")
            XCTAssertNil(gui.signInError)
        }
    }
    /// The task API down (an injected 503) when sam adds a task: the Tasks page says so, keeps
    /// the text, and Add again once the API is back adds the task exactly once.
    func testATaskAPIOutageKeepsTheTextAndAddAgainAddsItOnce() throws {
        try MainActor.assumeIsolated {
            let gui = try GUIHarness(settingsFile: "tasks.plist", sample: .tasks)
            defer { gui.close() }
            gui.waitForSignInPage("B2C sign-in")
            gui.signInPage?.evaluateJavaScript(
                "document.getElementById('\(SignInPageIDs.b2cSignInName)').value='sam@example.com';"
                    + "document.getElementById('\(SignInPageIDs.b2cPassword)').value='\(SignInPageIDs.demoPassword)';"
                    + "document.getElementById('\(SignInPageIDs.b2cNext)').click();")
            @MainActor func renderedRows() -> Int? {
                gui.trace.events.last { $0.name == "list-rendered" && $0.fields.contains { $0 == ("view", "tasks") } }
                    .flatMap { event in event.fields.first { $0.0 == "rows" }.flatMap { Int($0.1) } }
            }
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 15) { gui.has("token-acquired") && renderedRows() == 0 }, "sam's empty list never showed")
            let entry = try XCTUnwrap(gui.window.window.find(Entry.self, named: L("New task")))
            let status = try XCTUnwrap(gui.window.window.find(Label.self, named: L("Tasks status")))

            try gui.emulatorControl("faults", body: "tasks:status=503")
            entry.text = "Water the plants"
            gui.click(button: "Add the task")
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 15) { status.text.contains("(HTTP 503)") }, "the outage was not told: \(status.text)")
            XCTAssertEqual(entry.text, "Water the plants", "the text was lost")

            try gui.emulatorControl("faults", body: "")
            gui.click(button: "Add the task")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { renderedRows() == 1 }, "the task did not appear: \(status.text)")
            XCTAssertEqual(entry.text, "", "the added task's text stayed in the field")
        }
    }
    /// The sign-in pages down (an injected 503): the view shows the service's own error page;
    /// the user cancels, and once the service is back "Sign in" works.
    func testSignInPagesDownShowTheServicesPageAndSignInWorksOnceTheyAreBack() throws {
        try MainActor.assumeIsolated {
            let gui = try GUIHarness(
                settingsFile: "directory.plist", sample: .directory, configure: { $0.faults = try! FaultPlan.parse("signin:status=503") })
            defer { gui.close() }
            gui.waitForSignInPage("the failing authorize page")
            let shown = MainLoopBridge.spin(timeout: 10) {
                gui.signInPage?.title == "Sign in to your account" && gui.has("page-loaded")
            }
            XCTAssertTrue(shown, "the service's error page did not show")
            XCTAssertNil(gui.signInError, "a page the service sent is not Sesame's error")
            gui.click(button: "Cancel sign-in")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { !gui.signInShown && gui.has("sign-in-cancelled") })

            try gui.emulatorControl("faults", body: "")
            gui.click(button: "Sign in")
            gui.waitForSignInPage("sign-in after the outage")
            gui.signInAsAlexUpToConsent()
            gui.clickInPage(SignInPageIDs.primaryButton)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.peopleRows > 0 }, "sign-in did not work once the pages were back")
        }
    }
}
