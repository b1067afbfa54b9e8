import FoundationEssentials
import SesameSamples
import SesameService
import SesameWindowModel

/// The window's size, maximised state and inspector, kept across restarts in a small file
/// (``WindowState``), as GNOME's apps keep theirs.
@MainActor
final class KeptWindowState {
    private let file: URL?
    private let window: Window
    private let panes: () -> Paned?
    private let inspector: Widget
    private let trace: FlowTrace

    /// The state of `window` (its `panes`' position, whether `inspector` shows), kept in `file`
    /// (nil: nowhere, for tests).
    init(file: URL?, window: Window, panes: @escaping () -> Paned?, inspector: Widget, trace: FlowTrace) {
        self.file = file
        self.window = window
        self.panes = panes
        self.inspector = inspector
        self.trace = trace
    }

    /// Sizes the window, its panes and inspector as the file kept them.
    func restore() {
        guard let file else { return }
        let state = WindowState.load(from: file)
        window.resize(width: state.width, height: state.height)
        if state.maximized { window.maximize() }
        panes()?.position = state.inspectorPosition
        inspector.isVisible = state.inspectorShown
    }

    /// Keeps the window's size, maximised state and inspector for the next start.
    func save() {
        guard let file else { return }
        let size = window.size
        let maximized = window.isMaximized
        // A maximised window keeps the size it had before, as GNOME's apps do.
        let before = maximized ? WindowState.load(from: file) : nil
        let state = WindowState(
            width: before?.width ?? size.width, height: before?.height ?? size.height, maximized: maximized,
            inspectorPosition: panes()?.position ?? WindowState.initial.inspectorPosition, inspectorShown: inspector.isVisible)
        do { try state.save(to: file) } catch { trace.record("window-state-not-saved", [("error", "\(error)")]) }
    }
}
