import FoundationEssentials
import SesameGIO
import SesameSamples
import SesameService
import SesameSystem
import SesameWindowModel

/// The flow inspector: the flow as a live sequence diagram (the default) with the text log one
/// click away, and the diagram's export as SVG or PNG.
@MainActor
final class FlowInspector {
    let root = Box(vertical: true, spacing: 4)
    let diagram: FlowDiagramView
    let log = TextLog()
    /// Step-through's Next and Continue, shown while it is on (never in a replay: nothing waits there).
    let stepBar: StepThroughBar
    private let views = Stack()
    private var isClosed = false
    private let trace: FlowTrace

    /// The inspector of `trace` in `parent`; `stepsThrough`: with the step-through bar (a live
    /// flow's), or none (a replay's, where nothing can wait: a bar there would only say so).
    init(trace: FlowTrace, parent: Window, stepsThrough: Bool = true) {
        self.trace = trace
        diagram = FlowDiagramView()
        stepBar = StepThroughBar(stepThrough: trace.stepThrough, window: parent)
        root.setMargin(6)
        log.accessibleName = L("Flow inspector")

        let title = Label("", xalign: 0)
        title.setMarkup("<b>\(L("Flow inspector"))</b>")
        title.ellipsizeAtEnd()
        views.add(diagram.root, name: "diagram", title: L("Diagram"))
        views.add(ScrolledWindow(log), name: "log", title: L("Log"))
        let switcher = StackSwitcher(views)
        switcher.accessibleName = L("Flow views")
        let export = MenuButton(title: L("Export"))
        export.accessibleName = L("Export the diagram")
        for format in [Canvas.Format.svg, .png] {
            let title = format == .svg ? L("Save as SVG…") : L("Save as PNG…")
            export.content.pack(
                Button(title) { [weak self, weak export] in
                    export?.close()
                    self?.askWhereToSave(format, parent: parent)
                })
        }
        // The flow itself, to replay (`sesame --replay`): its events as recorded, already redacted.
        export.content.pack(
            Button(L("Save the Flow…")) { [weak self, weak export] in
                export?.close()
                self?.askWhereToSaveTheFlow(parent: parent)
            })
        export.content.showAll()
        // The title on a line of its own: the views and Export keep their place however narrow
        // the pane, in every language.
        let bar = Box(vertical: false, spacing: 6)
        bar.pack(switcher)
        bar.pack(Box(vertical: false), expand: true)
        bar.pack(export)
        root.pack(title)
        root.pack(bar)
        if stepsThrough { root.pack(stepBar.root) }
        root.pack(views, expand: true)
        // The step about to happen is selected, so its explanation shows before it happens; after
        // Continue the diagram follows the newest again.
        stepBar.onNextStep = { [weak self] number in self?.diagram.selectWaitingStep(number) }

        for event in trace.events { append(event) }
        trace.observe { [weak self] event in self?.enqueue(event) }
    }

    /// Events not shown yet: the inspector draws them in the next frame the window paints for
    /// another reason (the user's data, a page shown), or after ``lag`` when none comes. It never
    /// asks for a frame of its own while the window has something to show: a frame it caused a
    /// moment before the user's data would hold that data back until the frame after (GTK paints
    /// at most one frame per refresh, 16.7 ms at 60 Hz).
    private var pending: [FlowTrace.Event] = []

    /// How long events may wait for a frame: a diagram this far behind still reads as live.
    static let lag: Duration = .milliseconds(100)

    private func enqueue(_ event: FlowTrace.Event) {
        pending.append(event)
        guard pending.count == 1 else { return }
        MainLoop.withNextFrame(of: root, orAfter: Self.lag) { [weak self] in self?.showPending() }
    }

    /// Shows the events that came since the last frame.
    func showPending() {
        let events = pending
        pending = []
        for event in events { append(event) }
    }

    /// Shows the diagram or the text log.
    func show(log shown: Bool) { views.visibleChildName = shown ? "log" : "diagram" }

    /// Stops following the trace (the window is closing): no widget is touched after.
    func close() { isClosed = true }

    private func append(_ event: FlowTrace.Event) {
        guard !isClosed else { return }
        diagram.append(event)
        stepBar.observe(event)
        // Query values are already redacted; the log shows only the names, to stay readable. What
        // came from outside (a page's address, a replayed file) is shown as the diagram shows it:
        // characters that are invisible or reorder the text spelled out (a right-to-left override
        // would make an address read as another), one line per event.
        let fields = event.fields.map { name, value in
            DisplayText.escaped(name) + "=" + DisplayText.escaped(value.replacing("=<redacted>", with: ""))
        }
        let line = String(formatting: "%7.3f  %@  %@\n", event.time, DisplayText.escaped(event.name), fields.joined(separator: "  "))
        log.append(line, follow: true)
    }

    private func askWhereToSaveTheFlow(parent: Window) {
        SaveDialog.ask(
            parent: parent, title: L("Save the Flow"), suggestedName: "sesame-flow.jsonl", accept: L("_Save"), cancel: L("_Cancel")
        ) { [weak self] file in
            guard let self else { return }
            do { try self.saveFlow(to: file) } catch {
                self.diagram.say(String(formatting: L("Could not save the flow: %@"), "\(error)"))
            }
        }
    }

    /// Writes the flow's events as JSON lines (mode 0600: which accounts signed in, and when, are the user's).
    func saveFlow(to file: URL) throws {
        let descriptor = try Posix.openOwnFileForWriting(file.path)
        defer { Posix.close(descriptor) }
        try Posix.writeAll(descriptor, trace.events.map { $0.jsonLine + "\n" }.joined().utf8)
    }

    private func askWhereToSave(_ format: Canvas.Format, parent: Window) {
        SaveDialog.ask(
            parent: parent, title: L("Export the diagram"), suggestedName: "sesame-flow.\(format.rawValue)", accept: L("_Save"),
            cancel: L("_Cancel")
        ) { [weak self] file in
            guard let self else { return }
            do {
                self.showPending()
                try self.diagram.export(format, to: file)
            } catch {
                self.diagram.say(
                    String(formatting: L("Could not save the diagram: %@"), (error as? Canvas.ExportError)?.description ?? file.path))
            }
        }
    }
}

/// The sequence diagram: lane headings that stay put, the rows below them in a scrolled window
/// that follows the newest, and the selected row's time and redacted details underneath, in a
/// scrolled window of their own (long details scroll: they never grow the window past the
/// screen). Click a row or use the arrow keys to select; Escape or End goes back to following
/// the newest.
@MainActor
final class FlowDiagramView {
    let root = Box(vertical: true, spacing: 4)
    private(set) var model = FlowDiagram()
    /// The selected row, if any; while none is, the view follows the newest.
    private(set) var selected: Int?
    let rows = DrawingArea()
    private let heading = DrawingArea()
    private let scroller: ScrolledWindow
    let details = Label("", wrap: true, xalign: 0, selectable: true)

    /// The most height the details take (about ten lines): an ID token's claims, read aloud, take
    /// some thirty; they scroll, and the diagram keeps the rest of the window.
    static let detailsHeight = 180

    init() {
        scroller = ScrolledWindow(rows)
        heading.setContentHeight(Int(Geometry.headingHeight))
        heading.accessibleName = L("Flow diagram lanes")
        rows.accessibleName = L("Flow diagram")
        details.accessibleName = L("Step details")
        root.pack(heading)
        root.pack(scroller, expand: true)
        showLaneTitles()
        let detailsScroller = ScrolledWindow(details)
        detailsScroller.limitHeight(to: Self.detailsHeight)
        root.pack(detailsScroller)
        showDetails()

        heading.onDraw { [weak self] canvas, width, _ in
            guard let self else { return }
            Self.drawHeading(self.model.lanes, on: canvas, width: width, palette: .of(self.heading))
        }
        rows.onDraw { [weak self] canvas, width, _ in
            guard let self else { return }
            Self.drawRows(
                self.model, selected: self.selected, on: canvas, width: width, visible: canvas.visibleRange, palette: .of(self.rows))
        }
        rows.onClick { [weak self] _, y in
            guard let self else { return }
            let row = Int(y / Geometry.rowHeight)
            self.select(self.model.steps.indices.contains(row) ? row : nil)
        }
        rows.onKey { [weak self] key in self?.press(key) ?? false }
        scroller.followBottom { [weak self] in self?.selected == nil }
        // Long details shown under the diagram shrink it after the selection scrolled to its row
        // (by the height it had): the row is shown again once the diagram has its new height.
        scroller.onVisibleHeightChanged { [weak self] in
            guard let self, let row = self.selected else { return }
            self.scroller.reveal(top: Double(row) * Geometry.rowHeight, bottom: Double(row + 1) * Geometry.rowHeight)
        }
    }

    /// Adds an event's rows; the view follows them unless a row is selected.
    func append(_ event: FlowTrace.Event) {
        let lanes = model.lanes
        // A row may go in before the selected one (rows are in time order): the selection stays on its row.
        let kept = selected.map { model.steps[$0] }
        guard model.append(event) > 0 else { return }
        if let kept, let moved = model.steps.lastIndex(of: kept), moved != selected {
            selected = moved
            showDetails()
        }
        if model.lanes != lanes {
            heading.redraw()
            showLaneTitles()
        }
        rows.setContentHeight(Int(Double(model.steps.count) * Geometry.rowHeight))
        rows.redraw()
    }

    /// The lanes' titles in full, for a heading too narrow for them (a long language: "…").
    private func showLaneTitles() {
        heading.tooltip = ([L("Time")] + model.lanes.map(\.title)).joined(separator: " · ")
    }

    /// Selects `row` (nothing: follow the newest again) and shows its details.
    func select(_ row: Int?) {
        selected = row
        showDetails()
        rows.redraw()
        if let row {
            scroller.reveal(top: Double(row) * Geometry.rowHeight, bottom: Double(row + 1) * Geometry.rowHeight)
        } else {
            scroller.scrollToBottom()
        }
    }

    /// Whether the newest row is in view.
    var showsNewest: Bool { scroller.isAtBottom }

    /// Whether the whole of `row` is in view.
    func shows(row: Int) -> Bool {
        let visible = scroller.visibleRange
        return Double(row) * Geometry.rowHeight >= visible.lowerBound && Double(row + 1) * Geometry.rowHeight <= visible.upperBound
    }

    /// Shows a message where the details go (an export that failed).
    func say(_ message: String) { details.text = message }

    /// Selects the row of the step `number` waiting in step-through.
    func selectWaitingStep(_ number: Int) {
        let row = model.steps.lastIndex { step in
            let event = model.events[step.event]
            return event.name == "step-waiting" && event.fields.contains { $0 == ("number", String(number)) }
        }
        guard let row else { return }
        select(row)
        // A row just added is below the scrolled area's end until the next layout: shown after it.
        MainLoop.afterNextPaint(of: rows) { [weak self] in
            guard let self, self.selected == row else { return }
            self.scroller.reveal(top: Double(row) * Geometry.rowHeight, bottom: Double(row + 1) * Geometry.rowHeight)
        }
    }

    /// Writes the diagram, headings included, as SVG or PNG: the whole flow, or the part from
    /// the trace's event `since` on.
    func export(_ format: Canvas.Format, to file: URL, since: Int = 0) throws {
        let model = since == 0 ? model : FlowDiagram(Array(model.events.dropFirst(since)))
        let width = Double(max(rows.allocatedWidth, 640))
        let height = Geometry.headingHeight + Double(model.steps.count) * Geometry.rowHeight + 8
        try Canvas.export(format, to: file, width: Int(width), height: Int(height)) { canvas in
            canvas.fill(x: 0, y: 0, width: width, height: height, Palette.light.background)
            Self.drawHeading(model.lanes, on: canvas, width: width)
            canvas.translate(y: Geometry.headingHeight)
            Self.drawRows(model, selected: nil, on: canvas, width: width, visible: 0...height)
        }
    }

    private func press(_ key: DrawingArea.Key) -> Bool {
        let last = model.steps.count - 1
        guard last >= 0 else { return false }
        switch key {
        case .up: select(max(0, (selected ?? last + 1) - 1))
        case .down: select(selected.map { $0 < last ? $0 + 1 : nil } ?? nil)
        case .home: select(0)
        case .end, .escape: select(nil)
        }
        return true
    }

    private func showDetails() {
        details.text = selected.map { model.details(of: $0) } ?? L("Click a step, or use the arrow keys, to see its details.")
        // A screen reader on the diagram hears the selected step: its row and what it is.
        rows.accessibleDescription = selected.map { model.spoken(of: $0) } ?? ""
    }

    // MARK: Drawing

    enum Geometry {
        static let headingHeight = 26.0
        static let rowHeight = 30.0
        static let timeColumn = 46.0

        /// The x of a lane's line, among `lanes`, in a drawing `width` wide.
        static func x(of lane: FlowDiagram.Lane, among lanes: [FlowDiagram.Lane], width: Double) -> Double {
            timeColumn + span(lanes, width: width) * (Double(lanes.firstIndex(of: lane) ?? 0) + 0.5)
        }

        static func span(_ lanes: [FlowDiagram.Lane], width: Double) -> Double { (width - timeColumn) / Double(max(1, lanes.count)) }
    }

    /// The diagram's colours: the theme's (a dark theme draws a dark diagram), or the light
    /// ones an exported picture keeps.
    struct Palette {
        var background, text, dim, lane, heading, accent, accentRow, failure, selection, note: Color

        /// The light palette (and every exported SVG or PNG).
        static let light = Palette(
            background: Color(1, 1, 1), text: Color(0.13, 0.13, 0.13), dim: Color(0.45, 0.45, 0.45), lane: Color(0.75, 0.75, 0.75),
            heading: Color(0.93, 0.93, 0.95), accent: Color(0.82, 0.33, 0.0), accentRow: Color(1.0, 0.93, 0.85),
            failure: Color(0.78, 0.1, 0.1), selection: Color(0.8, 0.88, 1.0), note: Color(1.0, 0.98, 0.82))

        /// The palette of the theme `widget` is drawn in: its base and text colours, and, in a
        /// dark theme, darker fills and lighter accents that keep the text readable.
        @MainActor
        static func of(_ widget: Widget) -> Palette {
            guard let base = widget.themeColor("theme_base_color"), let text = widget.themeColor("theme_text_color") else { return .light }
            var palette = Palette.light
            palette.background = base
            palette.text = text
            guard base.luminance < 0.5 else { return palette }
            palette.dim = widget.themeColor("insensitive_fg_color") ?? Color(0.6, 0.6, 0.6)
            palette.lane = Color(0.4, 0.4, 0.42)
            palette.heading = widget.themeColor("theme_bg_color") ?? Color(0.2, 0.2, 0.22)
            palette.accent = Color(1.0, 0.6, 0.3)
            palette.accentRow = Color(0.33, 0.2, 0.1)
            palette.failure = Color(1.0, 0.45, 0.45)
            palette.selection = Color(0.15, 0.3, 0.5)
            palette.note = Color(0.3, 0.28, 0.12)
            return palette
        }
    }

    static func drawHeading(_ lanes: [FlowDiagram.Lane], on canvas: Canvas, width: Double, palette: Palette = .light) {
        canvas.fill(x: 0, y: 0, width: width, height: Geometry.headingHeight, palette.heading)
        canvas.text(L("Time"), x: 4, y: 6, width: Geometry.timeColumn - 6, font: "Sans Bold 8", palette.dim)
        let span = Geometry.span(lanes, width: width)
        for lane in lanes {
            canvas.text(
                lane.title, x: Geometry.x(of: lane, among: lanes, width: width), y: 6, width: span - 6, alignment: .center,
                font: "Sans Bold 8", palette.text)
        }
    }

    static func drawRows(
        _ model: FlowDiagram, selected: Int?, on canvas: Canvas, width: Double, visible: ClosedRange<Double>, palette: Palette = .light
    ) {
        let height = max(visible.upperBound, Double(model.steps.count) * Geometry.rowHeight)
        let lanes = model.lanes
        for lane in lanes {
            let x = Geometry.x(of: lane, among: lanes, width: width)
            canvas.line(from: (x, visible.lowerBound), to: (x, height), palette.lane, dashed: true)
        }
        guard !model.steps.isEmpty else { return }
        let first = max(0, Int(visible.lowerBound / Geometry.rowHeight))
        let last = min(model.steps.count - 1, Int(visible.upperBound / Geometry.rowHeight))
        guard first <= last else { return }
        let span = Geometry.span(lanes, width: width)
        for index in first...last {
            let step = model.steps[index]
            let top = Double(index) * Geometry.rowHeight
            if index == selected {
                canvas.fill(x: 0, y: top, width: width, height: Geometry.rowHeight, palette.selection)
            } else if step.isHighlighted {
                canvas.fill(x: 0, y: top, width: width, height: Geometry.rowHeight, palette.accentRow)
            }
            let color = step.isFailure ? palette.failure : step.isHighlighted ? palette.accent : palette.text
            canvas.text(
                FlowDiagram.timeLabel(step.time), x: 4, y: top + 9, width: Geometry.timeColumn - 6, font: "Monospace 7", palette.dim)
            let from = Geometry.x(of: step.from, among: lanes, width: width)
            let to = Geometry.x(of: step.to, among: lanes, width: width)
            if step.style == .note {
                let left = from - span * 0.45
                canvas.fill(x: left, y: top + 5, width: span * 1.9, height: Geometry.rowHeight - 10, palette.note)
                canvas.text(step.label, x: left + 5, y: top + 8, width: span * 1.9 - 10, font: "Sans 8", color)
                continue
            }
            let arrowY = top + Geometry.rowHeight - 8
            let bold = step.isHighlighted ? "Sans Bold 8" : "Sans 8"
            canvas.text(
                step.label, x: (from + to) / 2, y: top + 4, width: max(abs(to - from) - 6, span * 1.9), alignment: .center, font: bold,
                color)
            canvas.line(from: (from, arrowY), to: (to, arrowY), color, width: step.isHighlighted ? 2 : 1.2, dashed: step.style == .response)
            let direction = to > from ? -1.0 : 1.0
            canvas.fill(polygon: [(to, arrowY), (to + direction * 7, arrowY - 4), (to + direction * 7, arrowY + 4)], color)
        }
    }
}
