import Foundation
import IdentityEmulator
import SesameCore
import SesameGIO
import SesameSamples
import SesameService
import SesameTestSupport
import SesameWindowModel
import XCTest

@testable import SesameGtk

/// A newcomer's first minutes, keyboard first: a sign-in stays with the page it began on (the
/// tabs wait), every page says where it stands with one action and opens no sign-in by itself,
/// the keyboard is always somewhere useful, and a failed search neither leaves stale rows nor
/// needs a press to recover.
final class NewcomerTests: GUITestCase {
    typealias IDs = SignInPageIDs

    @MainActor
    private static func press(_ number: Int, in window: Window) throws {
        window.sendKey(try XCTUnwrap(KeyPress(character: Character(String(number)), alt: true)))
    }

    func testASignInBelongsToItsPageAndEveryPageSaysWhereItStands() throws {
        try MainActor.assumeIsolated {
            // Tasks, Directory, Me: Alt+1, Alt+2, Alt+3.
            let gui = try GUIHarness(
                settingsFile: "tasks.plist", sample: .tasks, screenshotPrefix: "newcomer-",
                moreSettingsFiles: ["directory.plist", "me.plist"])
            defer { gui.close() }
            let window = gui.window.window
            // Started for Tasks with nobody signed in: its sign-in, and the tabs wait for it.
            gui.waitForSignInPage("Tasks' sign-in at the start")
            window.present()
            XCTAssertTrue(gui.window.signIn.heading.contains(L("Tasks")), gui.window.signIn.heading)
            XCTAssertFalse(gui.window.header.switcher.isSensitive, "the tabs can leave a sign-in under way")
            try Self.press(2, in: window)
            gui.window.show(.directory)
            gui.drainIdle()
            XCTAssertEqual(gui.window.samples.currentKind, .tasks, "the page changed under its sign-in")
            XCTAssertEqual(gui.window.mainStack.visibleChildName, "sign-in")
            gui.screenshot("sign-in-keeps-its-page")

            // Cancel: Tasks says what it is for, the keyboard on its Sign in.
            gui.click(button: "Cancel sign-in")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { !gui.window.signIn.isSigningIn && gui.window.header.switcher.isSensitive })
            let tasks = try XCTUnwrap(gui.tasksPage)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { tasks.signedOutPage.root.isMapped }, "Tasks shows no status page")
            XCTAssertEqual(tasks.signedOutPage.status?.title, L("Sign in to see your tasks"))
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { tasks.signedOutPage.button.hasFocus }, "the keyboard is not on Sign in")
            gui.screenshot("tasks-signed-out")

            // The other pages say where they stand and open nothing by themselves.
            let requested = gui.trace.events.filter { $0.name == "sign-in-page-requested" }.count
            try Self.press(2, in: window)
            let directory = try XCTUnwrap(gui.directoryPage)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { directory.signedOutPage.root.isMapped }, "Directory shows no status page")
            XCTAssertEqual(directory.signedOutPage.status?.title, L("Sign in to search your organisation"))
            XCTAssertEqual(directory.signedOutPage.status?.action, .sample(.signIn))
            gui.screenshot("directory-signed-out")
            try Self.press(3, in: window)
            let me = try XCTUnwrap(gui.mePage)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { me.statusPage.root.isMapped }, "Me shows no status page")
            XCTAssertEqual(me.statusPage.status?.title, L("Read your profile from Microsoft Graph"))
            XCTAssertEqual(me.statusPage.status?.action, .call(L("Call Microsoft Graph")))
            gui.screenshot("me-signed-out")
            gui.drainIdle()
            XCTAssertFalse(gui.window.signIn.isSigningIn, "a page opened a sign-in by being shown")
            XCTAssertEqual(gui.trace.events.filter { $0.name == "sign-in-page-requested" }.count, requested)

            // The Directory's one action signs in; after it the keyboard is in the search field.
            try Self.press(2, in: window)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { directory.signedOutPage.root.isMapped })
            directory.signedOutPage.button.click()
            gui.waitForSignInPage("the Directory's sign-in")
            XCTAssertTrue(gui.window.signIn.heading.contains(L("Directory")), gui.window.signIn.heading)
            // Escape, the keyboard in the page (as after typing there), closes the sign-in as
            // Cancel does: the page's status, the keyboard on its Sign in.
            gui.signInPage?.grabFocus()
            window.sendKey(KeyPress(key: KeyPress.escape))
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { !gui.window.signIn.isSigningIn }, "Escape did not cancel the sign-in")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { directory.signedOutPage.button.hasFocus }, "the keyboard is not on Sign in")
            // Escape with no sign-in is the page's own: nothing opens or closes.
            window.sendKey(KeyPress(key: KeyPress.escape))
            gui.drainIdle()
            XCTAssertFalse(gui.window.signIn.isSigningIn)
            directory.signedOutPage.button.click()
            gui.waitForSignInPage("the Directory's sign-in, again")
            gui.signInAsAlexUpToConsent()
            gui.clickInPage(IDs.primaryButton)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.peopleRows > 0 }, "the directory never filled")
            let search = try XCTUnwrap(window.find(SearchEntry.self, named: L("Search the directory")))
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { search.hasFocus }, "after the sign-in the keyboard is not in the search field")

            // No one matches: said in the list's place, with Show everyone, which brings the keyboard back.
            gui.search("zzzq")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { directory.listStatus.root.isMapped }, "no one matching is not said")
            XCTAssertEqual(directory.listStatus.status?.kind, .nothingYet)
            XCTAssertTrue(directory.listStatus.status?.title.contains("zzzq") == true)
            gui.screenshot("no-one-matches")
            gui.click(button: "Show everyone")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { gui.peopleRows > 0 && !directory.listStatus.root.isMapped })
            XCTAssertTrue(search.hasFocus, "after Show everyone the keyboard is not in the search field")
            XCTAssertEqual(search.text, "")
        }
    }

    /// A search that fails takes its rows with it (they answered another search) and says so in
    /// their place; when Graph is back the page recovers by itself. Retry, pressed, leaves the
    /// keyboard in the search field.
    func testAFailedSearchLeavesNoStaleRowsAndRecoversWithoutAPress() throws {
        try MainActor.assumeIsolated {
            let gui = try DesktopConventionsTests.signedInDirectory(screenshots: "recovery-")
            defer { gui.close() }
            let directory = try XCTUnwrap(gui.directoryPage)
            directory.model.retrying.delays = [.milliseconds(500)]
            let window = gui.window.window
            window.present()

            try gui.emulatorControl("faults", body: "graph:html")
            gui.search("meg")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.directorySays.contains("(HTTP 502") }, "the outage was not told")
            XCTAssertEqual(gui.peopleRows, 0, "the rows of the earlier search stayed under the failure")
            XCTAssertEqual(directory.listStatus.status?.title, L("Can’t search the directory"))
            XCTAssertEqual(directory.listStatus.status?.action, .sample(.retry))
            gui.screenshot("failed")
            try gui.emulatorControl("faults", body: "")
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 10) { gui.people?.text(row: 0, column: 0)?.hasPrefix("Meg") == true },
                "the page did not recover by itself: \(gui.directorySays)")
            XCTAssertTrue(gui.has("search-started"))

            // Again, with no retry soon: Retry, pressed, searches and gives the keyboard back to the field.
            directory.model.retrying.delays = [.seconds(600)]
            try gui.emulatorControl("faults", body: "graph:html")
            gui.search("ben")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.directorySays.contains("(HTTP 502") })
            // The failure says when the page tries again, and counts down.
            let retrying = {
                window.descendants.compactMap { $0 as? Label }.first { $0.accessibleName == L("Retrying") && $0.isMapped }?.text
            }
            XCTAssertEqual(retrying(), String(formatting: L("Trying again in %d s"), 600))
            gui.screenshot("failed-counting-down")
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 10) { retrying() == String(formatting: L("Trying again in %d s"), 599) },
                "the countdown did not move: \(retrying() ?? "nothing")")
            try gui.emulatorControl("faults", body: "")
            directory.listStatus.button.grabFocus()
            gui.click(button: "Retry")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { gui.peopleRows > 0 && !directory.listStatus.root.isMapped })
            let search = try XCTUnwrap(window.find(SearchEntry.self, named: L("Search the directory")))
            XCTAssertTrue(search.hasFocus, "after Retry the keyboard is not in the search field")
        }
    }

    /// Installed on a machine that cannot reach the identity service: the sign-in page says so,
    /// and offers the demo that needs no cloud (the installed app starts again as `sesame --demo`).
    func testASignInPageThatCannotBeReachedOffersTheDemo() throws {
        try MainActor.assumeIsolated {
            let gone = try RunningEmulator.startBlocking()
            let base = gone.base
            gone.stop()
            var chosen = 0
            let gui = try GUIHarness(
                settingsFile: "directory.plist", sample: .directory, screenshotPrefix: "unreachable-", service: base,
                tryDemo: { chosen += 1 })
            defer { gui.close() }
            var demo: Button? { gui.window.window.find(Button.self, named: L("Try Sesame with its built-in demo instead")) }
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { demo?.isMapped == true }, "the demo is not offered")
            XCTAssertTrue(gui.has("sign-in-failed"))
            gui.screenshot("cannot-reach")
            gui.click(button: "Try Sesame with its built-in demo instead")
            XCTAssertEqual(chosen, 1)
            XCTAssertTrue(gui.has("demo-chosen"))
        }
    }
}
