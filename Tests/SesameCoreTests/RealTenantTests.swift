import Foundation
import SesameCore
import SesameCoreTestSupport
import Testing

/// What a real tenant does that a friendly one does not, and what the client does about it.
@Suite("A real tenant's answers")
struct RealTenantTests {
    @Test("B2C answers a client-id scope with \"/\": the token is cached under the scopes asked for, so the next call needs no refresh")
    func slashScope() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        fixture.provider.answeredScope = "/"
        let account = try await fixture.signIn()
        let before = fixture.provider.transport.requests.count
        let token = try await fixture.store.accessToken(for: account)
        _ = try await fixture.store.accessToken(for: account)
        #expect(fixture.provider.transport.requests.count == before, "every call refreshed: the cache looked for the scopes as answered")
        #expect(token.scopes == ["User.Read"])
        #expect(try fixture.storedCache().accessTokens.values.first?.target == "User.Read")
    }

    @Test("MFA demanded on refresh (AADSTS50076 with a claims challenge): the next interactive sign-in sends the claims")
    func claimsChallenge() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        let account = try await fixture.signIn()
        fixture.clock.advance(by: 7200)
        let challenge = #"{"access_token":{"capolids":{"essential":true,"values":["c1c7a2e0-0001-4a1b-9c2d-3e4f5a6b7c8d"]}}}"#
        fixture.provider.refreshError = [
            "error": "invalid_grant", "suberror": "basic_action", "claims": challenge, "error_codes": [50076],
            "error_description": "AADSTS50076: Due to a configuration change made by your administrator, you must use MFA.",
        ]
        await #expect { try await fixture.store.accessToken(for: account) } throws: { error in
            guard let error = error as? AccountStoreError else { return false }
            return error.code == .interactionRequired && error.claimsChallenge == challenge && error.serviceCode == "AADSTS50076"
                && error.message.contains("multi-factor authentication")
        }
        fixture.provider.refreshError = nil
        let agent = FakeUserAgent(provider: fixture.provider)
        _ = try await fixture.store.signIn(accountType: fixture.accountType, using: agent)
        let sent = URLComponents(url: agent.presented[0].authorizationURL, resolvingAgainstBaseURL: false)?.queryItems
        #expect(sent?.first { $0.name == "claims" }?.value == challenge)
        // Answered once: the sign-in after that sends no claims.
        let again = FakeUserAgent(provider: fixture.provider)
        _ = try await fixture.store.signIn(accountType: fixture.accountType, using: again)
        #expect(
            URLComponents(url: again.presented[0].authorizationURL, resolvingAgainstBaseURL: false)?.queryItems?.contains {
                $0.name == "claims"
            } == false)
    }

    @Test("a throttled token endpoint (429, Retry-After) is waited out once when the wait is short, and reported when it is long")
    func throttled() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        let account = try await fixture.signIn()
        fixture.clock.advance(by: 7200)
        fixture.provider.throttle(count: 1, retryAfter: 1)
        let refreshed = try await fixture.store.accessToken(for: account)
        #expect(!refreshed.secret.revealed.isEmpty)

        fixture.clock.advance(by: 7200)
        fixture.provider.throttle(count: 1, retryAfter: 600)
        let tokenRequests = { fixture.provider.transport.requests.filter { $0.url.path.hasSuffix("/token") }.count }
        let asked = tokenRequests()
        await #expect { try await fixture.store.accessToken(for: account) } throws: { error in
            guard let error = error as? AccountStoreError else { return false }
            return error.code == .throttled && error.retryAfter == .seconds(600) && error.serviceCode == "AADSTS50196"
                && error.message.contains("600 seconds")
        }
        // Reported at once: the service was asked once, not again after a ten-minute wait.
        #expect(tokenRequests() - asked == 1, "a ten-minute Retry-After was waited out")
        #expect(try await fixture.store.accounts(ofType: fixture.accountType).count == 1, "throttling signed the user out")
    }

    @Test(
        "codes a person can act on read as sentences that say what to do",
        arguments: [
            ("AADSTS50194", "tenant's authority"), ("AADSTS90094", "administrator"), ("AADSTS50076", "multi-factor"),
            ("AADB2C90088", "another user flow"),
        ])
    func advice(code: String, says: String) async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await fixture.configure()
        let provider = fixture.provider
        let agent = FakeUserAgent { session, _ in
            [
                .navigate(
                    provider.errorRedirect(for: session.authorizationURL, error: "invalid_request", description: "\(code): service text"))
            ]
        }
        await #expect { try await fixture.store.signIn(accountType: fixture.accountType, using: agent) } throws: { error in
            guard let error = error as? AccountStoreError else { return false }
            return error.serviceCode == code && error.message.contains(says) && error.description.contains(code)
        }
    }
}
