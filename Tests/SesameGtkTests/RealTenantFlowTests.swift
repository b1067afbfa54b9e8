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

    /// Signed in on Me, the window closes; opened again, Me shows alex signed in (his account is
    /// cached) before anything is clicked, and a call gets its token silently.
    func testMeShowsTheCachedAccountAfterARestart() throws {
        try MainActor.assumeIsolated {
            let storage = Repository.temporaryDirectory("sesame-restart")
            let emulator = try RunningEmulator.startBlocking(users: 50)
            defer { emulator.stop() }
            do {
                let gui = try GUIHarness(settingsFile: "me.plist", sample: .me, service: emulator.base, storageDirectory: storage)
                defer { gui.close() }
                gui.click(button: "Call Microsoft Graph")
                gui.waitForSignInPage("first call")
                gui.signInAsAlexUpToConsent()
                gui.clickInPage(IDs.primaryButton)
                let log = try XCTUnwrap(gui.window.window.find(TextLog.self, named: L("Log")))
                XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { log.text.contains("→ 200") }, log.text)
            }
            // Opened again on the Directory (whose sign-in opens by itself: the user cancels it),
            // then Me, as a person comes back to it.
            let gui = try GUIHarness(
                settingsFile: "directory.plist", sample: .directory, service: emulator.base, moreSettingsFiles: ["me.plist"],
                storageDirectory: storage)
            defer { gui.close() }
            gui.waitForSignInPage("the directory's own sign-in")
            gui.click(button: L("Cancel sign-in"))
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { !gui.window.signIn.isSigningIn }, "the sign-in stayed open")
            gui.window.show(.me)
            let account = { gui.window.window.find(Label.self, named: L("Signed-in user"))?.text }
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 10) { account() == "Alex Wilber" }, "Me says \(account() ?? "nothing") after a restart")
            // The page itself says so, with the call as its one action.
            let status = try XCTUnwrap(gui.mePage?.statusPage)
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 5) {
                    status.root.isMapped
                        && status.status?.title == String(format: L("Signed in as %@"), DisplayText.isolated("Alex Wilber"))
                },
                "\(String(describing: status.status))")
            let pages = gui.pagesLoaded
            gui.click(button: "Call Microsoft Graph")
            let log = try XCTUnwrap(gui.window.window.find(TextLog.self, named: L("Log")))
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { log.text.contains("→ 200") }, log.text)
            XCTAssertTrue(log.text.contains("acquireTokenSilent"), log.text)
            XCTAssertEqual(gui.pagesLoaded, pages, "a sign-in page was shown for a cached account")
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
            // alex registered no second factor: Entra asks for a phone first, then texts it.
            gui.act(GUIHarness.fill(IDs.password, IDs.demoPassword), "More information required")
            gui.act("document.getElementById('\(IDs.primaryButton)').click();", "the phone page")
            gui.act(GUIHarness.fill(IDs.phoneNumber, "+1 425 555 0100"), "SMS page")
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

            gui.directoryPage?.model.retrying.delays = [.seconds(600)]
            try gui.emulatorControl("faults", body: "graph:html")
            gui.search("meg")
            var said: String { gui.directorySays }
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { said.contains("(HTTP 502") }, "the outage was not told: \(said)")
            XCTAssertTrue(said.hasPrefix(L("Microsoft Graph is not available right now; try again later.")), said)

            try gui.emulatorControl("faults", body: "")
            gui.click(button: "Retry")
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 15) { gui.people?.text(row: 0, column: 0)?.hasPrefix("Meg") == true },
                "Retry did not search again: \(said)")
        }
    }
    /// The token endpoint's faults on a refresh, through the Me console (access tokens live two
    /// minutes, so every call refreshes): a clock ten minutes ahead is a sentence and the next
    /// call after it is fixed works (the rotated refresh token was kept); a revoked refresh token
    /// says so with the service's code, and once refresh tokens are taken again the call works.
    func testARefreshUnderAClockSkewOrARevokedTokenIsToldAndRecovers() throws {
        try MainActor.assumeIsolated {
            let gui = try GUIHarness(settingsFile: "me.plist", sample: .me, configure: { $0.accessTokenLifetime = 120 })
            defer { gui.close() }
            gui.click(button: "Call Microsoft Graph")
            gui.waitForSignInPage("first call")
            gui.signInAsAlexUpToConsent()
            gui.clickInPage(IDs.primaryButton)
            let log = try XCTUnwrap(gui.window.window.find(TextLog.self, named: L("Log")))
            @MainActor func answers() -> Int { log.text.components(separatedBy: "→ 200").count - 1 }
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { answers() == 1 }, log.text)

            try gui.emulatorControl("faults", body: "skew=600")
            gui.click(button: "Call Microsoft Graph")
            let unverifiable = L("The identity service's answer about who signed in could not be verified, so Sesame refused the sign-in.")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { log.text.contains(unverifiable) }, log.text)
            XCTAssertEqual(answers(), 1)
            try gui.emulatorControl("faults", body: "")
            gui.click(button: "Call Microsoft Graph")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { answers() == 2 }, "no recovery after the clock was right: \(log.text)")
            XCTAssertFalse(gui.signInShown, "the skew cost the user their sign-in")

            // Every refresh refused as revoked: the console says so with the service's code, and
            // the interactive sign-in it starts (single sign-on: no page) cannot help while the
            // service refuses; the call fails with the same sentence, and nothing crashes.
            try gui.emulatorControl("faults", body: "token:revoke-refresh")
            gui.click(button: "Call Microsoft Graph")
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 15) {
                    log.text.contains("error: " + L("Your sign-in has expired or was revoked; sign in again."))
                },
                log.text)
            XCTAssertTrue(log.text.contains("(AADSTS50173)"), log.text)
            XCTAssertEqual(answers(), 2)
            // The service takes refresh tokens again: the next call works.
            try gui.emulatorControl("faults", body: "")
            gui.click(button: "Call Microsoft Graph")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { answers() == 3 }, "no recovery after the fault went away: \(log.text)")
            try gui.emulatorControl("faults", body: "")
        }
    }
    /// Every way Graph can fail on the wire, one after the other in one signed-in window: each is
    /// a sentence made for the user (never a Swift value), with Retry; once the fault is gone,
    /// Retry shows the people. The longest main-loop stall under each is printed (its goal lives
    /// in `make bench`).
    func testEveryGraphFaultIsASentenceWithRetryAndRetryRecovers() throws {
        try MainActor.assumeIsolated {
            let gui = try GUIHarness(settingsFile: "directory.plist", sample: .directory, transportTimeout: .seconds(3))
            defer { gui.close() }
            gui.waitForSignInPage("sign-in")
            gui.signInAsAlexUpToConsent()
            gui.clickInPage(SignInPageIDs.primaryButton)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.peopleRows > 0 }, "the directory never filled")
            // Retry, pressed, is what this test is about: no retry of the page's own meanwhile.
            gui.directoryPage?.model.retrying.delays = [.seconds(600)]
            let host = "127.0.0.1:\(gui.base.port!)"
            let sentences: [(spec: String, sentence: String)] = [
                ("graph:drop", String(format: L("The connection to %@ broke before its answer was complete. Try again."), host)),
                ("graph:truncate", L("Microsoft Graph sent an answer Sesame could not read; try again later.")),
                ("graph:non-json", L("Microsoft Graph sent an answer Sesame could not read; try again later.")),
                ("graph:trickle", String(format: L("%@ did not answer in time. Try again later."), host)),
                ("graph:oversized", String(format: L("%@ sent an answer too large to read. Try again later."), host)),
                ("graph:status=500", L("Microsoft Graph is not available right now; try again later.")),
                // Waited out three times as told, then handed back.
                ("graph:status=429/1", L("Microsoft Graph asks Sesame to slow down; try again in a minute.")),
            ]
            let watch = MainLoopWatch()
            defer { watch.stop() }
            var stalls: [String] = []
            for (index, (spec, sentence)) in sentences.enumerated() {
                try gui.emulatorControl("faults", body: spec)
                watch.reset()
                // A different name each time, so that every search is a new request.
                let name = ["meg", "ale", "adel", "dieg", "isai", "joni", "lidi"][index]
                gui.search(name)
                XCTAssertTrue(
                    MainLoopBridge.spin(timeout: 20) { gui.directorySays.hasPrefix(sentence) },
                    "\(spec): the page said '\(gui.directorySays)'")
                XCTAssertFalse(gui.directorySays.contains("Error("), "\(spec): a Swift value reached the user: \(gui.directorySays)")
                stalls.append("\(spec): \(watch.longestStall)")

                try gui.emulatorControl("faults", body: "")
                gui.click(button: "Retry")
                XCTAssertTrue(
                    MainLoopBridge.spin(timeout: 15) { gui.people?.text(row: 0, column: 0)?.lowercased().hasPrefix(name) == true },
                    "\(spec): Retry did not search again: \(gui.directorySays)")
            }
            // Added latency: the people arrive, later, and nothing is said to be wrong.
            try gui.emulatorControl("faults", body: "graph:latency=300ms")
            watch.reset()
            gui.search("meg")
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 15) { gui.people?.text(row: 0, column: 0)?.hasPrefix("Meg") == true }, gui.directorySays)
            stalls.append("graph:latency=300ms: \(watch.longestStall)")
            print("longest main-loop stall under each fault: " + stalls.joined(separator: "; "))
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
    /// The keys and metadata cut off mid-answer (from the start: the sign-in fetches them while
    /// the user is at the pages): the error bar says the signing keys could not be fetched (nobody
    /// is signed in unverified); Retry, once they are back, ends signed in.
    func testDiscoveryCutOffAtSignInIsAnErrorWithRetryAndRetryRecovers() throws {
        try MainActor.assumeIsolated {
            let gui = try GUIHarness(
                settingsFile: "directory.plist", sample: .directory, configure: { $0.faults = try! FaultPlan.parse("discovery:drop") })
            defer { gui.close() }
            gui.waitForSignInPage("sign-in")
            gui.signInAsAlexUpToConsent()
            gui.clickInPage(SignInPageIDs.primaryButton)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.signInError != nil }, "no error shown")
            let text = try XCTUnwrap(gui.signInError)
            XCTAssertTrue(
                text.hasPrefix(L("The identity service's signing keys could not be fetched. Check the network connection and try again.")),
                text)
            XCTAssertEqual(gui.peopleRows, 0)

            try gui.emulatorControl("faults", body: "")
            gui.click(button: "Retry sign-in")
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
            // Nothing yet, said in the list's place.
            let page = try XCTUnwrap(gui.tasksPage)
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 5) { page.listStatus.root.isMapped && page.listStatus.status?.title == L("No tasks yet") },
                "no tasks yet is not said: \(String(describing: page.listStatus.status))")

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
            // A screen reader reads the row by the task's text.
            XCTAssertEqual(gui.window.window.find(ListBox.self, named: L("Tasks"))?.rowNames, ["Water the plants"])

            // A read that fails (F5 while the service is down) takes the list with it and says so
            // in its place; once the service is back the list comes back by itself.
            page.model.retrying.delays = [.milliseconds(300)]
            try gui.emulatorControl("faults", body: "tasks:status=503")
            gui.window.window.present()
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { gui.window.window.isActive })
            gui.window.window.sendKey(KeyPress(key: KeyPress.f5))
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 15) { page.listStatus.root.isMapped && page.listStatus.status?.kind == .failed },
                "the failed read is not said in the list's place")
            XCTAssertEqual(page.listStatus.status?.title, L("Can’t read your tasks"))
            try gui.emulatorControl("faults", body: "")
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 10) { !page.listStatus.root.isMapped && renderedRows() == 1 },
                "the list did not come back by itself")
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
