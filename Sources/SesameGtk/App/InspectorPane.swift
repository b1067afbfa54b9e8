import FoundationEssentials
import SesameService

/// The flow inspector's place beside the samples: an empty slot until the window is on screen,
/// then the inspector (built once; it replays the trace so far), shown or hidden (F9), its
/// step-through turned on or off (F8), and its diagram exported on request. The primary menu's
/// items for both are checked as they are.
@MainActor
final class InspectorPane {
    /// The slot the window lays out beside the samples.
    let slot = Box(vertical: true, spacing: 0)
    /// The inspector, once built.
    private(set) var inspector: FlowInspector?
    private let trace: FlowTrace
    private let window: Window
    private let menu: PrimaryMenu

    /// An empty pane for `window`'s flow, from `trace`, answering `menu`'s items.
    init(trace: FlowTrace, window: Window, menu: PrimaryMenu) {
        self.trace = trace
        self.window = window
        self.menu = menu
        menu.onToggleInspector = { [weak self] in self?.toggle() }
        menu.onToggleStepThrough = { [weak self] in self?.toggleStepThrough() }
    }

    /// Builds the inspector (once).
    @discardableResult
    func build() -> FlowInspector {
        if let inspector { return inspector }
        let inspector = FlowInspector(trace: trace, parent: window)
        self.inspector = inspector
        inspector.stepBar.onEnded = { [weak self] in self?.stepThroughEnded() }
        slot.pack(inspector.root, expand: true)
        inspector.root.showAll()
        return inspector
    }

    /// Whether the pane shows.
    var isShown: Bool {
        get { slot.isVisible }
        set {
            slot.isVisible = newValue
            menu.inspectorItem.isChecked = newValue
        }
    }

    /// Shows or hides the pane (F9; kept for the next start).
    func toggle() {
        isShown.toggle()
        trace.record(isShown ? "inspector-shown" : "inspector-hidden")
    }

    /// Turns step-through on — showing the pane, so the presenter sees what waits — or off,
    /// letting every waiting step go (F8, the primary menu).
    func toggleStepThrough() {
        let bar = build().stepBar
        bar.isOn.toggle()
        if bar.isOn, !isShown { toggle() }
        menu.stepThroughItem.isChecked = bar.isOn
        trace.record(bar.isOn ? "step-through-on" : "step-through-off")
        if !bar.isOn { inspector?.diagram.select(nil) }
    }

    private func stepThroughEnded() {
        menu.stepThroughItem.isChecked = false
        trace.record("step-through-off")
        inspector?.diagram.select(nil)
    }

    /// Writes the flow diagram as SVG or PNG (what the inspector's Export menu saves): the whole
    /// flow, or from the trace's event `since` on.
    func export(_ format: Canvas.Format, to file: URL, since: Int) throws {
        let inspector = build()
        inspector.showPending()
        try inspector.diagram.export(format, to: file, since: since)
    }

    /// The window closes: nobody is left to press Next, so what waits goes on (the account
    /// service may outlive the window).
    func close() {
        trace.stepThrough.continueTheRest()
        inspector?.close()
    }
}
