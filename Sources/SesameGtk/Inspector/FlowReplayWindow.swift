import FoundationEssentials
import SesameGIO
import SesameService
import SesameWindowModel

extension SesameApplication {
    /// `sesame --replay FILE`: a saved flow in the flow inspector, in a window of its own, for a
    /// class with no tenant and no network. Nothing signs in, nothing is sent, nothing is kept;
    /// the explanations, the tokens read aloud and the tutorial's steps are those of the live flow.
    public static func runReplay(_ events: [FlowTrace.Event], file: String) -> Int32 {
        MainLoopBridge.install()
        let app = Application(id: nil)
        var replay: FlowReplayWindow?
        app.onActivate {
            guard replay == nil else { return }
            replay = FlowReplayWindow(application: app, events: events, file: file)
        }
        let status = app.run()
        withExtendedLifetime(replay) {}
        return status
    }
}

/// The window of a replayed flow: the flow inspector over the saved events, and what it is.
@MainActor
final class FlowReplayWindow {
    let window: Window
    let inspector: FlowInspector

    init(application: Application?, events: [FlowTrace.Event], file: String) {
        let name = URL(filePath: file).lastPathComponent
        window = Window(application: application, title: String(formatting: L("Replay of %@"), name), width: 760, height: 720)
        window.setName("flow-replay")
        // No step-through bar: the window's showAll would show it, and nothing waits in a replay.
        inspector = FlowInspector(trace: FlowTrace(replaying: events), parent: window, stepsThrough: false)
        let note = Label(L("A saved flow, shown again: nothing signs in and nothing goes to the network."), wrap: true, xalign: 0)
        note.accessibleName = L("About this replay")
        let content = Box(vertical: true, spacing: 6)
        content.setMargin(6)
        content.pack(note)
        content.pack(inspector.root, expand: true)
        window.setContent(content)
        // Within the screen's work area, with room for the title bar: 760×720 where that fits (a
        // 1280×800 screen), less on a smaller one (800×600); long details scroll inside.
        if let area = window.workArea {
            window.resize(width: min(760, area.width), height: min(720, area.height * 9 / 10))
        }
        window.showAll()
    }
}
