import FoundationEssentials
import SesameCore
import SesameSamples
import SesameService
import SesameSystem
import SesameWindowModel

/// The header's account button: who is signed in for the sample showing (or "Not signed in"),
/// and in its menu the user name, the tenant, and as menu items what can be done about it — sign
/// in, switch account, sign out — then this computer's registration with the organization
/// (register, remove), and where sign-ins are kept when no keyring is. (The programs the user
/// answered are the primary menu's "Programs with Access".)
@MainActor
final class AccountMenu {
    /// The header's menu button.
    let button = MenuButton(title: "")
    /// "Sign in" (shown while nobody is signed in).
    var onSignIn: (() -> Void)?
    /// "Switch account".
    var onSwitchAccount: (() -> Void)?
    /// "Sign out".
    var onSignOut: (() -> Void)?
    /// "Register This Computer…".
    var onRegisterComputer: (() -> Void)?
    /// "Remove This Computer’s Registration…".
    var onRemoveRegistration: (() -> Void)?
    /// The menu opened or closed: what it shows may have changed in another program
    /// (`sesame device register` or `remove` while the window is open).
    var onToggle: (() -> Void)?

    private let name = Label("", xalign: 0)
    private let user = Label("", xalign: 0)
    private let tenant = Label("", xalign: 0)
    private let switchAccount = MenuItem(L("Switch Account…"))
    private let signOut = MenuItem(L("Sign Out"))
    private let signIn = MenuItem(L("Sign In…"))
    private let deviceSeparator = Separator()
    private let device = Label("", wrap: true, xalign: 0)
    private let registerComputer = MenuItem(L("Register This Computer…"))
    private let removeRegistration = MenuItem(L("Remove This Computer’s Registration…"))

    /// - Parameter filesStorage: the folder sign-ins are kept in when no keyring is in use (the
    ///   menu says so); nil when a keyring keeps them.
    init(filesStorage: URL?) {
        button.accessibleName = L("Account")
        // A long name shortens with "…" rather than pushing the header's other buttons away.
        button.label.ellipsizeAtEnd()
        user.addStyleClass("dim-label")
        tenant.addStyleClass("dim-label")
        name.accessibleName = L("Signed-in user")
        // What a screen reader says, and the tests press.
        switchAccount.accessibleName = L("Sign in as someone else")
        signOut.accessibleName = L("Sign out of this sample")
        signIn.accessibleName = L("Sign in to this sample")
        let who = Box(vertical: true, spacing: 2, [name, user, tenant])
        who.setMargin(6)
        device.accessibleName = L("This computer’s registration")
        device.addStyleClass("dim-label")
        device.limitWidth(characters: 40)
        device.setMargin(6)
        let widgets: [Widget] = [
            who, Separator(), signIn, switchAccount, signOut, deviceSeparator, device, registerComputer, removeRegistration,
        ]
        for widget in widgets { button.content.pack(widget) }
        if let filesStorage {
            let storage = Label(
                String(
                    formatting: L("No keyring is in use: sign-ins are kept in files under %@, readable by you only."), filesStorage.path),
                wrap: true, xalign: 0)
            storage.accessibleName = L("Where sign-ins are kept")
            storage.addStyleClass("dim-label")
            storage.limitWidth(characters: 40)
            button.content.pack(Separator())
            button.content.pack(storage)
        }
        button.content.showAll()
        // Each choice closes the menu first: what it starts (a sign-in page) takes the window.
        signIn.onClick { [weak self] in self?.chose(self?.onSignIn) }
        switchAccount.onClick { [weak self] in self?.chose(self?.onSwitchAccount) }
        signOut.onClick { [weak self] in self?.chose(self?.onSignOut) }
        registerComputer.onClick { [weak self] in self?.chose(self?.onRegisterComputer) }
        removeRegistration.onClick { [weak self] in self?.chose(self?.onRemoveRegistration) }
        button.onToggle { [weak self] in self?.onToggle?() }
        show(nil)
        for widget in [deviceSeparator, device, registerComputer, removeRegistration] as [Widget] { widget.hide() }
    }

    /// Whether the menu offers "Sign in" (nobody is signed in to the sample showing).
    var offersSignIn: Bool { signIn.isVisible }

    /// Shows this computer's registration (nil: not registered) and what can be done about it;
    /// never called where the window cannot register, so the section stays hidden there.
    func showDevice(_ status: DeviceIdentity.Status?) {
        device.text =
            status.map { status in
                status.userPrincipalName.map { String(formatting: L("This computer is registered with your organization by %@."), $0) }
                    ?? L("This computer is registered with your organization.")
            } ?? L("This computer is not registered with your organization.")
        device.tooltip = status.map { String(formatting: L("Device %@"), $0.deviceID) }
        deviceSeparator.show()
        device.show()
        registerComputer.isVisible = status == nil
        removeRegistration.isVisible = status != nil
    }

    /// Shows `account` (nil: nobody is signed in — `nobody` says so, or that a sign-in waits for
    /// Next) and what can be done about it.
    func show(_ account: Account?, nobody: String = L("Not signed in")) {
        button.label.text = account?.displayName ?? nobody
        button.tooltip = account.map { "\($0.displayName) <\($0.username)>" }
        name.setMarkup("<b>\(Markup.escaped(account?.displayName ?? nobody))</b>")
        user.text = account?.username ?? ""
        tenant.text = account.map { String(formatting: L("Tenant: %@"), $0.realm) } ?? ""
        user.isVisible = account != nil
        tenant.isVisible = account != nil
        switchAccount.isVisible = account != nil
        signOut.isVisible = account != nil
        signIn.isVisible = account == nil
    }

    private func chose(_ action: (() -> Void)?) {
        button.close()
        action?()
    }
}
