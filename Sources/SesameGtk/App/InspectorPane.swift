import FoundationEssentials
import SesameService

/// The flow inspector's place beside the samples: an empty slot until the window is on screen,
/// then the inspector (built once; it replays the trace so far), shown or hidden (F9), and its
/// diagram exported on request.
@MainActor
final class InspectorPane {
    /// The slot the window lays out beside the samples.
    let slot = Box(vertical: true, spacing: 0)
    /// The inspector, once built.
    private(set) var inspector: FlowInspector?
    private let trace: FlowTrace
    private let window: Window

    /// An empty pane for `window`'s flow, from `trace`.
    init(trace: FlowTrace, window: Window) {
        self.trace = trace
        self.window = window
    }

    /// Builds the inspector (once).
    @discardableResult
    func build() -> FlowInspector {
        if let inspector { return inspector }
        let inspector = FlowInspector(trace: trace, parent: window)
        self.inspector = inspector
        slot.pack(inspector.root, expand: true)
        inspector.root.showAll()
        return inspector
    }

    /// Shows or hides the pane (F9).
    func toggle() { slot.isVisible.toggle() }

    /// Writes the flow diagram as SVG or PNG (what the inspector's Export menu saves): the whole
    /// flow, or from the trace's event `since` on.
    func export(_ format: Canvas.Format, to file: URL, since: Int) throws {
        let inspector = build()
        inspector.showPending()
        try inspector.diagram.export(format, to: file, since: since)
    }

    /// The window closes.
    func close() { inspector?.close() }
}
