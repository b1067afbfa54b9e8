import Foundation
import SesameCore
import SesameCoreTestSupport
import Testing

/// A Conditional Access rule that asks for an authentication strength the sign-in did not meet:
/// the person reads what would meet it (and that a passkey needs the browser for now), never a
/// code of the service's beyond its error code, nor a token.
@Suite("An authentication strength the sign-in did not meet")
struct AuthenticationStrengthTests {
    /// What the emulator says on its refusal page and redirect (Microsoft documents no code).
    static func unmet(_ name: String) -> String {
        "AADSTS50074: Strong authentication is required and the user did not pass the MFA challenge. This app requires the "
            + "authentication strength '\(name)'.\r\nTrace ID: 0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b\r\n"
            + "Correlation ID: 11111111-2222-3333-4444-555555555555\r\nTimestamp: 2026-12-02 06:00:00Z"
    }

    @Test(
        "a sign-in refused for its strength says what works: a passkey or security key for the strongest, any second factor for MFA",
        arguments: [
            (
                "Phishing-resistant MFA", AuthenticationStrength.phishingResistantMfa,
                "a passkey or a security key (FIDO2), Windows Hello for Business or a certificate"
            ),
            (
                "Passwordless MFA", .passwordlessMfa,
                "a passkey or a security key (FIDO2), Microsoft Authenticator's phone sign-in, Windows Hello for Business or a certificate"
            ),
            ("Multifactor authentication", .mfa, "the Microsoft Authenticator app, a code from an authenticator app, a text message"),
        ])
    func interactive(name: String, strength: AuthenticationStrength, works: String) async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await fixture.configure()
        let provider = fixture.provider
        let agent = FakeUserAgent { session, _ in
            [.navigate(provider.errorRedirect(for: session.authorizationURL, error: "interaction_required", description: Self.unmet(name)))]
        }
        do {
            _ = try await fixture.store.signIn(accountType: fixture.accountType, using: agent)
            Issue.record("a refused sign-in signed someone in")
        } catch {
            #expect(error.serviceCode == "AADSTS50074")
            #expect(error.requiredAuthenticationStrength == strength)
            #expect(TenantRefusal(error) == .authenticationStrengthRequired)
            #expect(error.message.contains(works), "\(error.message)")
            #expect(error.message.contains("sign in with your browser") == !strength.embeddedViewCanMeet, "\(error.message)")
            #expect(!error.message.contains("Trace ID") && !error.message.contains("0f1e2d3c"), "the service's text in the sentence")
            let details = HelpDeskDetails(error, configuration: nil)
            #expect(details.text.contains("Authentication strength: \(strength.displayName)"), "\(details.text)")
            #expect(details.requestID == "0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b")
        }
    }

    @Test("a refresh refused for a strength (AADSTS50076 and its claims challenge): the sentence says what works, no token in it")
    func refresh() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        let account = try await fixture.signIn()
        fixture.clock.advance(by: 7200)
        let challenge = #"{"access_token":{"capolids":{"essential":true,"values":["00000000-0000-0000-0000-000000000004"]}}}"#
        fixture.provider.refreshError = [
            "error": "invalid_grant", "suberror": "basic_action", "claims": challenge, "error_codes": [50076],
            "error_description": "AADSTS50076: Due to a configuration change made by your administrator, you must use MFA.",
        ]
        let refreshTokens = try fixture.storedCache().refreshTokens.values.map(\.secret.revealed)
        #expect(!refreshTokens.isEmpty)
        do {
            _ = try await fixture.store.accessToken(for: account)
            Issue.record("a refused refresh gave a token")
        } catch let error as AccountStoreError {
            #expect(error.code == .interactionRequired)
            #expect(error.claimsChallenge == challenge, "the next sign-in must still send the challenge")
            #expect(error.requiredAuthenticationStrength == .phishingResistantMfa)
            #expect(error.message.contains("a passkey or a security key (FIDO2), Windows Hello for Business or a certificate"))
            #expect(error.message.contains("A text message, a code or an Authenticator approval is not enough"))
            for secret in refreshTokens { #expect(!error.message.contains(secret) && !error.description.contains(secret)) }
            #expect(!error.message.contains("capolids"))
        }
    }

    @Test("a plain block or MFA demand names no strength: their own sentences, the help desk for the block")
    func noStrength() async throws {
        var block = AccountStoreError(.authorizationFailed, "refused")
        block.serviceCode = "AADSTS53003"
        block.errorDescription = "AADSTS53003: Access has been blocked by Conditional Access policies."
        #expect(block.requiredAuthenticationStrength == nil)
        #expect(TenantRefusal(block) == .blockedByPolicy)
        var mfa = AccountStoreError(.interactionRequired, "refused")
        mfa.serviceCode = "AADSTS50076"
        mfa.errorDescription = "AADSTS50076: you must use multi-factor authentication to access '00000003-0000-0000-c000-000000000000'."
        #expect(mfa.requiredAuthenticationStrength == nil, "\"multi-factor authentication\" is no strength's name")
        #expect(TenantRefusal(mfa) == .multiFactorRequired)
        #expect(TenantRefusal(serviceCode: "AADSTS50074") == .multiFactorRequired)
        // A strength named by a code that cannot carry one counts for nothing.
        var locked = AccountStoreError(.authorizationFailed, "refused")
        locked.serviceCode = "AADSTS50053"
        locked.errorDescription = "AADSTS50053: Phishing-resistant MFA"
        #expect(locked.requiredAuthenticationStrength == nil)
        #expect(TenantRefusal(locked) == .accountLocked)
    }

    @Test("the strength is read from what names it: the named one first, else the strongest; nothing past 8 KiB")
    func reading() {
        #expect(
            AuthenticationStrength(namedIn: "requires the authentication strength 'Passwordless MFA': not Phishing-resistant MFA")
                == .passwordlessMfa)
        #expect(AuthenticationStrength(namedIn: "Authentication strength: Multifactor authentication") == .mfa)
        #expect(
            AuthenticationStrength(namedIn: "policy 00000000-0000-0000-0000-000000000003 or 00000000-0000-0000-0000-000000000004")
                == .phishingResistantMfa)
        #expect(AuthenticationStrength(namedIn: "you must use multifactor authentication") == nil)
        #expect(AuthenticationStrength(namedIn: String(repeating: "x", count: 8192) + "Phishing-resistant MFA") == nil)
    }
}
