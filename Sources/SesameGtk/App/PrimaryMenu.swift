import FoundationEssentials
import SesameSamples
import SesameService
import SesameSystem
import SesameWindowModel

/// The header's primary menu (F10): the app's own actions — the flow inspector (F9) and its
/// step-through (F8), the programs the user answered, forgetting what the sign-in pages remember
/// on this device — then Keyboard Shortcuts and About Sesame, as every GNOME app has.
@MainActor
final class PrimaryMenu {
    /// The header's menu button.
    let button = MenuButton(iconName: "open-menu-symbolic")
    /// "Show Flow Inspector", checked while it shows.
    let inspectorItem = MenuItem(L("Show Flow Inspector"), check: true)
    /// "Step Through the Flow" (F8), checked while the flow waits before each step.
    let stepThroughItem = MenuItem(L("Step Through the Flow"), check: true)
    /// "Programs with Access".
    let programsItem = MenuItem(L("Programs with Access"))
    /// "Forget This Device’s Sign-in Data".
    let forgetItem = MenuItem(L("Forget This Device’s Sign-in Data"))
    /// The inspector's item was chosen.
    var onToggleInspector: (() -> Void)?
    /// The step-through item was chosen.
    var onToggleStepThrough: (() -> Void)?
    /// The forget item was chosen.
    var onForget: (() -> Void)?
    /// The programs' decisions (nil: no account service in this window).
    var access: ProgramAccess?
    /// The Programs with Access window while it is open.
    private(set) var programs: ProgramsWindow?
    private weak var window: Window?
    /// Sesame's documentation (the user guide), linked from the About window when it is found.
    private let documentation: URL?
    private var shortcuts: ShortcutsWindow?
    /// The About window while it is open.
    private(set) var about: AboutDialog?

    init(window: Window, documentation: URL?) {
        self.window = window
        self.documentation = documentation
        button.accessibleName = L("Main menu")
        let shortcutsItem = MenuItem(L("Keyboard Shortcuts"))
        let aboutItem = MenuItem(L("About Sesame"))
        forgetItem.tooltip = L(
            "The sign-in pages forget who signed in on this computer (“Stay signed in”) and ask for the user name and password again. Accounts stay signed in to Sesame."
        )
        for item in [inspectorItem, stepThroughItem, programsItem, Separator(), forgetItem, Separator(), shortcutsItem, aboutItem]
            as [Widget]
        {
            button.content.pack(item)
        }
        button.content.showAll()
        inspectorItem.onClick { [weak self] in self?.chose(self?.onToggleInspector) }
        stepThroughItem.onClick { [weak self] in self?.chose(self?.onToggleStepThrough) }
        programsItem.onClick { [weak self] in self?.chose { self?.showPrograms() } }
        forgetItem.onClick { [weak self] in self?.chose(self?.onForget) }
        shortcutsItem.onClick { [weak self] in self?.chose { self?.showShortcuts() } }
        aboutItem.onClick { [weak self] in self?.chose { self?.showAbout() } }
    }

    private func chose(_ action: (() -> Void)?) {
        button.close()
        action?()
    }

    /// The Programs with Access window (one at a time).
    @discardableResult
    func showPrograms() -> ProgramsWindow? {
        guard let window else { return nil }
        let shown = programs ?? ProgramsWindow(access: access, parent: window)
        shown.onClose = { [weak self] in self?.programs = nil }
        programs = shown
        shown.present()
        return shown
    }

    /// The keyboard shortcuts window (made once).
    @discardableResult
    func showShortcuts() -> ShortcutsWindow? {
        guard let window else { return nil }
        let shown = shortcuts ?? ShortcutsWindow(groups: WindowShortcut.groups, parent: window)
        shortcuts = shown
        shown.present()
        return shown
    }

    /// What the About window says of the licence: the same as the package's copyright file.
    private static var license: String {
        L(
            "Sesame is free software, licensed under the Apache License, Version 2.0 (https://www.apache.org/licenses/LICENSE-2.0). It comes with absolutely no warranty. The libraries linked into it are under their own licences, listed in /usr/share/doc/sesame/copyright."
        )
    }

    /// The About window: the version, what Sesame is, the website, the licence.
    func showAbout() {
        guard let window else { return }
        about?.destroy()
        let dialog = AboutDialog(
            .init(
                programName: "Sesame", version: SesameVersion.current,
                comments: L("Sign in to the Microsoft identity platform from the Linux desktop."),
                website: documentation, websiteLabel: L("User guide"),
                authors: ["The Sesame maintainers"], copyright: "© 2026 The Sesame maintainers", iconName: "org.sesame.Sesame",
                license: Self.license),
            parent: window)
        about = dialog
        dialog.present()
    }
}
