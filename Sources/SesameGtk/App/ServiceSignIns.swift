import FoundationEssentials
import SesameCore
import SesameSamples
import SesameService
import SesameWindowModel

/// The window as the account service's sign-in: a program asked for an account of a type, and
/// the window, raised, signs someone in on that type's page.
@MainActor
final class ServiceSignIns: ServiceSignIn {
    unowned let window: MainWindow

    init(window: MainWindow) { self.window = window }

    /// Signs someone in for `accountType` on its sample's page (shown first).
    func serviceSignIn(accountType: String) async -> Account? {
        guard let sample = window.model.samples.first(where: { $0.accountType == accountType }) else { return nil }
        window.show(sample.kind)
        guard let page = window.samples[sample.kind] else { return nil }
        window.window.show()
        window.window.present()
        if let account = await page.session.restore(), !account.interactionRequired { return account }
        let account = await page.session.signIn()
        await page.appear()
        return account
    }
}
