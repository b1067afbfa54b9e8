import FoundationEssentials
import SesameCore
import SesameSamples
import SesameService
import SesameWindowModel

/// The window as the account service's face: it signs accounts in for programs
/// (``ServiceSignIns``), lists the user's decisions about them (the primary menu's Programs with Access), and drops an
/// account signed out elsewhere from its pages and menu at once. (The questions themselves are
/// the ``AccessDialog``'s.)
extension MainWindow {
    /// Serves `service`: its sign-ins in this window's pages, its decisions in the primary menu.
    public func serve(_ service: AccountService) {
        service.signer = serviceSignIns
        primaryMenu.access = service.access
    }

    /// Follows the store's events: an account removed anywhere leaves every page that showed it.
    func followStore() {
        storeEvents = Task { [weak self, store = model.store] in
            for await event in await store.events() {
                guard let self else { return }
                guard case .accountsDidChange(_, .removed(let account)) = event else { continue }
                self.samples.forget(account)
                self.showAccount()
            }
        }
    }
}
