import Foundation
import IdentityEmulator
import SesameGIO
import SesameService
import SesameTestSupport
import SesameWindowModel
import XCTest

@testable import SesameGtk

/// A presenter steps through a sign-in in the real window: F8, then each step — the sign-in
/// form's answers, the redirect, the token request, the Graph call — waits, selected and explained,
/// until Space presses Next; Continue runs the rest.
final class StepThroughWindowTests: GUITestCase {
    typealias IDs = SignInPageIDs

    func testThePresenterStepsThroughASignInAndTheTokenRequestWaitsForNext() throws {
        try MainActor.assumeIsolated {
            let gui = try GUIHarness(settingsFile: "directory.plist", sample: .directory, screenshotPrefix: "step-through-")
            defer { gui.close() }
            gui.waitForSignInPage("first sign-in")
            let window = gui.window.window
            window.sendKey(KeyPress(key: KeyPress.f8))
            let inspector = try XCTUnwrap(gui.window.inspector, "F8 built no inspector")
            let bar = inspector.stepBar
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { bar.root.isMapped }, "F8 did not show the step-through bar")
            XCTAssertTrue(gui.window.primaryMenu.stepThroughItem.isChecked)
            XCTAssertFalse(bar.next.isSensitive, "Next with nothing waiting")
            let view = inspector.diagram

            let space = try XCTUnwrap(KeyPress(character: " "))
            var handled = 0

            /// Presses Space for each step that waits (Next has the focus), until `done` holds or a
            /// step `hold` picks waits (returned, not let go).
            @MainActor func present(
                holding hold: (FlowTrace.Event) -> Bool = { _ in false }, until done: () -> Bool = { false }, _ what: String
            )
                -> FlowTrace.Event?
            {
                var held: FlowTrace.Event?
                let reached = MainLoopBridge.spin(timeout: 30) {
                    if done() { return true }
                    let waiting = gui.trace.events.filter { $0.name == "step-waiting" }
                    guard waiting.count > handled, bar.next.isSensitive else { return false }
                    if hold(waiting[handled]) {
                        held = waiting[handled]
                        return true
                    }
                    XCTAssertTrue(window.focusedWidget === bar.next, "\(what): Next does not have the window's focus")
                    window.sendKey(space)
                    handled += 1
                    return false
                }
                XCTAssertTrue(
                    reached, "\(what): not reached; steps waited: \(gui.trace.events.filter { $0.name == "step-waiting" }.map(\.fields))")
                if held != nil { handled += 1 }
                return held
            }
            func field(_ event: FlowTrace.Event?, _ name: String) -> String? { event?.fields.first { $0.0 == name }?.1 }
            @MainActor func selectedLabel() -> String { view.selected.map { view.model.steps[$0].label } ?? "" }

            // The user name: the form's answer waits before the page changes, selected and explained.
            var pages = gui.pagesLoaded
            gui.signInPage?.evaluateJavaScript(GUIHarness.fill(IDs.userName, "alex@contoso.onmicrosoft.com"))
            let form = present(holding: { field($0, "step") == "navigation" }, "the user name's answer")
            XCTAssertEqual(field(form, "method"), "POST")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { selectedLabel().hasPrefix("waits for Next: POST") }, selectedLabel())
            XCTAssertTrue(view.details.text.contains("Step-through: this step waits for you."), view.details.text)
            gui.screenshot("navigation-waits")
            XCTAssertEqual(gui.pagesLoaded, pages, "the page changed while its step waited")
            window.sendKey(space)  // Next: the password page comes

            _ = present(until: { gui.pagesLoaded > pages }, "the password page")
            pages = gui.pagesLoaded
            gui.signInPage?.evaluateJavaScript(GUIHarness.fill(IDs.password, IDs.demoPassword))
            _ = present(until: { gui.pagesLoaded > pages }, "stay signed in")
            pages = gui.pagesLoaded
            gui.clickInPage(IDs.primaryButton)
            _ = present(until: { gui.pagesLoaded > pages }, "consent")

            // The consent's answer, then the redirect: it waits, named by the tutorial's rule.
            gui.clickInPage(IDs.primaryButton)
            let redirect = present(holding: { field($0, "kind") == "redirect" }, "the redirect")
            XCTAssertNotNil(redirect)
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 5) { view.details.text.contains("The redirect to the app’s redirect URI") }, view.details.text)
            window.sendKey(space)

            // The token request waits, explained, and nothing is signed in while it does.
            let token = present(holding: { field($0, "step") == "token-request" }, "the token request")
            XCTAssertEqual(field(token, "method"), "POST")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { selectedLabel() == "waits for Next: POST …/token" }, selectedLabel())
            XCTAssertTrue(view.details.text.contains("The token request: the app sends the code with its code_verifier"), view.details.text)
            gui.screenshot("token-request-waits")
            // A moment of the presenter talking: still waiting (a lower bound only).
            XCTAssertFalse(MainLoopBridge.spin(timeout: 1) { gui.has("token-request") }, "the token request left before Next")
            XCTAssertEqual(gui.peopleRows, 0)
            window.sendKey(space)

            // Next, and Space for the Graph call: the directory fills.
            _ = present(until: { gui.peopleRows > 0 }, "the directory")
            XCTAssertTrue(gui.trace.events.contains { $0.name == "token-request" && $0.fields.contains { $0 == ("status", "200") } })

            // Continue: the bar goes, the menu's check mark too, and a search waits for nobody.
            gui.click(button: "Continue")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { !bar.root.isMapped }, "the bar stayed after Continue")
            XCTAssertFalse(gui.window.primaryMenu.stepThroughItem.isChecked)
            let waited = gui.trace.events.filter { $0.name == "step-waiting" }.count
            let calls = gui.trace.events.filter { $0.name == "api-call" }.count
            gui.search("meg")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.trace.events.filter { $0.name == "api-call" }.count > calls })
            XCTAssertEqual(gui.trace.events.filter { $0.name == "step-waiting" }.count, waited, "a step waited after Continue")
        }
    }

    /// A sign-in the presenter cancelled, then F8 and Sign in: while the authorization request
    /// waits for Next, the view shows Sesame's page that says so — the cancelled sign-in's
    /// user-name page is gone, so what the presenter types meanwhile reaches no form — and after
    /// Next the sign-in runs to its end.
    func testACancelledSignInsPageGivesWayToTheWaitForNext() throws {
        try MainActor.assumeIsolated {
            let gui = try GUIHarness(settingsFile: "directory.plist", sample: .directory, screenshotPrefix: "step-through-")
            defer { gui.close() }
            gui.waitForSignInPage("first sign-in")
            gui.click(button: "Cancel sign-in")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { !gui.signInShown && gui.directoryPage != nil }, "Cancel left sign-in up")
            let window = gui.window.window
            window.sendKey(KeyPress(key: KeyPress.f8))
            let bar = try XCTUnwrap(gui.window.inspector?.stepBar, "F8 built no inspector")
            gui.click(button: "Sign in")

            // The authorization request waits: the view says so, in place of the old page.
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 15) { gui.trace.stepThrough.waitingCount > 0 }, "the authorization request did not wait")
            // The pane makes its view once the sign-in is shown: wait for it, then for its page.
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.signInPage != nil }, "no sign-in view was shown")
            let view = try XCTUnwrap(gui.signInPage)
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 15) { view.title == SignInWaitText.title }, "the view shows '\(view.title ?? "")'")
            gui.screenshot("waiting-for-next")

            // The presenter clicks into the page and types the user name, then Enter — before Next.
            // The keys go to the page only once it holds the focus: on a busy machine, typed before
            // that, Enter would press whatever button had it (Sign in again: a second request).
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 15) {
                    view.grabFocus()
                    return window.focusedWidget === view
                }, "the page never took the keyboard focus")
            view.evaluateJavaScript("var field = document.getElementById('\(IDs.userName)'); if (field) { field.focus(); }")
            gui.drainIdle()
            for character in "alex@contoso.onmicrosoft.com" {
                if let press = KeyPress(character: character) { window.sendKey(press) }
            }
            window.sendKey(KeyPress(key: KeyPress.enter))
            // A moment of typing: nothing is sent from the waiting page (a lower bound only).
            XCTAssertFalse(
                MainLoopBridge.spin(timeout: 1) { gui.has("step-released") }, "what was typed replaced the waiting request")
            // One navigation waits, the authorization request (the provider's discovery document
            // may wait beside it, fetched as the sign-in starts): nothing typed made another.
            let waitingNavigations = gui.trace.events.filter {
                $0.name == "step-waiting" && $0.fields.contains { $0 == ("step", "navigation") }
            }
            XCTAssertEqual(
                waitingNavigations.map { $0.fields.first { $0.0 == "kind" }?.1 ?? "?" }, ["authorize"],
                "requests waiting: \(gui.trace.events.filter { $0.name == "step-waiting" }.map { $0.fields.map { "\($0.0)=\($0.1)" } })")

            // Next, then Continue (the discovery document may wait too): the authorization page
            // loads, and the sign-in finishes.
            bar.next.click()
            gui.click(button: "Continue")
            gui.waitForSignInPage("the authorization page after Next")
            XCTAssertFalse(
                gui.trace.events.contains { $0.name == "step-released" && $0.fields.contains { $0 == ("by", "cancelled") } },
                "a waiting step was released by cancelled")
            gui.signInAsAlexUpToConsent()
            gui.clickInPage(IDs.primaryButton)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 30) { gui.peopleRows > 0 }, "the sign-in did not finish")
            XCTAssertFalse(gui.has("redirect-ignored"))
        }
    }

    /// While the token request waits for Next, the Directory and the header say the sign-in
    /// waits for Next — not "Sign in to search your organisation" and "Not signed in" (the
    /// presenter cancelled the first sign-in and signed in with the page's button).
    func testThePageAndHeaderSayTheSignInWaitsForNext() throws {
        try MainActor.assumeIsolated {
            let gui = try GUIHarness(settingsFile: "directory.plist", sample: .directory, screenshotPrefix: "step-through-")
            defer { gui.close() }
            gui.waitForSignInPage("first sign-in")
            gui.click(button: "Cancel sign-in")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { !gui.signInShown && gui.directoryPage != nil }, "Cancel left sign-in up")
            gui.click(button: "Sign in")
            gui.waitForSignInPage("sign-in again")
            gui.signInAsAlexUpToConsent()
            let window = gui.window.window
            window.sendKey(KeyPress(key: KeyPress.f8))
            let bar = try XCTUnwrap(gui.window.inspector?.stepBar, "F8 built no inspector")
            gui.clickInPage(IDs.primaryButton)

            // Next for the consent's answer and the redirect, up to the token request.
            var released: Set<String> = []
            let tokenWaits = MainLoopBridge.spin(timeout: 30) {
                let waiting = gui.trace.events.filter { $0.name == "step-waiting" }
                if waiting.contains(where: { $0.fields.contains { $0 == ("step", "token-request") } }) { return true }
                if let last = waiting.last, let number = last.fields.first(where: { $0.0 == "number" })?.1, !released.contains(number),
                    bar.next.isSensitive
                {
                    released.insert(number)
                    bar.next.click()
                }
                return false
            }
            XCTAssertTrue(tokenWaits, "the token request did not wait")
            let page = try XCTUnwrap(gui.directoryPage)
            let waits = L("Signing in — waiting for Next")
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 5) { page.signedOutPage.root.isMapped && page.signedOutPage.status?.title == waits },
                "the page says '\(page.signedOutPage.status?.title ?? "")'")
            XCTAssertFalse(page.signedOutPage.button.isVisible, "a Sign in button while the sign-in waits")
            XCTAssertEqual(gui.window.accountMenu.button.label.text, waits)
            gui.screenshot("token-request-waits-page")

            // Next, then Continue (the provider's keys may wait after the token request, when the
            // run has not fetched them yet): signed in, and the header names alex.
            bar.next.click()
            gui.click(button: "Continue")
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 30) { ![waits, L("Not signed in")].contains(gui.window.accountMenu.button.label.text) },
                "the header says '\(gui.window.accountMenu.button.label.text)'")
        }
    }

    /// The window closes while a step waits: nobody is left to press Next, so the step goes on
    /// and step-through ends (the account service may outlive the window).
    func testClosingTheWindowLetsTheWaitingStepGo() throws {
        try MainActor.assumeIsolated {
            let gui = try GUIHarness(settingsFile: "directory.plist", sample: .directory)
            defer { gui.emulator?.stop() }
            gui.waitForSignInPage("first sign-in")
            gui.window.window.sendKey(KeyPress(key: KeyPress.f8))
            gui.signInPage?.evaluateJavaScript(GUIHarness.fill(IDs.userName, "alex@contoso.onmicrosoft.com"))
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.trace.stepThrough.waitingCount > 0 }, "no step waited")
            gui.window.window.destroy()
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.trace.stepThrough.waitingCount == 0 }, "a step still waits")
            XCTAssertFalse(gui.trace.stepThrough.isOn)
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 15) {
                    gui.trace.events.contains { $0.name == "step-released" && $0.fields.contains { $0 == ("by", "continue") } }
                })
        }
    }
}
