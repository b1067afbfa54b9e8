import Foundation
import SesameCore
import SesameSamples
import SesameService

/// The window as the account service's face: it signs accounts in for programs, lists the
/// user's decisions about them in the account menu, and drops an account signed out elsewhere
/// from its pages and menu at once. (The questions themselves are the ``AccessDialog``'s.)
extension MainWindow: ServiceSignIn {
    /// Serves `service`: its sign-ins in this window's pages, its decisions in the account menu.
    public func serve(_ service: AccountService) {
        service.signer = self
        accountMenu.access = service.access
    }

    /// Signs someone in for `accountType` on its sample's page (shown first).
    public func serviceSignIn(accountType: String) async -> Account? {
        guard let sample = model.samples.first(where: { $0.accountType == accountType }) else { return nil }
        show(sample.kind)
        guard let page = pages[sample.kind] else { return nil }
        bringForward()
        if let account = await page.session.restore(), !account.interactionRequired { return account }
        let account = await page.session.signIn()
        await page.appear()
        return account
    }

    /// Shows the window (raised), for a sign-in a program asked for.
    func bringForward() {
        advance(to: .complete)
        window.show()
        window.present()
    }

    /// Follows the store's events: an account removed anywhere leaves every page that showed it.
    func followStore() {
        storeEvents = Task { [weak self, store = model.store] in
            for await event in await store.events() {
                guard let self else { return }
                guard case .accountsDidChange(_, .removed(let account)) = event else { continue }
                for page in self.pages.values
                where page.session.account?.homeAccountID == account.homeAccountID && page.session.sample.accountType == account.accountType
                {
                    page.session.forget()
                }
                self.showAccount()
            }
        }
    }
}
