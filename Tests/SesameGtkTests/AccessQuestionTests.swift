import Foundation
import SesameCore
import SesameGIO
import SesameSamples
import SesameService
import SesameTestSupport
import SesameWindowModel
import XCTest

@testable import SesameGtk

/// The question other programs cause, in the real dialog over the real window, with the account
/// service of the window's own store: it cannot be clicked through, it does not pile up, it shows
/// a spoofing name for what it is, and it leaves the window as it was.
final class AccessQuestionTests: GUITestCase {
    /// The window with alex signed in, serving an account service whose questions are the dialog's.
    @MainActor
    final class Scene {
        let gui: GUIHarness
        let service: AccountService
        let dialog = AccessDialog()

        init() throws {
            gui = try DesktopConventionsTests.signedInDirectory(screenshots: "access-")
            service = AccountService(
                store: gui.window.model.store, accountTypes: gui.window.model.samples.map(\.accountType), trace: gui.trace,
                access: ProgramAccess(file: nil), trusted: [])
            service.questioner = dialog
            dialog.parent = { [gui] in gui.window.window }
            dialog.knownPrograms = { [service] in service.access.all.map(\.program) }
            gui.window.serve(service)
        }

        /// A program's request, under way.
        func request(_ program: ProgramIdentity) -> Task<Result<ServiceToken, AccountServiceError>, Never> {
            Task { @MainActor in
                do throws(AccountServiceError) {
                    return .success(try await service.accessToken(for: program, accountType: "myGraphService", username: "", scopes: []))
                } catch {
                    return .failure(error)
                }
            }
        }

        /// Waits until the dialog asks about `program` and its buttons work.
        func waitForArmedQuestion(about program: ProgramIdentity) {
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 15) { self.dialog.question?.program == program && self.dialog.isArmed },
                "no working question about \(program.name); showing \(self.dialog.question?.program.name ?? "none")")
        }

        func button(_ name: String) -> Button? { dialog.shownWindow?.find(Button.self, named: L(name)) }

        func close() {
            dialog.dismissAll()
            gui.close()
        }
    }

    /// A double-click (two presses 40 ms apart) on Always answers the question the user read,
    /// and not the next program's, which takes its place under the pointer.
    func testTwoPressesFortyMillisecondsApartAnswerAtMostOneQuestion() throws {
        try MainActor.assumeIsolated {
            let scene = try Scene()
            defer { scene.close() }
            let first = ProgramIdentity.executable("/opt/one/tool")!
            let second = ProgramIdentity.executable("/opt/two/tool")!
            let one = scene.request(first)
            scene.waitForArmedQuestion(about: first)
            let two = scene.request(second)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { scene.dialog.waitingCount == 1 })
            let always = try XCTUnwrap(scene.button("Always allow this program"))
            XCTAssertTrue(always.isSensitive)
            always.click()
            MainLoopBridge.spin(timeout: 0.04) { false }
            scene.button("Always allow this program")?.click()
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { scene.dialog.question?.program == second })
            MainLoopBridge.spin(timeout: 0.3) { false }
            XCTAssertEqual(scene.dialog.question?.program, second, "the second press answered the second program's question")
            XCTAssertFalse(scene.dialog.isArmed, "the new question's buttons work before it was seen")
            XCTAssertFalse(scene.button("Always allow this program")?.isSensitive ?? true)
            XCTAssertEqual(scene.service.access.all.map(\.program), [first], "the second program was allowed unseen")
            // The second question, seen, is answered on its own.
            scene.waitForArmedQuestion(about: second)
            scene.dialog.press(.deny)
            var results: [Result<ServiceToken, AccountServiceError>] = []
            Task { @MainActor in results = [await one.value, await two.value] }
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { results.count == 2 })
            if case .failure(let error) = results.first { XCTFail("the first program got no token: \(error)") }
            guard case .failure(let refused) = results.last else { return XCTFail("the second program got a token") }
            XCTAssertEqual(refused.kind, .accessDenied)
        }
    }

    /// 300 requests at once from one program: one question on screen (the window raised once),
    /// 299 Busy answers.
    func testThreeHundredCallsFromOneProgramLeaveOneQuestionAndBusyErrors() throws {
        try MainActor.assumeIsolated {
            let scene = try Scene()
            defer { scene.close() }
            let program = ProgramIdentity.executable("/opt/noisy/tool")!
            let requests = (0..<300).map { _ in scene.request(program) }
            var busy = 0
            var done = 0
            for request in requests {
                Task { @MainActor in
                    if case .failure(let error) = await request.value, error.kind == .busy { busy += 1 }
                    done += 1
                }
            }
            XCTAssertTrue(MainLoopBridge.spin(timeout: 30) { done == 299 }, "\(done) of 299 answered")
            XCTAssertEqual(busy, 299)
            XCTAssertEqual(scene.dialog.question?.program, program)
            XCTAssertEqual(scene.dialog.waitingCount, 0, "more than one question")
            XCTAssertEqual(scene.dialog.raises, 1, "the window was raised more than once")
            scene.waitForArmedQuestion(about: program)
            scene.dialog.press(.allowOnce)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { done == 300 })
            XCTAssertEqual(busy, 299)
        }
    }

    /// A program whose file name holds a right-to-left override (its name reads as
    /// "gnome-terminal" reversed into place) is shown escaped, isolated from the sentence.
    func testABidiNamedProgramIsShownEscaped() throws {
        try MainActor.assumeIsolated {
            let scene = try Scene()
            defer { scene.close() }
            let spoof = ProgramIdentity.executable("/tmp/x/\u{202E}lanimret-emong")!
            let request = scene.request(spoof)
            scene.waitForArmedQuestion(about: spoof)
            let window = try XCTUnwrap(scene.dialog.shownWindow)
            let heading = try XCTUnwrap(window.find(Label.self, named: L("Program asking for access")))
            XCTAssertTrue(heading.text.contains("\\u{202E}lanimret-emong"), heading.text)
            XCTAssertFalse(heading.text.unicodeScalars.contains("\u{202E}"), "the override itself reached the question")
            let origin = try XCTUnwrap(window.find(Label.self, named: L("Where the program is")))
            XCTAssertTrue(origin.text.hasSuffix("/tmp/x/\\u{202E}lanimret-emong"), origin.text)
            MainLoopBridge.spin(timeout: 0.4) { false }
            try Screenshot.save(window, to: GUIHarness.screenshots.appending(path: "access-question-bidi.png"))
            scene.dialog.press(.deny)
            var finished = false
            Task { @MainActor in
                _ = await request.value
                finished = true
            }
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { finished })
        }
    }

    /// At 800×600 the question leaves the window's size as it was, and after each answer — Allow
    /// once, Always, Deny — the keyboard is back where it was. In Programs with Access, Take back
    /// moves the keyboard to the next decision, then to Close; closed, it is back on the page, as
    /// after About.
    func testAQuestionLeavesTheWindowAsItWas() throws {
        try MainActor.assumeIsolated {
            let scene = try Scene()
            defer { scene.close() }
            let window = scene.gui.window.window
            window.resize(width: 800, height: 600)
            window.present()
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { window.size == (800, 600) && window.isActive })
            let search = try XCTUnwrap(window.find(SearchEntry.self, named: L("Search the directory")))
            search.grabFocus()
            scene.gui.drainIdle()
            let focused = window.focusedWidget
            XCTAssertTrue(focused === search)
            let backOnThePage = { (moment: String) in
                XCTAssertTrue(
                    MainLoopBridge.spin(timeout: 10) { window.isActive && window.focusedWidget === focused },
                    "after \(moment) the keyboard did not come back to the search field")
            }
            // A dialog that had the keyboard closed: the window manager gives the window back the
            // keyboard (Xvfb has none: the test does), and its focus is where it was.
            let backAfterADialog = { (moment: String) in
                XCTAssertTrue(window.focusedWidget === focused, "after \(moment) the window's focus moved")
                window.present()
                backOnThePage(moment)
            }
            for (index, answer) in AccessAnswer.allCases.enumerated() {
                let program = ProgramIdentity.executable("/opt/some/rather-long-program-name-to-see-whether-it-wraps-\(index)")!
                let request = scene.request(program)
                scene.waitForArmedQuestion(about: program)
                scene.gui.drainIdle()
                XCTAssertEqual(window.size.width, 800)
                XCTAssertEqual(window.size.height, 600)
                let dialogWindow = try XCTUnwrap(scene.dialog.shownWindow)
                XCTAssertLessThanOrEqual(dialogWindow.size.width, 800)
                if index == 0 {
                    try Screenshot.save(dialogWindow, to: GUIHarness.screenshots.appending(path: "access-question-800x600.png"))
                }
                scene.dialog.press(answer)
                var finished = false
                Task { @MainActor in
                    _ = await request.value
                    finished = true
                }
                XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { finished })
                backOnThePage("\(answer)")
                XCTAssertEqual(window.size.width, 800)
                XCTAssertEqual(window.size.height, 600)
            }

            // Always and Deny are kept: two decisions to take back.
            _ = MainLoopBridge.spin(timeout: 5) { scene.dialog.shownWindow?.isMapped != true }
            let programs = try XCTUnwrap(scene.gui.window.primaryMenu.showPrograms())
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { programs.window.isMapped })
            XCTAssertEqual(programs.takeBackButtons.count, 2)
            // The window's own focus (it has the keyboard once the window manager gives it the window).
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 5) { programs.window.focusedWidget === programs.takeBackButtons.first },
                "no Take back has the keyboard: \(programs.window.focusedWidget?.accessibleName ?? "nothing") has it")
            programs.window.present()
            scene.gui.drainIdle()
            try Screenshot.save(programs.window, to: GUIHarness.screenshots.appending(path: "programs-with-access.png"))
            programs.takeBackButtons[0].click()
            XCTAssertEqual(programs.takeBackButtons.count, 1)
            XCTAssertTrue(
                programs.window.focusedWidget === programs.takeBackButtons[0], "after Take back the keyboard is not on the next decision")
            programs.takeBackButtons[0].click()
            XCTAssertTrue(programs.takeBackButtons.isEmpty)
            XCTAssertTrue(
                programs.window.focusedWidget?.accessibleName == L("Close Programs with Access"),
                "after the last Take back the keyboard is not on Close")
            XCTAssertTrue(scene.service.access.all.isEmpty, "a decision taken back is still kept")
            programs.window.sendKey(KeyPress(key: KeyPress.escape))
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { !programs.window.isMapped }, "Escape did not close Programs with Access")
            backAfterADialog("closing Programs with Access")

            scene.gui.window.primaryMenu.showAbout()
            let about = try XCTUnwrap(scene.gui.window.primaryMenu.about)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { about.isMapped })
            about.destroy()
            backAfterADialog("closing About")
        }
    }
}
