import Foundation
import IdentityEmulator
import SesameGIO
import SesameService
import SesameTestSupport
import SesameWindowModel
import XCTest

@testable import SesameGtk

/// A flow saved from the inspector and replayed (`sesame --replay`): the window shows the same
/// steps, and a selected step the same explanation, with nothing signed in and no network.
final class FlowReplayWindowTests: GUITestCase {
    func testASavedSignInIsReplayedStepByStepWithItsExplanations() throws {
        try MainActor.assumeIsolated {
            let gui = try GUIHarness(settingsFile: "directory.plist", sample: .directory, screenshotPrefix: "replay-")
            defer { gui.close() }
            gui.waitForSignInPage("first sign-in")
            gui.window.inspectorPane.toggle()
            let live = try XCTUnwrap(gui.window.inspector)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { live.diagram.model.steps.count >= 3 })
            // Events recorded since the last frame wait to be drawn (FlowInspector.enqueue); the
            // file holds them all, so the diagram compared with it shows them all first.
            live.showPending()
            let file = Repository.temporaryDirectory("sesame-replay").appending(path: "flow.jsonl")
            try live.saveFlow(to: file)
            let steps = live.diagram.model.steps.map(\.label)

            let events = try FlowReplay.events(fromFile: file.path)
            let replay = FlowReplayWindow(application: nil, events: events, file: file.path)
            defer { replay.window.destroy() }
            let view = replay.inspector.diagram
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { view.root.isMapped && view.model.steps.count == steps.count })
            XCTAssertEqual(view.model.steps.map(\.label), steps)
            let authorize = try XCTUnwrap(steps.firstIndex { $0.hasPrefix("GET …/authorize") }, "\(steps)")
            view.select(authorize)
            XCTAssertTrue(view.details.text.contains("The authorization request (the tutorial’s authURL"), view.details.text)
            XCTAssertTrue(view.details.text.contains("In the NXOAuth2 and Graph tutorial:"), view.details.text)
            XCTAssertEqual(view.details.text, live.diagram.model.details(of: authorize))
            MainLoopBridge.spin(timeout: 0.2) { false }  // for the picture only: a few frames painted
            try Screenshot.save(replay.window, to: GUIHarness.screenshots.appending(path: "replay-window.png"))
        }
    }

    /// A flow file is outside input: a URL holding a right-to-left override (U+202E) would show in
    /// the Log as a Microsoft address ("moc.tfosorcim.nigol//:sptth" after it reads backwards), a control
    /// character would break the line. The Log spells them out as the access question does
    /// (``DisplayText``: `\u{202E}`), and so do the Diagram's details of the step.
    func testTheLogSpellsOutBidiAndControlCharactersOfAReplayedFlow() throws {
        try MainActor.assumeIsolated {
            let lines = [
                #"{"t": 0.25, "event": "navigation", "method": "GET", "url": "https://evil.example/\u202emoc.tfosorcim.nigol//:sptth", "#
                    + #""kind": "other", "action": "show"}"#,
                #"{"t": 0.5, "event": "page-loaded", "url": "https://evil.example/a\u0007b\u200bc\nd"}"#,
            ]
            let file = Repository.temporaryDirectory("sesame-replay-hostile").appending(path: "flow.jsonl")
            try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
            let events = try FlowReplay.events(fromFile: file.path)
            XCTAssertTrue(events[0].fields.contains { $0.1.unicodeScalars.contains("\u{202E}") }, "the file's override was not read")

            let replay = FlowReplayWindow(application: nil, events: events, file: file.path)
            defer { replay.window.destroy() }
            replay.inspector.show(log: true)
            let log = replay.inspector.log
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { log.isMapped && log.text.contains("page-loaded") }, log.text)
            let shown = log.text
            XCTAssertFalse(shown.unicodeScalars.contains("\u{202E}"), "the Log shows a raw right-to-left override: \(shown)")
            XCTAssertTrue(shown.contains(#"https://evil.example/\u{202E}moc.tfosorcim.nigol//:sptth"#), shown)
            XCTAssertTrue(shown.contains(#"https://evil.example/a\u{7}b\u{200B}c\u{A}d"#), shown)
            // One line per event: a value's line feed does not start a line of its own.
            XCTAssertEqual(shown.split(separator: "\n").count, 2, shown)

            // The Diagram's details of the same step say it the same way.
            let diagram = replay.inspector.diagram
            let row = try XCTUnwrap(diagram.model.steps.firstIndex { diagram.model.events[$0.event].name == "navigation" })
            diagram.select(row)
            XCTAssertFalse(diagram.details.text.unicodeScalars.contains("\u{202E}"), diagram.details.text)
            XCTAssertTrue(diagram.details.text.contains(#"\u{202E}moc.tfosorcim.nigol"#), diagram.details.text)
        }
    }

    // MARK: Presenting the replay

    /// Nothing waits in a replay: the window has no step-through bar (no "Stepping through", no
    /// Next, no Continue).
    func testTheReplayWindowHasNoStepThroughBar() throws {
        try MainActor.assumeIsolated {
            let replay = FlowReplayWindow(application: nil, events: try Self.signInFlow(), file: "sign-in.jsonl")
            defer { replay.window.destroy() }
            let view = replay.inspector.diagram
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { view.root.isMapped && !view.model.steps.isEmpty })
            let shown = replay.window.descendants.filter(\.isMapped)
            XCTAssertFalse(shown.contains { $0.accessibleName == L("Step-through") }, "the replay shows the step-through bar")
            let buttons = shown.compactMap { ($0 as? Button)?.title }
            XCTAssertFalse(buttons.contains(L("Next")) || buttons.contains(L("Continue")), "\(buttons)")
        }
    }

    /// A presenter selects every row of a whole sign-in's replay, in English and in Spanish: the
    /// window stays within the screen's work area and keeps its size, the long details scrolling
    /// inside. Its least height fits the smallest screen Sesame is shown on (800×600), whatever
    /// screen the test has (`SESAME_XVFB_SCREEN=800x600x24 scripts/test-session.sh …`, or 1280x800x24).
    func testTheReplayWindowStaysWithinTheScreenWhateverRowIsSelected() throws {
        try MainActor.assumeIsolated {
            let events = try Self.signInFlow()
            setenv("LC_ALL", "C.UTF-8", 1)
            Localization.setUp(executable: URL(filePath: "/nonexistent/bin/sesame"), sourceRoot: Repository.root)
            defer {
                unsetenv("LANGUAGE")
                unsetenv("LC_ALL")
                setlocale(LC_ALL, "")
            }
            for language in ["en", "es"] {
                setenv("LANGUAGE", language, 1)
                setlocale(LC_ALL, "")
                let replay = FlowReplayWindow(application: nil, events: events, file: "sign-in.jsonl")
                defer { replay.window.destroy() }
                let window = replay.window
                let view = replay.inspector.diagram
                XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { window.frameOnScreen != nil && view.model.steps.count > 20 })
                Self.settle(window)
                let area = try XCTUnwrap(window.workArea)
                let opened = window.size
                for row in view.model.steps.indices {
                    view.select(row)
                    Self.settle(window)
                    let what = "\(language), row \(row) “\(view.model.steps[row].label)” in \(area)"
                    let least = window.minimumHeight(forWidth: window.size.width)
                    XCTAssertLessThanOrEqual(least, 600, "the window needs more height than an 800×600 screen has: \(what)")
                    XCTAssertLessThanOrEqual(least, area.height, what)
                    let frame = try XCTUnwrap(window.frameOnScreen)
                    XCTAssertTrue(
                        frame.x >= area.x && frame.y >= area.y && frame.x + frame.width <= area.x + area.width
                            && frame.y + frame.height <= area.y + area.height, "the window \(frame) is past the work area: \(what)")
                    XCTAssertTrue(window.size == opened, "the window went from \(opened) to \(window.size): \(what)")
                }
                // The longest details, for the eyes.
                let longest = try XCTUnwrap(
                    view.model.steps.indices.max { view.model.details(of: $0).count < view.model.details(of: $1).count })
                view.select(longest)
                Self.settle(window)
                try Screenshot.save(window, to: GUIHarness.screenshots.appending(path: "replay-longest-details-\(language).png"))
            }
        }
    }

    /// Selecting "ID token read" with the keyboard shows its long details under the diagram: the
    /// diagram, shorter now, still shows that row.
    func testTheRowSelectedByKeyboardStaysInViewWhenItsDetailsAreLong() throws {
        try MainActor.assumeIsolated {
            let replay = FlowReplayWindow(application: nil, events: try Self.signInFlow(), file: "sign-in.jsonl")
            defer { replay.window.destroy() }
            let view = replay.inspector.diagram
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { replay.window.frameOnScreen != nil && view.model.steps.count > 20 })
            let labels = view.model.steps.map(\.label)
            let idToken = try XCTUnwrap(labels.firstIndex(of: "ID token read: who signed in"), "\(labels)")
            Self.settle(replay.window)
            // From the first row down, as a presenter walks through the flow.
            XCTAssertTrue(view.rows.type(.home), "the display sent no key")
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { view.selected == 0 })
            for row in 1...idToken {
                view.rows.type(.down)
                XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { view.selected == row })
                Self.settle(replay.window)
                XCTAssertTrue(
                    view.shows(row: row), "row \(row) “\(labels[row])” is out of view, its details: \(view.details.text.count) characters")
            }
            XCTAssertTrue(view.details.text.contains("aud · who the token is for (its audience): "), view.details.text)
        }
    }

    /// Lets the window lay out and paint what just changed (a resize asked of the display comes
    /// back a frame later).
    @MainActor
    private static func settle(_ window: Window) {
        for _ in 0..<3 {
            var painted = false
            MainLoop.afterNextPaint(of: window) { painted = true }
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { painted })
        }
    }

    /// A whole sign-in's flow as the inspector saves it (alex, through the real view, up to the
    /// directory filled): recorded once for the tests that replay it.
    @MainActor
    private static func signInFlow() throws -> [FlowTrace.Event] {
        if let recorded { return recorded }
        let gui = try GUIHarness(settingsFile: "directory.plist", sample: .directory)
        defer { gui.close() }
        gui.waitForSignInPage("first sign-in")
        gui.signInAsAlexUpToConsent()
        gui.clickInPage(SignInPageIDs.primaryButton)
        XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.peopleRows > 0 && gui.has("list-rendered") }, "the directory never filled")
        gui.window.inspectorPane.toggle()
        let live = try XCTUnwrap(gui.window.inspector)
        XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { live.diagram.model.steps.contains { $0.label.contains("rows") } })
        live.showPending()
        let file = Repository.temporaryDirectory("sesame-replay-sign-in").appending(path: "flow.jsonl")
        try live.saveFlow(to: file)
        let events = try FlowReplay.events(fromFile: file.path)
        recorded = events
        return events
    }
    @MainActor private static var recorded: [FlowTrace.Event]?
}
