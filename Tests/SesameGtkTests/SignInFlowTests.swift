import CGtkWebKit
import Foundation
import SesameCore
import XCTest

@testable import SesameGtk

/// The tutorial flows through the real window and the real web view, against the identity
/// emulator. The Directory flow saves each screen as a PNG in `$SESAME_SCREENSHOTS` (default
/// `.build/screenshots`).
final class SignInFlowTests: XCTestCase {
    func testMeganSignsInThroughTheRealViewWithHerSMSCodeAndTheDirectoryFills() throws {
        try MainActor.assumeIsolated {
            let gui = try GUIHarness(settingsFile: "directory.plist", sample: .directory, screenshotPrefix: "")
            defer { gui.close() }

            // The sample has no account: sign-in opens by itself, on the emulator's username page.
            gui.waitForSignInPage("first sign-in")
            XCTAssertTrue(gui.window.signIn.view.hostBarText.contains("127.0.0.1"))
            gui.screenshot("username")

            gui.act(GUIHarness.fill("i0116", "megan@contoso.onmicrosoft.com"), "password page")
            gui.screenshot("password")
            gui.act(GUIHarness.fill("i0118", "Passw0rd!"), "SMS page")
            let code = try XCTUnwrap(gui.codes.code(for: "megan@contoso.onmicrosoft.com"), "the emulator sent no SMS code")
            gui.screenshot("sms-code")
            gui.act(GUIHarness.fill("idTxtBx_SAOTCC_OTC", code, click: "idSubmit_SAOTCC_Continue"), "stay signed in")
            gui.screenshot("stay-signed-in")
            gui.act("document.getElementById('idSIButton9').click();", "consent")
            gui.screenshot("consent")
            gui.click("idSIButton9")

            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.has("redirect-intercepted") }, "the redirect was not intercepted")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.has("token-acquired") }, "no token")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { (gui.window.directoryPage?.rowCount ?? 0) > 0 && gui.has("list-rendered") },
                          "the directory list stayed empty")
            XCTAssertFalse(gui.window.signIn.view.isShown)
            gui.screenshot("directory")

            let rendered = try XCTUnwrap(gui.trace.events.last { $0.name == "list-rendered" })
            XCTAssertTrue(rendered.fields.contains { $0.0 == "rows" && (Int($0.1) ?? 0) > 0 })
            // The inspector's witnesses: the token exchange and the Graph call, with status and latency.
            let token = try XCTUnwrap(gui.trace.events.first { $0.name == "token-request" })
            XCTAssertTrue(token.fields.contains { $0 == ("status", "200") })
            XCTAssertTrue(gui.trace.events.contains { $0.name == "api-call" && $0.fields.contains { $0.0 == "url" && $0.1.contains("/v1.0/users") } })
            for event in gui.trace.events {
                XCTAssertFalse(event.jsonLine.contains(code), "the SMS code reached the trace")
                XCTAssertFalse(event.jsonLine.contains("Passw0rd"), "the password reached the trace")
            }
        }
    }

    func testDeclinedConsentShowsTheServicesErrorWithRetryAndRetryWorks() throws {
        try MainActor.assumeIsolated {
            let gui = try GUIHarness(settingsFile: "directory.plist", sample: .directory)
            defer { gui.close() }
            gui.waitForSignInPage("first sign-in")
            gui.act(GUIHarness.fill("i0116", "alex@contoso.onmicrosoft.com"), "password page")
            gui.act(GUIHarness.fill("i0118", "Passw0rd!"), "stay signed in")
            gui.act("document.getElementById('idSIButton9').click();", "consent")
            gui.click("idBtn_Back")

            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.window.signInErrorText != nil }, "no error shown")
            let text = try XCTUnwrap(gui.window.signInErrorText)
            XCTAssertTrue(text.contains("AADSTS65004"), text)
            XCTAssertTrue(gui.has("sign-in-failed"))
            XCTAssertEqual(gui.window.directoryPage?.rowCount, 0)

            let loaded = gui.pagesLoaded
            gui.window.chooseAfterError(retry: true)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.window.signIn.view.isShown && gui.pagesLoaded > loaded }, "Retry did not reopen sign-in")
            gui.act(GUIHarness.fill("i0116", "alex@contoso.onmicrosoft.com"), "password page")
            gui.act(GUIHarness.fill("i0118", "Passw0rd!"), "stay signed in")
            gui.act("document.getElementById('idSIButton9').click();", "consent")
            gui.click("idSIButton9")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { (gui.window.directoryPage?.rowCount ?? 0) > 0 }, "Retry did not end signed in")
        }
    }

    func testClosingSignInCancelsCleanlyAndSearchAsYouTypeShowsTheLatestAnswer() throws {
        try MainActor.assumeIsolated {
            let gui = try GUIHarness(settingsFile: "directory.plist", sample: .directory)
            defer { gui.close() }
            gui.waitForSignInPage("first sign-in")
            gui.window.signIn.cancel()
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { !gui.window.signIn.isSigningIn })
            XCTAssertFalse(gui.window.signIn.view.isShown)
            XCTAssertNil(gui.window.signInErrorText, "cancelling is not an error")
            XCTAssertEqual(gui.window.directoryPage?.rowCount, 0)

            // Sign in after all (the sample asks again when shown).
            gui.window.showSampleAgain()
            gui.waitForSignInPage("second sign-in")
            gui.act(GUIHarness.fill("i0116", "alex@contoso.onmicrosoft.com"), "password page")
            gui.act(GUIHarness.fill("i0118", "Passw0rd!"), "stay signed in")
            gui.act("document.getElementById('idSIButton9').click();", "consent")
            gui.click("idSIButton9")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { (gui.window.directoryPage?.rowCount ?? 0) > 0 })

            // Typing fast: each keystroke's search replaces the last; only the newest answer shows.
            let page = try XCTUnwrap(gui.window.directoryPage)
            let rendered = gui.trace.events.filter { $0.name == "list-rendered" }.count
            for text in ["m", "me", "meg", "wan", "wang"] {
                page.type(text)
                MainLoopBridge.spin(timeout: 0.05) { false }
            }
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { gui.trace.events.filter { $0.name == "list-rendered" }.count > rendered })
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { page.firstRowName == "王伟" }, "the newest search never showed")
            // Any older search still on its way must not replace it.
            MainLoopBridge.spin(timeout: 1.5) { false }
            XCTAssertEqual(page.firstRowName, "王伟", "a stale answer overwrote the newest search")
        }
    }
}
