import FoundationEssentials
import SesameSamples
import SesameWindowModel

/// The window's title bar: the samples' tabs (locked while a sign-in is up: it belongs to the
/// page it began on), the account of the page showing, and the primary menu.
@MainActor
final class WindowHeader {
    /// The bar.
    let bar = HeaderBar(title: "Sesame")
    /// The samples' tabs.
    let switcher: StackSwitcher
    /// Who is signed in for the page showing, and what can be done about it.
    let accountMenu: AccountMenu
    /// The app's actions, Keyboard Shortcuts, About.
    let primaryMenu: PrimaryMenu

    /// The header of `window`, switching `samples`.
    init(window: Window, samples: Stack, filesStorage: URL?, documentation: URL?) {
        switcher = StackSwitcher(samples)
        switcher.accessibleName = L("Samples")
        accountMenu = AccountMenu(filesStorage: filesStorage)
        primaryMenu = PrimaryMenu(window: window, documentation: documentation)
        bar.setCustomTitle(switcher)
        bar.packEnd(primaryMenu.button)
        bar.packEnd(accountMenu.button)
    }

    /// Whether the tabs wait (a sign-in is up).
    var isLocked: Bool {
        get { !switcher.isSensitive }
        set { switcher.isSensitive = !newValue }
    }
}
