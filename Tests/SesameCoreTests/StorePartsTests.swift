import Foundation
import Logging
import SesameCoreTestSupport
import Testing

@testable import SesameCore

/// The parts the account store orchestrates, each on its own: token-request values, the token
/// endpoint client, the id_token verifier and the cache transaction.
@Suite("The account store's parts")
struct StorePartsTests {
    static let request = AuthorizationRequest(configuration: FakeIdentityProvider().configuration)

    @Test("token requests put their fields on the wire in order and print every secret redacted")
    func tokenRequests() {
        let code = AuthorizationCodeRequest(code: Secret("THE-CODE"), answering: Self.request)
        #expect(code.formFields.map(\.0) == ["client_id", "grant_type", "code", "redirect_uri", "code_verifier", "scope", "client_info"])
        #expect(code.formFields.first { $0.0 == "code_verifier" }?.1 == Self.request.proofKey.verifier.revealed)
        let refresh = RefreshTokenRequest(
            clientID: "c", refreshToken: Secret("THE-RT"), scopes: ["openid", "User.Read"], requestsClientInfo: false)
        #expect(refresh.formFields.map(\.0) == ["client_id", "grant_type", "refresh_token", "scope"])
        for text in ["\(code)", "\(refresh)", String(reflecting: code)] {
            #expect(!text.contains("THE-CODE") && !text.contains("THE-RT") && !text.contains(Self.request.proofKey.verifier.revealed))
        }
        #expect("\(refresh)".contains("grant_type=refresh_token"))
    }

    @Test("a sign-in, a silent token and a forced refresh send only authorization_code and refresh_token grants")
    func onlyTwoGrants() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        let account = try await fixture.signIn()
        _ = try await fixture.store.accessToken(for: account)
        _ = try await fixture.store.accessToken(for: account, forceRefresh: true)
        let grants = fixture.provider.transport.requests.filter { $0.url.path.hasSuffix("/token") }.compactMap { request in
            String(decoding: request.body ?? Data(), as: UTF8.self).split(separator: "&").first { $0.hasPrefix("grant_type=") }
                .map { String($0.dropFirst("grant_type=".count)) }
        }
        #expect(grants == ["authorization_code", "refresh_token"])
    }

    @Test("the token endpoint client reads a token, types a refusal, and says when the answer is no token response")
    func tokenEndpointClient() async throws {
        let configuration = FakeIdentityProvider().configuration
        func send(_ response: HTTPResponse) async -> Result<TokenResponse, AccountStoreError> {
            let client = TokenEndpointClient(transport: FakeTransport { _ in response }, logger: Logger(label: "test"))
            do {
                return .success(
                    try await client.send(
                        RefreshTokenRequest(clientID: "c", refreshToken: Secret("rt"), scopes: [], requestsClientInfo: true),
                        configuration: configuration, accountType: "t", homeAccountID: "h"))
            } catch {
                return .failure(error)
            }
        }
        let ok = await send(json(["access_token": "at", "token_type": "Bearer", "expires_in": 3600]))
        #expect((try? ok.get())?.accessToken.revealed == "at")

        let refused = await send(
            json(
                ["error": "invalid_grant", "error_description": "AADSTS70000: The grant is invalid.", "error_codes": [70000]], status: 400))
        guard case .failure(let refusal) = refused else {
            Issue.record("a refusal was read as a token")
            return
        }
        #expect(refusal.code == .interactionRequired)
        #expect(refusal.serviceCode == "AADSTS70000")
        #expect(refusal.homeAccountID == "h")

        let html = await send(
            HTTPResponse(status: 502, headers: ["Content-Type": "text/html"], body: Data("<html>Bad gateway</html>".utf8)))
        guard case .failure(let unreadable) = html else {
            Issue.record("HTML was read as a token")
            return
        }
        #expect(unreadable.code == .invalidResponse)
        #expect(unreadable.message.contains("HTTP 502"))

        let down = TokenEndpointClient(
            transport: FakeTransport { _ in throw URLError(.cannotConnectToHost) }, logger: Logger(label: "test"))
        await #expect {
            try await down.send(
                AuthorizationCodeRequest(code: Secret("c"), answering: Self.request), configuration: configuration, accountType: "t")
        } throws: { error in
            (error as? AccountStoreError)?.code == .network
        }
    }

    @Test("the id_token verifier checks against the published keys and refetches them once after a rollover")
    func verifier() async throws {
        let provider = FakeIdentityProvider()
        let verifier = IDTokenVerifier(transport: provider.transport, validator: IDTokenValidator(), logger: Logger(label: "test"))
        let claims = try await verifier.claims(
            of: Secret(provider.idToken(nonce: "n")), configuration: provider.configuration, expectedNonce: "n", required: true,
            now: provider.now)
        #expect(claims?.objectID == provider.userObjectID)
        provider.rollKeysOver()
        _ = try await verifier.claims(
            of: Secret(provider.idToken(nonce: nil)), configuration: provider.configuration, expectedNonce: nil, required: true,
            now: provider.now)
        #expect(provider.transport.requests.filter { $0.url.path.hasSuffix("/keys") }.count == 2)
        await #expect {
            try await verifier.claims(of: nil, configuration: provider.configuration, expectedNonce: nil, required: true, now: provider.now)
        } throws: { error in
            (error as? AccountStoreError)?.code == .invalidIDToken
        }
    }

    @Test("a cache transaction writes only when asked, and sets unreadable bytes aside")
    func cacheTransaction() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let storage = FileTokenStorage(directory: directory)
        let transaction = TokenCacheTransaction(storage: storage, logger: Logger(label: "test"), rescue: RefreshRescue(directory: nil))
        _ = try transaction.run(group: "g", write: false) { cache in cache.nextSignInPrompt = "login" }
        #expect(try transaction.run(group: "g", write: false) { $0.nextSignInPrompt }.value == nil, "a read-only transaction wrote")
        _ = try transaction.run(group: "g", write: true) { cache in cache.nextSignInPrompt = "login" }
        #expect(try transaction.run(group: "g", write: false) { $0.nextSignInPrompt }.value == "login")

        try Data("{ not json".utf8).write(to: storage.fileURL(group: "g"))
        let recovered = try transaction.run(group: "g", write: false) { $0.nextSignInPrompt }
        #expect(recovered.value == nil)
        let setAside = try #require(recovered.setAsideAt)
        #expect(try String(contentsOfFile: setAside, encoding: .utf8) == "{ not json")
    }
}
