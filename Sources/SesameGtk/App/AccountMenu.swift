import FoundationEssentials
import SesameCore
import SesameSamples
import SesameService
import SesameSystem

/// The header's account button: who is signed in for the sample showing (or "Not signed in"),
/// and in its menu the user name, the tenant, what can be done about it — sign in, switch
/// account, sign out, forget sign-in data — and where sign-ins are kept when no keyring is.
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
    /// "Forget sign-in data".
    var onForget: (() -> Void)?

    private let name = Label("", xalign: 0)
    private let user = Label("", xalign: 0)
    private let tenant = Label("", xalign: 0)
    private let switchAccount = Button(L("Switch account"), accessibleName: L("Sign in as someone else"))
    private let signOut = Button(L("Sign out"), accessibleName: L("Sign out of this sample"))
    private let signIn = Button(L("Sign in"), accessibleName: L("Sign in to this sample"))
    private let programsHeading = Label(L("Programs with access"), xalign: 0)
    private let programs = ListBox()
    /// The kept decisions of programs using accounts (nil: no account service).
    var access: ProgramAccess? {
        didSet {
            access?.observe { [weak self] in self?.showPrograms() }
            showPrograms()
        }
    }
    /// The account shown.
    private var account: Account?

    /// - Parameter filesStorage: the folder sign-ins are kept in when no keyring is in use (the
    ///   menu says so); nil when a keyring keeps them.
    init(filesStorage: URL?) {
        button.accessibleName = L("Account")
        // A long name shortens with "…" rather than pushing the header's other buttons away.
        button.label.ellipsizeAtEnd()
        user.addStyleClass("dim-label")
        tenant.addStyleClass("dim-label")
        name.accessibleName = L("Signed-in user")
        for widget in [name, user, tenant, signIn, switchAccount, signOut] as [Widget] {
            button.content.pack(widget)
        }
        let forget = Button(L("Forget sign-in data"))
        button.content.pack(forget)
        programsHeading.setMarkup("<b>\(Markup.escaped(L("Programs with access")))</b>")
        programs.accessibleName = L("Programs with access")
        button.content.pack(programsHeading)
        button.content.pack(programs)
        if let filesStorage {
            let storage = Label(
                String(
                    formatting: L("No keyring is in use: sign-ins are kept in files under %@, readable by you only."), filesStorage.path),
                wrap: true, xalign: 0)
            storage.accessibleName = L("Where sign-ins are kept")
            storage.addStyleClass("dim-label")
            button.content.pack(storage)
        }
        button.content.showAll()
        // Each choice closes the menu first: what it starts (a sign-in page) takes the window.
        signIn.onClick { [weak self] in self?.chose(self?.onSignIn) }
        switchAccount.onClick { [weak self] in self?.chose(self?.onSwitchAccount) }
        signOut.onClick { [weak self] in self?.chose(self?.onSignOut) }
        forget.onClick { [weak self] in self?.chose(self?.onForget) }
        show(nil)
    }

    /// Shows `account` (nil: nobody is signed in) and what can be done about it.
    func show(_ account: Account?) {
        button.label.text = account?.displayName ?? L("Not signed in")
        button.tooltip = account.map { "\($0.displayName) <\($0.username)>" }
        name.setMarkup("<b>\(Markup.escaped(account?.displayName ?? L("Not signed in")))</b>")
        user.text = account?.username ?? ""
        tenant.text = account.map { String(formatting: L("Tenant: %@"), $0.realm) } ?? ""
        user.isVisible = account != nil
        tenant.isVisible = account != nil
        switchAccount.isVisible = account != nil
        signOut.isVisible = account != nil
        signIn.isVisible = account == nil
        self.account = account
        showPrograms()
    }

    /// Lists what the user decided about programs using the account shown, each with "Take back".
    func showPrograms() {
        programs.removeAll()
        let decisions = (access?.all ?? []).filter { $0.accountType == account?.accountType && $0.homeAccountID == account?.homeAccountID }
        for decision in decisions {
            let row = Box(vertical: false, spacing: 6)
            let what = decision.allowed ? L("always allowed") : L("denied")
            let scopes = decision.scopes.map(DisplayText.escaped).joined(separator: ", ")
            let line = "\(DisplayText.isolated(decision.program.name)) — \(scopes): \(what)"
            let label = Label(line, wrap: true, xalign: 0)
            label.tooltip = DisplayText.escaped(decision.program.id)
            row.pack(label, expand: true)
            row.pack(
                Button(L("Take back"), accessibleName: String(formatting: L("Take back the decision about %@"), decision.program.id)) {
                    [weak self] in self?.access?.revoke(decision)
                })
            programs.append(row)
        }
        programsHeading.isVisible = !decisions.isEmpty
        programs.isVisible = !decisions.isEmpty
        if !decisions.isEmpty { programs.showAll() }
    }

    private func chose(_ action: (() -> Void)?) {
        button.close()
        action?()
    }

}
