import FoundationEssentials
import SesameSamples
import SesameWindowModel

/// What makes the window behave as a GNOME app's: its keyboard shortcuts (its size and inspector
/// kept across restarts are ``KeptWindowState``'s).
extension MainWindow {
    /// Does what a shortcut says (``WindowShortcut/perform(in:)``); `false` leaves the key to
    /// the focused widget.
    func perform(_ shortcut: WindowShortcut) -> Bool { shortcut.perform(in: self) }

    /// Whether the flow inspector shows; setting it is what F9 does when it changes anything.
    public var showsInspector: Bool {
        get { inspectorSlot.isVisible }
        set { if newValue != inspectorSlot.isVisible { toggleInspector() } }
    }

    /// F9 or the primary menu: shows or hides the flow inspector (kept for the next start).
    func toggleInspector() { inspectorPane.toggle() }
}
