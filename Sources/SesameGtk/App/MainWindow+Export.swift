import FoundationEssentials

extension MainWindow {
    /// Writes the flow diagram as SVG or PNG (what the inspector's Export menu saves): the whole
    /// flow, or from the trace's event `since` on.
    public func exportFlowDiagram(_ format: Canvas.Format, to file: URL, since: Int = 0) throws {
        try inspectorPane.export(format, to: file, since: since)
    }
}
