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
        window.show()
        window.present()
        return try await signIn.signingIn(for: .program(program.name)) { () async throws(AccountStoreError) -> Account in
            var agent: any SignInUserAgent = signIn
            while true {
                do throws(AccountStoreError) {
                    let account = try await model.store.signIn(accountType: accountType, parameters: parameters, using: agent)
                    model.trace.record("token-acquired", [("accountType", accountType)])
                    return account
                } catch  where error.code == .handedOffToBrowser {
                    // "Continue in your browser": the same sign-in starts over in the system browser.
                    model.trace.record("sign-in-moved-to-browser", [("accountType", accountType)])
                    agent = browserAgent
                }
            }
        }
    }

    func cancelBrokerSignIn() {
        guard case .program = signIn.purpose else { return }
        signIn.cancel()
    }
}
