import Foundation
import SesameCore
import SesameService
import Testing

@testable import SesameWindowModel

/// A Conditional Access rule asks for an authentication strength the sign-in did not meet: the
/// window, the command line, the account service's reply and `sesame doctor` say what would
/// meet it, and offer the browser where the sign-in window cannot (a passkey); never a token.
@Suite("The authentication strength refusal: what works, and where")
struct AuthenticationStrengthRefusalTests {
    static let configuration = RefusalNoticeTests.configuration

    static func error(_ code: String, strength: String?, claims: String? = nil) -> AccountStoreError {
        var error = AccountStoreError(.interactionRequired, "refused")
        error.serviceCode = code
        error.claimsChallenge = claims
        error.errorDescription =
            "\(code): Strong authentication is required."
            + (strength.map { " This app requires the authentication strength '\($0)'." } ?? "")
            + "\r\nTrace ID: 0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b\r\nCorrelation ID: 11111111-2222-3333-4444-555555555555"
        return error
    }

    @Test("phishing-resistant: the sentence names what works, the action is the browser, the command line adds the device code")
    func phishingResistant() throws {
        let notice = try #require(
            RefusalNotice(Self.error("AADSTS50074", strength: "Phishing-resistant MFA"), configuration: Self.configuration))
        #expect(notice.refusal == .authenticationStrengthRequired)
        #expect(notice.action == .continueInBrowser)
        #expect(
            notice.sentence.contains("a passkey or a security key (FIDO2), Windows Hello for Business or a certificate"),
            "\(notice.sentence)")
        #expect(notice.sentence.contains("A text message, a code or an Authenticator approval is not enough"))
        #expect(notice.sentence.hasSuffix("(AADSTS50074)"))
        let printed = notice.commandLineText
        #expect(printed.contains("`sesame login` without --device-code"), "\(printed)")
        #expect(printed.contains("`sesame login --device-code`"), "\(printed)")
        #expect(printed.contains("Authentication strength: Phishing-resistant MFA"), "\(printed)")
        #expect(printed.contains("Request Id: 0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"))
    }

    @Test("passwordless: Authenticator's phone sign-in counts, the browser for a passkey; MFA: sign in again, any second factor")
    func passwordlessAndMFA() throws {
        let passwordless = try #require(
            RefusalNotice(Self.error("AADSTS53003", strength: "Passwordless MFA"), configuration: Self.configuration))
        #expect(passwordless.action == .continueInBrowser)
        #expect(passwordless.sentence.contains("Microsoft Authenticator’s phone sign-in"), "\(passwordless.sentence)")
        #expect(passwordless.sentence.contains("A password with a code or an approval is not enough"))
        let mfa = try #require(
            RefusalNotice(Self.error("AADSTS50074", strength: "Multifactor authentication"), configuration: Self.configuration))
        #expect(mfa.action == .signInAgain, "the sign-in window meets the MFA strength")
        #expect(mfa.sentence.contains("a code from an authenticator app, a text message"), "\(mfa.sentence)")
        #expect(!mfa.sentence.contains("browser"))
    }

    @Test("a refresh's claims challenge naming the strength: the browser; the challenge itself is never shown")
    func claimsChallenge() throws {
        let challenge = #"{"access_token":{"capolids":{"essential":true,"values":["00000000-0000-0000-0000-000000000004"]}}}"#
        let error = Self.error("AADSTS50076", strength: nil, claims: challenge)
        let notice = try #require(RefusalNotice(error, configuration: Self.configuration))
        #expect(notice.action == .continueInBrowser)
        #expect(UserMessage.text(for: error) == notice.sentence, "the error bar says what the notice says")
        for text in [notice.sentence, notice.commandLineText] {
            #expect(!text.contains("capolids") && !text.contains("access_token"), "\(text)")
        }
    }

    @Test("the same refusal read off the service's page: its Troubleshooting details name the code and the strength")
    func page() throws {
        let page = """
            Troubleshooting details
            If you contact your administrator, send this info to them.
            Error Code: 50074
            Request Id: 0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b
            Correlation Id: 11111111-2222-3333-4444-555555555555
            Timestamp: 2026-12-02T06:00:00.000Z
            Message: AADSTS50074: Strong authentication is required. This app requires the authentication strength 'Phishing-resistant MFA'.
            """
        let notice = try #require(
            RefusalNotice(page: HelpDeskDetails(troubleshooting: page), authorizationURL: Self.configuration.authorizationURL))
        #expect(notice.action == .continueInBrowser)
        #expect(notice.sentence.contains("a passkey or a security key (FIDO2)"), "\(notice.sentence)")
        #expect(notice.details.authenticationStrength == .phishingResistantMfa)
        // A page that only blocks stays a block: the help desk.
        let block = try #require(
            RefusalNotice(
                page: HelpDeskDetails(troubleshooting: "Error Code: 53003\nRequest Id: 0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"),
                authorizationURL: nil))
        #expect(block.action == .contactHelpDesk)
    }

    @Test("through the account service to `sesame token`, and kept for `sesame doctor`: the strength survives, nothing else is added")
    func serviceAndDoctor() throws {
        let error = Self.error("AADSTS50074", strength: "Phishing-resistant MFA")
        let reply = try #require(RefusalMessage(error))
        let read = try #require(RefusalMessage(text: reply.text))
        let notice = try #require(RefusalNotice(read.storeError(.interactionRequired), configuration: Self.configuration))
        #expect(notice.action == .continueInBrowser)
        #expect(notice.sentence.contains("Windows Hello for Business or a certificate"), "\(notice.sentence)")

        let state = FileManager.default.temporaryDirectory.appending(path: "strength-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let environment = ["XDG_STATE_HOME": state.path, "HOME": state.path]
        notice.record(environment: environment)
        let kept = try #require(RefusalNotice.latest(environment: environment))
        #expect(kept.contains("Error code: AADSTS50074"))
        #expect(kept.contains("Authentication strength: Phishing-resistant MFA"), "\(kept)")
    }
}
