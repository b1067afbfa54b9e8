import FoundationEssentials
import SesameSamples
import SesameWindowModel

/// What makes the window behave as a GNOME app's: its keyboard shortcuts (its size and inspector
/// kept across restarts are ``KeptWindowState``'s).
extension MainWindow {
    /// The shortcuts, over the parts of the window they act on (``WindowShortcuts``).
    var shortcuts: WindowShortcuts {
        WindowShortcuts(
            window: window, signIn: signIn, samples: samples, model: model, primaryMenu: primaryMenu, inspectorPane: inspectorPane,
            keepState: { [weak self] in self?.keptState.save() }, application: { [weak self] in self?.application },
            show: { [weak self] in self?.show($0) })
    }

    /// Whether the flow inspector shows; setting it is what F9 does when it changes anything.
    public var showsInspector: Bool {
        get { inspectorSlot.isVisible }
        set { if newValue != inspectorSlot.isVisible { inspectorPane.toggle() } }
    }
}
