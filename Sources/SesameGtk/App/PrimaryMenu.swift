import FoundationEssentials
import SesameSamples

/// The header's primary menu (F10): Keyboard Shortcuts and About Sesame, as every GNOME app has.
@MainActor
final class PrimaryMenu {
    /// The header's menu button.
    let button = MenuButton(iconName: "open-menu-symbolic")
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
        let shortcutsButton = Button(L("Keyboard Shortcuts"))
        let aboutButton = Button(L("About Sesame"))
        for item in [shortcutsButton, aboutButton] {
            item.addStyleClass("flat")
            button.content.pack(item)
        }
        button.content.showAll()
        shortcutsButton.onClick { [weak self] in
            self?.button.close()
            self?.showShortcuts()
        }
        aboutButton.onClick { [weak self] in
            self?.button.close()
            self?.showAbout()
        }
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
