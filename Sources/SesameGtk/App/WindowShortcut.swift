import SesameSamples
import SesameWindowModel

/// The window's keyboard shortcuts, as GNOME's Human Interface Guidelines name them.
enum WindowShortcut: Hashable {
    /// Ctrl+Q: quit Sesame.
    case quit
    /// Ctrl+W: close the window.
    case closeWindow
    /// Ctrl+F: go to the page's search (or its entry).
    case find
    /// F5 or Ctrl+R: read the page again.
    case refresh
    /// Ctrl+?: the keyboard shortcuts window.
    case showShortcuts
    /// F10: open the primary menu.
    case primaryMenu
    /// F9: show or hide the flow inspector.
    case toggleInspector
    /// F8: step through the flow (each step waits for Next), or stop stepping.
    case stepThrough
    /// Alt+1, Alt+2, …: the samples in the switcher's order (a number from 1).
    case showSample(Int)
    /// Escape: close the sign-in under way, as its Cancel button does.
    case cancelSignIn

    /// The shortcut a key press is, if it is one.
    init?(_ press: KeyPress) {
        let press = press.normalized
        let letter = { (character: Character) in KeyPress(character: character)?.key == press.key }
        switch (press.control, press.alt) {
        case (true, false) where letter("q") && !press.shift: self = .quit
        case (true, false) where letter("w") && !press.shift: self = .closeWindow
        case (true, false) where letter("f") && !press.shift: self = .find
        case (true, false) where letter("r") && !press.shift: self = .refresh
        // Ctrl+? is Ctrl+Shift+/ on most keyboards; GDK reports the shifted key.
        case (true, false) where letter("?") || (letter("/") && press.shift): self = .showShortcuts
        case (false, false) where press.key == KeyPress.f5 && !press.shift: self = .refresh
        case (false, false) where press.key == KeyPress.f10 && !press.shift: self = .primaryMenu
        case (false, false) where press.key == KeyPress.f9 && !press.shift: self = .toggleInspector
        case (false, false) where press.key == KeyPress.f8 && !press.shift: self = .stepThrough
        case (false, false) where press.key == KeyPress.escape && !press.shift: self = .cancelSignIn
        case (false, true) where !press.shift:
            guard let digit = (1...9).first(where: { letter(Character(String($0))) }) else { return nil }
            self = .showSample(digit)
        default: return nil
        }
    }

    /// GTK's accelerator for the shortcuts window.
    var accelerators: [String] {
        switch self {
        case .quit: ["<Primary>q"]
        case .closeWindow: ["<Primary>w"]
        case .find: ["<Primary>f"]
        case .refresh: ["F5", "<Primary>r"]
        case .showShortcuts: ["<Primary>question"]
        case .primaryMenu: ["F10"]
        case .toggleInspector: ["F9"]
        case .stepThrough: ["F8"]
        case .showSample(let number): ["<Alt>\(number)"]
        case .cancelSignIn: ["Escape"]
        }
    }

    /// What the shortcuts window says it does.
    var title: String {
        switch self {
        case .quit: L("Quit")
        case .closeWindow: L("Close the window")
        case .find: L("Search")
        case .refresh: L("Refresh the page")
        case .showShortcuts: L("Keyboard shortcuts")
        case .primaryMenu: L("Open the main menu")
        case .toggleInspector: L("Show or hide the flow inspector")
        case .stepThrough: L("Step through the flow, or stop stepping")
        case .showSample: L("Go to the first, second, third sample")
        case .cancelSignIn: L("Cancel the sign-in")
        }
    }

    /// The shortcuts window's groups.
    static var groups: [(title: String, shortcuts: [ShortcutsWindow.Shortcut])] {
        [
            (L("General"), [WindowShortcut.showShortcuts, .primaryMenu, .closeWindow, .quit].map(\.shortcut)),
            (L("Pages"), [WindowShortcut.find, .refresh, .toggleInspector, .stepThrough].map(\.shortcut) + [samplesShortcut]),
            (L("Sign-in"), [WindowShortcut.cancelSignIn].map(\.shortcut)),
        ]
    }

    private var shortcut: ShortcutsWindow.Shortcut { ShortcutsWindow.Shortcut(accelerators.joined(separator: " "), title) }

    /// Alt+1 … Alt+3 as one line of the shortcuts window.
    private static var samplesShortcut: ShortcutsWindow.Shortcut {
        ShortcutsWindow.Shortcut("<Alt>1...3", WindowShortcut.showSample(1).title)
    }
}

/// What the window's shortcuts act on: the parts of the window each one needs, and nothing else
/// of it (the window builds it; no shortcut reaches the window itself).
@MainActor
struct WindowShortcuts {
    let window: Window
    let signIn: SignInPane
    let samples: SamplePages
    let model: AppModel
    let primaryMenu: PrimaryMenu
    let inspectorPane: InspectorPane
    /// Keeps the window's size and panes for the next start (before Ctrl+Q ends the app).
    let keepState: () -> Void
    /// The app, which Ctrl+Q ends (without one, Ctrl+Q closes the window).
    let application: () -> Application?
    /// Shows a sample, as its tab does.
    let show: (Sample.Kind) -> Void

    /// Does what a shortcut says; `false` leaves the key to the focused widget (a shortcut that
    /// means nothing on the page showing: Ctrl+F in the sign-in view is the page's own).
    func perform(_ shortcut: WindowShortcut) -> Bool {
        let page = signIn.isSigningIn ? nil : samples.current
        switch shortcut {
        case .quit:
            keepState()
            if let application = application() { application.quit() } else { window.close() }
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
        case .stepThrough:
            inspectorPane.toggleStepThrough()
        case .showSample(let number):  // not while signing in: the sign-in page keeps the window
            guard !signIn.isSigningIn, let sample = model.samples.dropFirst(number - 1).first else { return false }
            show(sample.kind)
        case .cancelSignIn:
            // Escape means something to the page's own widgets only while no sign-in is on screen.
            guard signIn.isSigningIn else { return false }
            model.trace.record("sign-in-cancelled-by-key", [])
            signIn.cancel()
        }
        return true
    }
}
