import Foundation
import SesameGIO
import SesameService
import SesameTestSupport
import SesameWindowModel
import XCTest

@testable import SesameGtk

/// A flow file as a presenter is handed it: saved again on Windows (CR LF line ends, a byte order
/// mark first), or named through a symbolic link (`latest.jsonl`). The replay window shows the
/// same steps, and a selected step the same explanation, as for the flow Sesame saved.
final class FlowReplayFileTests: GUITestCase {
    static let lines = [
        #"{"t":0.1,"event":"window-shown"}"#,
        #"{"t":0.2,"event":"navigation","url":"https://127.0.0.1:8443/contoso.onmicrosoft.com/oauth2/v2.0/authorize?client_id=<redacted>","#
            + #""kind":"authorize","action":"show"}"#,
        #"{"t":0.3,"event":"navigation","method":"POST","url":"https://127.0.0.1:8443/contoso.onmicrosoft.com/login","kind":"login","#
            + #""action":"show"}"#,
        #"{"t":0.4,"event":"navigation","url":"https://login.microsoftonline.com/common/oauth2/nativeclient?code=<redacted>","#
            + #""kind":"redirect","action":"intercept"}"#,
        #"{"t":0.5,"event":"redirect-intercepted","accountType":"AzureAD"}"#,
        #"{"t":0.6,"event":"token-request","method":"POST","url":"https://127.0.0.1:8443/contoso/oauth2/v2.0/token","status":200,"ms":41}"#,
        #"{"t":0.7,"event":"token-acquired","accountType":"AzureAD"}"#,
    ]

    func testAFlowSavedOnWindowsAndAFlowNamedThroughALinkReplayWithTheSameSteps() throws {
        try MainActor.assumeIsolated {
            let folder = Repository.temporaryDirectory("sesame-replay-files")
            defer { try? FileManager.default.removeItem(at: folder) }
            let saved = folder.appending(path: "flow.jsonl")
            try Data(Self.lines.map { $0 + "\n" }.joined().utf8).write(to: saved)
            let windows = folder.appending(path: "windows.jsonl")
            try Data(("\u{FEFF}" + Self.lines.map { $0 + "\r\n" }.joined()).utf8).write(to: windows)
            let link = folder.appending(path: "latest.jsonl")
            try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "flow.jsonl")

            let original = try Self.replayed(saved)
            XCTAssertGreaterThanOrEqual(original.steps.count, 4, "\(original.steps)")
            for file in [windows, link] {
                let again = try Self.replayed(file)
                XCTAssertEqual(again.steps, original.steps, file.lastPathComponent)
                XCTAssertEqual(again.details, original.details, file.lastPathComponent)
            }
        }
    }

    /// The steps the replay window of `file` shows, and the details of its token request.
    @MainActor
    private static func replayed(_ file: URL) throws -> (steps: [String], details: String) {
        let events = try FlowReplay.events(fromFile: file.path)
        let replay = FlowReplayWindow(application: nil, events: events, file: file.path)
        defer { replay.window.destroy() }
        let view = replay.inspector.diagram
        XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { view.root.isMapped && view.model.steps.count == FlowDiagram(events).steps.count })
        let steps = view.model.steps.map(\.label)
        let token = try XCTUnwrap(steps.firstIndex { $0.contains("/token") }, "\(steps)")
        view.select(token)
        return (steps, view.details.text)
    }
}
