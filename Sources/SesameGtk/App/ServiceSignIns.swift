import FoundationEssentials
import SesameCore
import SesameSamples
import SesameService
import SesameWindowModel

/// The window as the account service's sign-in: a program asked for an account of a type, and
/// the window, raised, signs someone in on that type's page. It holds the parts it uses — the
/// model, the GTK window it raises, the sign-in page and the system browser — and a way to show
/// a sample's page; nothing else of the window.
@MainActor
final class ServiceSignIns: ServiceSignIn {
    let model: AppModel
    let window: Window
    let signIn: SignInPane
    let browserAgent: BrowserSignInAgent
    /// Shows a sample's page, as its tab does, and returns it (nil: none is built).
    private let showPage: (Sample.Kind) -> (any SamplePage)?

    init(
        model: AppModel, window: Window, signIn: SignInPane, browserAgent: BrowserSignInAgent,
        showPage: @escaping (Sample.Kind) -> (any SamplePage)?
    ) {
        self.model = model
        self.window = window
        self.signIn = signIn
        self.browserAgent = browserAgent
        self.showPage = showPage
    }

    /// Signs someone in for `accountType` on its sample's page (shown first).
    func serviceSignIn(accountType: String) async -> Account? {
        guard let sample = model.samples.first(where: { $0.accountType == accountType }), let page = showPage(sample.kind) else {
            return nil
        }
        window.show()
        window.present()
        if let account = await page.session.restore(), !account.interactionRequired { return account }
        let account = await page.session.signIn()
        await page.appear()
        return account
    }
}
