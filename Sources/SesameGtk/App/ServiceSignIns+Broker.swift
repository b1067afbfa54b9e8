import FoundationEssentials
import SesameCore
import SesameService

/// The window as the identity broker's sign-in: a program asked for a token for its own app, and
/// the window, raised, shows the identity service's pages for that app — its client id, the
/// native-client redirect caught by the sign-in view's navigation policy — with "Continue in your
/// browser" as on every sign-in page.
extension ServiceSignIns: BrokerSignIn {
    func brokerSignIn(
        accountType: String, program: ProgramIdentity, parameters: [String: String]
    ) async throws(AccountStoreError)
        -> Account
    {
        window.window.show()
        window.window.present()
        window.signIn.requestedBy = program.name
        defer { window.signIn.requestedBy = nil }
        var agent: any SignInUserAgent = window.signIn
        while true {
            do {
                let account = try await window.model.store.signIn(accountType: accountType, parameters: parameters, using: agent)
                window.model.trace.record("token-acquired", [("accountType", accountType)])
                return account
            } catch  where error.code == .handedOffToBrowser {
                // "Continue in your browser": the same sign-in starts over in the system browser.
                window.model.trace.record("sign-in-moved-to-browser", [("accountType", accountType)])
                agent = window.browserAgent
            }
        }
    }

    func cancelBrokerSignIn() {
        guard window.signIn.requestedBy != nil else { return }
        window.signIn.cancel()
    }
}
