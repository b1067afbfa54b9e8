import FoundationEssentials
import SesameSamples
import SesameService
import SesameWindowModel

/// "Programs with Access" (the primary menu): what the user decided about each program that
/// asked for an account — Always or Deny, for which account and permissions — each with
/// **Take back** (the program is asked again next time). After Take back the keyboard goes to
/// the next decision's button, or to Close when none is left.
@MainActor
final class ProgramsWindow {
    /// The window.
    let window: Window
    private let list = ListBox()
    private let empty = Label(L("No program has asked to use your accounts yet."), wrap: true, xalign: 0.5)
    private let closeButton = Button(L("Close"), accessibleName: L("Close Programs with Access"))
    private let access: ProgramAccess?
    private var observer: UUID?
    /// Each row's Take back, in order.
    private(set) var takeBackButtons: [Button] = []
    /// Called once the window is closed.
    var onClose: (() -> Void)?

    /// The decisions kept in `access` (nil: no account service runs, so none).
    init(access: ProgramAccess?, parent: Window) {
        self.access = access
        window = Window(application: nil, title: L("Programs with Access"), width: 560, height: 360)
        window.setTransient(for: parent)
        let header = HeaderBar(title: L("Programs with Access"))
        window.setTitlebar(header)
        list.accessibleName = L("Programs with access")
        let explanation = Label(
            L(
                "Programs you answered Always or Deny. Take back a decision and the program is asked again the next time it wants an account."
            ),
            wrap: true, xalign: 0)
        explanation.addStyleClass("dim-label")
        let content = Box(vertical: true, spacing: 12)
        content.setMargin(18)
        content.pack(explanation)
        content.pack(ScrolledWindow(list), expand: true)
        content.pack(empty)
        let buttons = Box(vertical: false, spacing: 6)
        buttons.pack(Box(vertical: false, spacing: 0), expand: true)
        buttons.pack(closeButton)
        content.pack(buttons)
        window.setContent(content)
        header.showAll()
        content.showAll()
        closeButton.onClick { [weak self] in self?.window.close() }
        window.onKeyPress { [weak self] press in
            guard press.key == KeyPress.escape else { return false }
            self?.window.close()
            return true
        }
        window.onDestroy { [weak self] in
            guard let self else { return }
            if let observer = self.observer { self.access?.stopObserving(observer) }
            self.onClose?()
        }
        observer = access?.observe { [weak self] in self?.showDecisions() }
        showDecisions()
    }

    /// Shows the window, the keyboard on the first Take back (or Close).
    func present() {
        window.present()
        (takeBackButtons.first ?? closeButton).grabFocus()
    }

    private func showDecisions(focusing index: Int? = nil) {
        list.removeAll()
        takeBackButtons = []
        let decisions = access?.all ?? []
        for (position, decision) in decisions.enumerated() {
            let row = Box(vertical: false, spacing: 12)
            row.setMargin(6)
            let what = decision.allowed ? L("always allowed") : L("denied")
            let scopes = decision.scopes.map(DisplayText.escaped).joined(separator: ", ")
            let text = String(
                formatting: L("%@ — %@ for %@: %@"), DisplayText.isolated(decision.program.name), scopes,
                DisplayText.isolated(decision.username), what)
            let label = Label(text, wrap: true, xalign: 0)
            label.tooltip = DisplayText.escaped(decision.program.id)
            row.pack(label, expand: true)
            let takeBack = Button(
                L("Take back"), accessibleName: String(formatting: L("Take back the decision about %@"), decision.program.id))
            takeBack.centerInItsSpace()
            takeBack.onClick { [weak self] in self?.takeBack(decision, at: position) }
            row.pack(takeBack)
            takeBackButtons.append(takeBack)
            list.append(row, accessibleName: text)
        }
        list.isVisible = !decisions.isEmpty
        empty.isVisible = decisions.isEmpty
        if !decisions.isEmpty { list.showAll() }
        if let index {
            (takeBackButtons.indices.contains(index) ? takeBackButtons[index] : takeBackButtons.last ?? closeButton).grabFocus()
        }
    }

    private func takeBack(_ decision: ProgramDecision, at position: Int) {
        access?.revoke(decision)
        // The row (and its button) went: the keyboard goes to the decision now in its place.
        showDecisions(focusing: position)
    }
}
