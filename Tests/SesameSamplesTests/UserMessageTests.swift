import Foundation
import SesameCore
import SesameSamples
import SesameWindowModel
import Testing

/// The user's sentences for errors: made for them, with the service's code, never an error's
/// contents.
@Suite("The user's error sentences")
struct UserMessageTests {
    @Test("a refusal carrying a service code reads as Sesame's sentence with the code, not Core's text")
    func serviceCode() {
        var refused = AccountStoreError(
            .tokenRequestFailed, "The token request was refused: AADSTS7000215: Invalid client secret provided (s3cr3t).")
        refused.serviceCode = "AADSTS7000215"
        let text = UserMessage.text(for: refused)
        #expect(text != refused.description)
        #expect(text.hasSuffix(" (AADSTS7000215)"), "\(text)")
        #expect(!text.contains("Invalid client secret") && !text.contains("s3cr3t"), "\(text)")
        #expect(
            text == L("The identity service refused to give Sesame access for this account. Try again later, or sign in again.")
                + " (AADSTS7000215)")

        // A code Sesame knows: its own sentence (Core's advice, translated), once with its code.
        var mfa = AccountStoreError(.interactionRequired, "Sign in again: AADSTS50076: Due to a configuration change …")
        mfa.serviceCode = "AADSTS50076"
        #expect(
            UserMessage.text(for: mfa)
                == L("Your organization asks for another sign-in step (multi-factor authentication): sign in again.") + " (AADSTS50076)")

        var reset = AccountStoreError(.passwordResetRequested, "The user asked to reset their password.")
        reset.serviceCode = "AADB2C90118"
        #expect(UserMessage.text(for: reset) == L("You asked to reset your password.") + " (AADB2C90118)")

        // No service code: the sentence alone.
        #expect(
            UserMessage.text(for: AccountStoreError(.network, "Could not reach the identity service: connect refused"))
                == L(
                    "Could not reach the identity service. Check the network connection and try again."))
    }

    @Test("an unknown error gets the generic sentence naming only its type")
    func unknownError() {
        struct LeakyError: Error, CustomStringConvertible {
            var description: String { "refresh_token=0.AAAA-secret" }
        }
        let text = UserMessage.text(for: LeakyError())
        #expect(text == String(format: L("Something went wrong (%@). Try again."), "LeakyError"))
        #expect(!text.contains("secret"), "\(text)")
    }

    @Test("the task service's and the transport's errors: their status or host, not their reason")
    func otherErrors() throws {
        let refused = UserMessage.text(for: TaskServiceError(status: 503, reason: "upstream said: token=abc"))
        #expect(refused == L("The task service is not available right now; try again later.") + " (HTTP 503)")
        let unreachable = UserMessage.text(
            for: HTTPTransportError(url: try #require(URL(string: "https://login.example:8443/path?code=SECRET")), reason: "timed out"))
        #expect(unreachable == String(format: L("Could not reach %@. Check the network connection and try again."), "login.example:8443"))
        #expect(UserMessage.text(for: CancellationError()) == L("The request was cancelled."))
    }

    @Test("each way a connection fails reads as its own sentence, naming the host (and the proxy), in the user's language")
    func connectionFailures() throws {
        let url = try #require(URL(string: "https://login.contoso.test/common/oauth2/v2.0/token?code=SECRET"))
        func text(_ kind: HTTPTransportError.Kind, proxy: String? = nil) -> String {
            UserMessage.text(for: HTTPTransportError(url: url, reason: "details", kind: kind, proxy: proxy))
        }
        let host = "login.contoso.test"
        #expect(
            text(.connectionRefused)
                == String(format: L("%@ refused the connection: nothing answers there. Check the address, or try again later."), host))
        #expect(text(.noSuchHost) == String(format: L("There is no server named %@. Check the address and the network connection."), host))
        #expect(text(.networkUnreachable) == String(format: L("You are offline: %@ cannot be reached. Connect to a network."), host))
        #expect(
            text(.untrustedCertificate).hasPrefix(
                String(
                    format: L(
                        "The certificate of %@ is not trusted on this computer, so Sesame did not connect. If your organization inspects its traffic, ask IT to install its certificate authority."
                    ), host)))
        #expect(
            text(.proxyAuthenticationRequired, proxy: "proxy.corp:3128")
                == String(
                    format: L("The proxy at %@ asks for a sign-in. Add its user name and password to the network proxy settings."),
                    "proxy.corp:3128"))
        #expect(
            text(.proxyRefused, proxy: "proxy.corp:3128")
                == String(format: L("The proxy at %1$@ refused to connect to %2$@."), "proxy.corp:3128", host))
        #expect(
            text(.proxyUnreachable, proxy: "proxy.corp:3128")
                == String(format: L("The proxy at %@ cannot be reached. Check the network proxy settings."), "proxy.corp:3128"))
        let kinds: [HTTPTransportError.Kind] = [
            .unreachable, .connectionRefused, .noSuchHost, .networkUnreachable, .untrustedCertificate, .tlsFailed, .timedOut, .tooLarge,
            .brokenAnswer, .proxyUnreachable, .proxyRefused, .proxyAuthenticationRequired,
        ]
        #expect(Set(kinds.map { text($0, proxy: "proxy.corp:3128") }).count == kinds.count, "two kinds read the same")
        #expect(kinds.allSatisfy { !text($0).contains("SECRET") && !text($0).contains("details") })

        // The account store's network errors read as the failure underneath.
        var failure = AccountStoreError(.network, "Could not reach the identity service: the exchange failed")
        failure.transportFailure = HTTPTransportError(url: url, reason: "connection refused", kind: .connectionRefused)
        #expect(UserMessage.text(for: failure) == text(.connectionRefused))
    }
}
