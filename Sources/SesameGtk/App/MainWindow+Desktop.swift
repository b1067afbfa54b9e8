import FoundationEssentials
import SesameSamples

/// What makes the window behave as a GNOME app's: its keyboard shortcuts (its size and inspector
/// kept across restarts are ``KeptWindowState``'s).
extension MainWindow {
    /// Does what a shortcut says; `false` leaves the key to the focused widget (a shortcut that
    /// means nothing on the page showing: Ctrl+F in the sign-in view is the page's own).
    func perform(_ shortcut: WindowShortcut) -> Bool {
        let page = signIn.isSigningIn ? nil : samples.current
        switch shortcut {
        case .quit:
            keptState.save()
            if let application { application.quit() } else { window.close() }
        case .closeWindow:
            window.close()
        case .find:
            guard let field = page?.searchField else { return false }
            field.grabFocus()
        case .refresh:
            guard let page else { return false }
            model.trace.record("page-refreshed", [("sample", page.session.sample.kind.rawValue)])
            page.refresh()
        case .showShortcuts:
            primaryMenu.showShortcuts()
        case .primaryMenu:
            primaryMenu.button.open()
        case .toggleInspector:
            inspectorPane.toggle()
        case .showSample(let number):  // not while signing in: the sign-in page keeps the window
            guard !signIn.isSigningIn, let sample = model.samples.dropFirst(number - 1).first else { return false }
            show(sample.kind)
        }
        return true
    }
}
