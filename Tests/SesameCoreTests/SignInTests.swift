import Foundation
import SesameCore
import Testing
import _CryptoExtras

@Suite("Interactive sign-in through the account store")
struct SignInTests {
    @Test("a sign-in stores one account keyed by client_info's uid.utid; signing in again updates it")
    func signInTwice() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        let events = await fixture.store.events()
        let first = try await fixture.signIn()
        #expect(first.homeAccountID == "\(fixture.provider.uid).\(fixture.provider.tenantID)")
        #expect(first.username == "alex@contoso.onmicrosoft.com")
        #expect(first.name == "Alex Wilber")
        #expect(first.environment == "login.microsoftonline.com")
        #expect(first.realm == "common")
        _ = try await fixture.signIn()
        #expect(try await fixture.store.accounts(ofType: fixture.accountType).count == 1)

        var iterator = events.makeAsyncIterator()
        guard case .accountsDidChange(_, .added(let added)) = await iterator.next() else { Issue.record("no added event"); return }
        #expect(added == first)
        guard case .accountsDidChange(_, .updated) = await iterator.next() else { Issue.record("no updated event"); return }

        let token = fixture.provider.transport.requests.last { $0.url.path.hasSuffix("/token") }!
        #expect(token.form["grant_type"] == "authorization_code")
        #expect(token.form["client_info"] == "1")
        #expect(token.form["code_verifier"]?.count == 43)
        #expect(token.form["client_secret"] == nil)
        #expect(token.form["redirect_uri"] == "https://login.microsoftonline.com/common/oauth2/nativeclient")
    }

    @Test("a second user is a second account")
    func twoUsers() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        _ = try await fixture.signIn()
        fixture.provider.uid = "11111111-2222-3333-4444-555555555555"
        fixture.provider.username = "megan@contoso.onmicrosoft.com"
        _ = try await fixture.signIn()
        let accounts = try await fixture.store.accounts(ofType: fixture.accountType)
        #expect(accounts.map(\.username) == ["alex@contoso.onmicrosoft.com", "megan@contoso.onmicrosoft.com"])
    }

    @Test("look-alike URLs are not handled and nothing is redeemed", arguments: [
        "https://evil.example/?x=https://login.microsoftonline.com/common/oauth2/nativeclient?code=1",
        "https://login.microsoftonline.com.evil.example/common/oauth2/nativeclient?code=1",
    ])
    func lookAlikeNotHandled(url: String) async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await fixture.configure()
        let pending = try await fixture.store.prepareAuthorization(accountType: fixture.accountType)
        let realRedirect = fixture.provider.redirect(for: pending.url)
        let state = URLComponents(url: realRedirect, resolvingAgainstBaseURL: false)!.queryItems!.first { $0.name == "state" }!.value!
        let lookAlike = URL(string: url + "&state=" + state)!
        #expect(!pending.isRedirect(lookAlike))
        #expect(try await fixture.store.handleRedirect(lookAlike) == nil)
        #expect(fixture.provider.transport.requests.isEmpty)
        // The real redirect still works afterwards: the pending request was not consumed.
        #expect(try await fixture.store.handleRedirect(realRedirect) != nil)
    }

    @Test("a redirect whose state matches no pending sign-in is refused before any token request")
    func stateMismatch() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await fixture.configure()
        let pending = try await fixture.store.prepareAuthorization(accountType: fixture.accountType)
        var components = URLComponents(url: fixture.provider.redirect(for: pending.url), resolvingAgainstBaseURL: false)!
        components.queryItems = components.queryItems!.map { $0.name == "state" ? URLQueryItem(name: "state", value: "forged") : $0 }
        await #expect { try await fixture.store.handleRedirect(components.url!) } throws: { error in
            (error as? AccountStoreError)?.code == .stateMismatch
        }
        components.queryItems = components.queryItems!.filter { $0.name != "state" }
        await #expect { try await fixture.store.handleRedirect(components.url!) } throws: { error in
            (error as? AccountStoreError)?.code == .stateMismatch
        }
        #expect(fixture.provider.transport.requests.isEmpty)
        #expect(try await fixture.store.accounts(ofType: fixture.accountType).isEmpty)
    }

    @Test("error redirects become typed errors, announced on the event stream", arguments: [
        ("access_denied", "AADB2C90118: The user has forgotten their password.", nil, AccountStoreError.Code.passwordResetRequested, "AADB2C90118"),
        ("access_denied", "AADB2C90091: The user has cancelled entering self-asserted information.", nil, .cancelled, "AADB2C90091"),
        ("access_denied", "AADSTS65004: User declined to consent to access the app.", nil, .authorizationFailed, "AADSTS65004"),
        ("authentication_canceled", "User cancelled the flow.", "cancel", .cancelled, nil),
        ("login_required", "AADSTS50058: A silent sign-in request was sent but no user is signed in.", nil, .authorizationFailed, "AADSTS50058"),
    ] as [(String, String, String?, AccountStoreError.Code, String?)])
    func errorRedirects(error: String, description: String, subcode: String?, code: AccountStoreError.Code, serviceCode: String?) async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await fixture.configure()
        let events = await fixture.store.events()
        let pending = try await fixture.store.prepareAuthorization(accountType: fixture.accountType)
        let redirect = fixture.provider.errorRedirect(for: pending.url, error: error, description: description, subcode: subcode)
        do {
            _ = try await fixture.store.handleRedirect(redirect)
            Issue.record("an error redirect signed someone in")
        } catch {
            #expect(error.code == code)
            #expect(error.serviceCode == serviceCode)
            #expect(error.accountType == fixture.accountType)
            if code == .authorizationFailed { #expect(error.message.hasPrefix(description)) }
        }
        var iterator = events.makeAsyncIterator()
        guard case .didFailToRequestAccess(let type, let failure) = await iterator.next() else {
            Issue.record("no failure event")
            return
        }
        #expect(type == fixture.accountType)
        #expect(failure.code == code)
        #expect(fixture.provider.transport.requests.isEmpty)
    }

    enum BadIDToken: String, CaseIterable, Sendable {
        case badSignature, wrongAudience, wrongNonce, expired, notYetValid, wrongIssuer, noTenantForTemplate

        var overrides: [String: Any] {
            switch self {
            case .badSignature: [:]
            case .wrongAudience: ["aud": "someone-else"]
            case .wrongNonce: ["nonce": "replayed"]
            case .expired: ["exp": 1_000_000, "nbf": 999_000]
            case .notYetValid: ["nbf": 4_000_000_000]
            case .wrongIssuer: ["iss": "https://login.microsoftonline.com/evil/v2.0"]
            case .noTenantForTemplate: ["tid": NSNull()]
            }
        }

        var reason: String {
            switch self {
            case .badSignature: "signature"
            case .wrongAudience: "not this app"
            case .wrongNonce: "nonce"
            case .expired: "expired"
            case .notYetValid: "not valid before"
            case .wrongIssuer: "issued by"
            case .noTenantForTemplate: "tid"
            }
        }
    }

    @Test("an id_token that fails a check stops the sign-in and stores nothing", arguments: BadIDToken.allCases)
    func badIDTokens(kind: BadIDToken) async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        fixture.provider.tokenOverrides = kind.overrides
        if kind == .badSignature { fixture.provider.signWith = FakeIdentityProvider.otherKey }
        do {
            _ = try await fixture.signIn()
            Issue.record("accepted an id_token: \(kind)")
        } catch let error as AccountStoreError {
            #expect(error.code == .invalidIDToken)
            #expect(error.message.contains(kind.reason), "\(error.message)")
        }
        #expect(try await fixture.store.accounts(ofType: fixture.accountType).isEmpty)
        let file = try fixture.storage.fileURL(group: fixture.provider.configuration.storageGroup)
        if FileManager.default.fileExists(atPath: file.path) {
            #expect(try fixture.storedCache().accounts.isEmpty)
        }
    }

    @Test("a key's own issuer must match the token's issuer")
    func perKeyIssuer() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        fixture.provider.issuerTemplate = "https://login.microsoftonline.com/\(fixture.provider.tenantID)/v2.0"
        fixture.provider.keyIssuer = "https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0"
        await #expect { try await fixture.signIn() } throws: { error in
            (error as? AccountStoreError)?.code == .invalidIDToken
        }
        let matching = StoreFixture()
        defer { matching.remove() }
        matching.provider.keyIssuer = "https://login.microsoftonline.com/{tenantid}/v2.0"
        _ = try await matching.signIn()
    }

    @Test("after a key rollover the new key is fetched once and the sign-in succeeds")
    func keyRollover() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        _ = try await fixture.signIn()
        let keyFetches = { fixture.provider.transport.requests.filter { $0.url.path.hasSuffix("/keys") }.count }
        #expect(keyFetches() == 1)
        fixture.provider.rollKeysOver()
        _ = try await fixture.signIn()
        #expect(keyFetches() == 2)
        _ = try await fixture.signIn()
        #expect(keyFetches() == 2)
    }

    @Test("an algorithm other than RS256 is refused")
    func algorithmNone() throws {
        let provider = FakeIdentityProvider()
        let token = FakeIdentityProvider.sign(["iss": "x", "aud": "y", "sub": "z", "exp": 4_000_000_000], with: FakeIdentityProvider.signingKey, kid: "key1", alg: "HS256")
        let keys = try JSONDecoder().decode(JSONWebKeySet.self, from: Data(#"{"keys":[]}"#.utf8))
        let configuration = try JSONDecoder().decode(OpenIDConfiguration.self, from: Data(#"{"issuer":"x","jwks_uri":"https://x/keys"}"#.utf8))
        #expect(throws: IDTokenValidationError.unsupportedAlgorithm("HS256")) {
            try IDTokenValidator().validate(Secret(token), provider: configuration, keys: keys, clientID: provider.clientID, expectedNonce: nil, now: Date())
        }
    }

    @Test("a redirect seen twice is redeemed once: the second is no pending sign-in's")
    func codeReplay() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await fixture.configure()
        let pending = try await fixture.store.prepareAuthorization(accountType: fixture.accountType)
        let redirect = fixture.provider.redirect(for: pending.url)
        _ = try await fixture.store.handleRedirect(redirect)
        // The same redirect again: its state was consumed with the first use.
        #expect(try await fixture.store.handleRedirect(redirect) == nil)
        #expect(fixture.provider.transport.requests.filter { $0.url.path.hasSuffix("/token") }.count == 1)
    }

    @Test("sign-out removes the account and its tokens, and announces it")
    func signOut() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        let account = try await fixture.signIn()
        let events = await fixture.store.events()
        try await fixture.store.remove(account)
        #expect(try await fixture.store.accounts(ofType: fixture.accountType).isEmpty)
        let cache = try fixture.storedCache()
        #expect(cache.accessTokens.isEmpty && cache.refreshTokens.isEmpty && cache.idTokens.isEmpty && cache.accounts.isEmpty)
        var iterator = events.makeAsyncIterator()
        guard case .accountsDidChange(_, .removed(let removed)) = await iterator.next() else { Issue.record("no removed event"); return }
        #expect(removed.homeAccountID == account.homeAccountID)
    }

    @Test("an unknown account type is a clear error")
    func unknownType() async {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await #expect { try await fixture.store.prepareAuthorization(accountType: "nope") } throws: { error in
            (error as? AccountStoreError)?.code == .unknownAccountType && "\(error)".contains("nope")
        }
    }
}
