import Foundation
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
}
