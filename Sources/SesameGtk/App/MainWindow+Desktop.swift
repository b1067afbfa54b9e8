import Foundation
import SesameSamples

/// What makes the window behave as a GNOME app's: its keyboard shortcuts, the keyboard focus
/// after a sign-in, and its size and inspector kept across restarts.
extension MainWindow {
    /// Does what a shortcut says; `false` leaves the key to the focused widget (a shortcut that
    /// means nothing on the page showing: Ctrl+F in the sign-in view is the page's own).
    func perform(_ shortcut: WindowShortcut) -> Bool {
        let page = signIn.isSigningIn ? nil : currentKind.flatMap { pages[$0] }
        switch shortcut {
        case .quit:
            saveState()
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
            inspectorSlot.isVisible.toggle()
        }
        return true
    }

    /// After a sign-in, the keyboard goes to the page's first control (the search field, the
    /// new-task entry, the Call button) as soon as it takes input, so the user types on.
    func focusCurrentPageAfterSignIn() {
        guard let kind = currentKind, let page = pages[kind] else { return }
        page.focusFirstControlWhenReady()
    }

    /// The window's size, maximised state and inspector as the state file kept them.
    func restoreState() {
        guard let stateFile else { return }
        let state = WindowState.load(from: stateFile)
        window.resize(width: state.width, height: state.height)
        if state.maximized { window.maximize() }
        panes?.position = state.inspectorPosition
        inspectorSlot.isVisible = state.inspectorShown
    }

    /// Keeps the window's size, maximised state and inspector for the next start.
    func saveState() {
        guard let stateFile, phase < .closed else { return }
        let size = window.size
        let maximized = window.isMaximized
        // A maximised window keeps the size it had before, as GNOME's apps do.
        let before = maximized ? WindowState.load(from: stateFile) : nil
        let state = WindowState(
            width: before?.width ?? size.width, height: before?.height ?? size.height, maximized: maximized,
            inspectorPosition: panes?.position ?? WindowState.initial.inspectorPosition, inspectorShown: inspectorSlot.isVisible)
        do { try state.save(to: stateFile) } catch { model.trace.record("window-state-not-saved", [("error", "\(error)")]) }
    }
}
