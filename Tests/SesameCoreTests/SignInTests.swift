import Foundation
import SesameCore
import SesameCoreTestSupport
import SesameTestSupport
import Testing
import _CryptoExtras

@Suite("Interactive sign-in through the account store")
struct SignInTests {
    @Test("a tenant the settings name by its domain is its id in the cache, as MSAL writes it with Entra; a silent token finds it")
    func realmIsTheTenantsID() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        let named = fixture.provider.configuration
        let byDomain = { (url: URL) in URL(string: url.absoluteString.replacing("/common/", with: "/contoso.onmicrosoft.com/"))! }
        await fixture.store.setConfiguration(
            AccountConfiguration(
                clientID: named.clientID, scopes: named.scopes, authorizationURL: byDomain(named.authorizationURL),
                tokenURL: byDomain(named.tokenURL), redirectURL: named.redirectURL, storageGroup: named.storageGroup),
            forAccountType: fixture.accountType)
        let account = try await fixture.store.signIn(
            accountType: fixture.accountType, using: FakeUserAgent(provider: fixture.provider))
        #expect(account.realm == fixture.provider.tenantID)
        let cache = try fixture.storedCache()
        let realms = Set(cache.accessTokens.values.map(\.realm))
        #expect(realms == [fixture.provider.tenantID], "\(realms)")
        let requests = fixture.provider.transport.requests.count
        _ = try await fixture.store.accessToken(for: account, scopes: ["User.Read"])
        #expect(fixture.provider.transport.requests.count == requests, "the cached token was not found under its realm")
    }

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

        // The account changes, in order (each sign-in's ID token check is announced too).
        var changes: [AccountChange] = []
        var checks: [[IDTokenCheck]] = []
        for await event in events {
            if case .accountsDidChange(_, let change) = event { changes.append(change) }
            if case .idTokenChecked(_, let outcome) = event { checks.append(outcome) }
            if changes.count == 2 { break }
        }
        guard case .added(let added) = changes.first, case .updated = changes.last else {
            Issue.record("not an added then an updated account: \(changes)")
            return
        }
        #expect(added == first)
        #expect(checks.count == 2)
        #expect(checks.first?.map(\.name) == [.signature, .issuer, .audience, .lifetime, .nonce])
        #expect(checks.first?.allSatisfy { $0.passed == true } == true)
        #expect(checks.first?.first?.keyID != nil, "the signature's check names no key")

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

    @Test(
        "look-alike URLs are not taken, the view goes on to load them, and the real redirect still signs in",
        arguments: [
            "https://evil.example/?x=https://login.microsoftonline.com/common/oauth2/nativeclient?code=1",
            "https://login.microsoftonline.com.evil.example/common/oauth2/nativeclient?code=1",
        ])
    func lookAlikeNotHandled(url: String) async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await fixture.configure()
        let provider = fixture.provider
        let agent = FakeUserAgent { session, _ in
            let realRedirect = provider.redirect(for: session.authorizationURL)
            let state = URLComponents(url: realRedirect, resolvingAgainstBaseURL: false)!.queryItems!.first { $0.name == "state" }!.value!
            return [.navigate(URL(string: url + "&state=" + state)!), .navigate(realRedirect)]
        }
        let account = try await fixture.store.signIn(accountType: fixture.accountType, using: agent)
        #expect(account.username == "alex@contoso.onmicrosoft.com")
        #expect(agent.answers.map(\.1) == [false, true], "the look-alike was taken for the redirect")
        #expect(fixture.provider.transport.requests.filter { $0.url.path.hasSuffix("/token") }.count == 1)
        #expect(fixture.provider.transport.requests.allSatisfy { $0.form["code"] != "1" })
    }

    @Test("the provider's keys are fetched while the user is at the pages: after the redirect, only the code is redeemed")
    func keysAreFetchedDuringTheSignIn() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await fixture.configure()
        let transport = fixture.provider.transport
        /// A user who takes a while at the pages: the keys arrive before the redirect.
        final class SlowUser: SignInUserAgent {
            let provider: FakeIdentityProvider
            init(_ provider: FakeIdentityProvider) { self.provider = provider }
            func present(_ session: SignInSession) async throws {
                // The user stays until the early fetch has happened, however long its turn takes
                // on a loaded machine (CI: over 60 s); the bound only guards against a hang.
                _ = await Eventually.holds(within: .seconds(600), every: .milliseconds(5)) {
                    provider.transport.requests.contains { $0.url.path.hasSuffix("/keys") }
                }
                _ = session.resume(with: provider.redirect(for: session.authorizationURL))
            }
            func dismiss(_ session: SignInSession) async {}
        }
        _ = try await fixture.store.signIn(accountType: fixture.accountType, using: SlowUser(fixture.provider))
        let paths = transport.requests.map(\.url.path)
        let token = try #require(paths.firstIndex { $0.hasSuffix("/token") })
        #expect(paths.prefix(token).contains { $0.hasSuffix("/keys") }, "the keys were fetched after the code was redeemed: \(paths)")
        #expect(paths.filter { $0.hasSuffix("openid-configuration") }.count == 1, "\(paths)")
        #expect(paths.suffix(from: token) == [paths[token]], "after the redirect, more than the code's redemption: \(paths)")
    }

    @Test("a redirect whose state is not the sign-in's is ignored: nothing is redeemed and the sign-in goes on to its own answer")
    func stateMismatch() async throws {
        let forgeries: [@Sendable ([URLQueryItem]) -> [URLQueryItem]] = [
            { items in items.map { $0.name == "state" ? URLQueryItem(name: "state", value: "forged") : $0 } },
            { items in items.filter { $0.name != "state" } },
        ]
        for forge in forgeries {
            let fixture = StoreFixture()
            defer { fixture.remove() }
            await fixture.configure()
            let provider = fixture.provider
            let agent = FakeUserAgent { session, _ in
                let own = provider.redirect(for: session.authorizationURL)
                var components = URLComponents(url: own, resolvingAgainstBaseURL: false)!
                components.queryItems = forge(components.queryItems!)
                return [.navigate(components.url!), .navigate(own)]
            }
            let account = try await fixture.store.signIn(accountType: fixture.accountType, using: agent)
            #expect(agent.answers.map(\.1) == [false, true], "the forged answer was taken")
            #expect(provider.transport.requests.filter { $0.url.path.hasSuffix("/token") }.count == 1, "more than one code redeemed")
            #expect(try await fixture.store.accounts(ofType: fixture.accountType) == [account])
        }
    }

    @Test(
        "error redirects become typed errors, announced on the event stream",
        arguments: [
            (
                "access_denied", "AADB2C90118: The user has forgotten their password.", nil, AccountStoreError.Code.passwordResetRequested,
                "AADB2C90118"
            ),
            ("access_denied", "AADB2C90091: The user has cancelled entering self-asserted information.", nil, .cancelled, "AADB2C90091"),
            ("access_denied", "AADSTS65004: User declined to consent to access the app.", nil, .authorizationFailed, "AADSTS65004"),
            ("authentication_canceled", "User cancelled the flow.", "cancel", .cancelled, nil),
            (
                "login_required", "AADSTS50058: A silent sign-in request was sent but no user is signed in.", nil, .authorizationFailed,
                "AADSTS50058"
            ),
        ] as [(String, String, String?, AccountStoreError.Code, String?)])
    func errorRedirects(
        error: String, description: String, subcode: String?, code: AccountStoreError.Code, serviceCode: String?
    ) async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await fixture.configure()
        let events = await fixture.store.events()
        let provider = fixture.provider
        let agent = FakeUserAgent { session, _ in
            [.navigate(provider.errorRedirect(for: session.authorizationURL, error: error, description: description, subcode: subcode))]
        }
        do {
            _ = try await fixture.store.signIn(accountType: fixture.accountType, using: agent)
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

        /// The check the store says failed.
        var failedCheck: IDTokenCheck.Name {
            switch self {
            case .badSignature: .signature
            case .wrongAudience: .audience
            case .wrongNonce: .nonce
            case .expired, .notYetValid: .lifetime
            case .wrongIssuer, .noTenantForTemplate: .issuer
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
        let events = await fixture.store.events()
        do {
            _ = try await fixture.signIn()
            Issue.record("accepted an id_token: \(kind)")
        } catch let error as AccountStoreError {
            #expect(error.code == .invalidIDToken)
            #expect(error.message.contains(kind.reason), "\(error.message)")
        }
        // The checks as the flow inspector shows them: those before the failed one passed, it failed.
        var checks: [IDTokenCheck] = []
        for await event in events {
            if case .idTokenChecked(_, let outcome) = event {
                checks = outcome
                break
            }
        }
        let failed = checks.filter { $0.passed == false }.map(\.name)
        #expect(failed == [kind.failedCheck], "\(checks)")
        let before = checks.prefix { $0.name != kind.failedCheck }
        #expect(before.allSatisfy { $0.passed == true }, "\(checks)")
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
        let token = FakeIdentityProvider.sign(
            ["iss": "x", "aud": "y", "sub": "z", "exp": 4_000_000_000], with: FakeIdentityProvider.signingKey, kid: "key1", alg: "HS256")
        let keys = try JSONDecoder().decode(JSONWebKeySet.self, from: Data(#"{"keys":[]}"#.utf8))
        let configuration = try JSONDecoder().decode(
            OpenIDConfiguration.self, from: Data(#"{"issuer":"x","jwks_uri":"https://x/keys"}"#.utf8))
        #expect(throws: IDTokenValidationError.unsupportedAlgorithm("HS256")) {
            try IDTokenValidator().validate(
                Secret(token), provider: configuration, keys: keys, clientID: provider.clientID, expectedNonce: nil, now: Date())
        }
    }

    @Test("a second navigation to the redirect is not loaded and not redeemed again")
    func codeReplay() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await fixture.configure()
        let provider = fixture.provider
        let agent = FakeUserAgent { session, _ in
            let redirect = provider.redirect(for: session.authorizationURL)
            return [.navigate(redirect), .navigate(redirect)]
        }
        _ = try await fixture.store.signIn(accountType: fixture.accountType, using: agent)
        #expect(agent.answers.map(\.1) == [true, true], "the second navigation to the redirect URI would load")
        #expect(fixture.provider.transport.requests.filter { $0.url.path.hasSuffix("/token") }.count == 1)
    }

    @Test("closing the sign-in cancels it: a typed error, the agent dismissed, nothing sent or stored")
    func closed() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await fixture.configure()
        let agent = FakeUserAgent { _, _ in [.close] }
        await #expect { try await fixture.store.signIn(accountType: fixture.accountType, using: agent) } throws: { error in
            (error as? AccountStoreError)?.code == .cancelled
        }
        #expect(agent.dismissed == agent.presented.map(\.id))
        #expect(fixture.provider.transport.requests.isEmpty)
    }

    @Test("cancelling the task that signs in cancels the session and dismisses the agent")
    func taskCancelled() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await fixture.configure()
        let agent = FakeUserAgent { _, _ in [] }  // the user does nothing
        let signIn = Task { try await fixture.store.signIn(accountType: fixture.accountType, using: agent) }
        while agent.presented.isEmpty { await Task.yield() }
        signIn.cancel()
        await #expect { try await signIn.value } throws: { error in (error as? AccountStoreError)?.code == .cancelled }
        #expect(agent.presented.first?.isFinished == true)
        #expect(agent.dismissed == agent.presented.map(\.id))
    }

    @Test("B2C: \"Forgot your password?\" goes on in the password-reset user flow, which signs the user in")
    func passwordResetChains() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        var configuration = fixture.provider.configuration
        configuration.authorizationURL = FormEncoding.url(configuration.authorizationURL, appending: [("p", "B2C_1_SignUpSignIn")])
        configuration.tokenURL = FormEncoding.url(configuration.tokenURL, appending: [("p", "B2C_1_SignUpSignIn")])
        configuration.passwordResetPolicy = "B2C_1_PasswordReset"
        await fixture.store.setConfiguration(configuration, forAccountType: fixture.accountType)
        let provider = fixture.provider
        let agent = FakeUserAgent { session, shown in
            shown == 0
                ? [
                    .navigate(
                        provider.errorRedirect(
                            for: session.authorizationURL, error: "access_denied",
                            description: "AADB2C90118: The user has forgotten their password."))
                ]
                : [.navigate(provider.redirect(for: session.authorizationURL))]
        }
        let account = try await fixture.store.signIn(accountType: fixture.accountType, using: agent)
        #expect(account.accountType == fixture.accountType)
        #expect(agent.presented.count == 2)
        let policies = agent.presented.map {
            URLComponents(url: $0.authorizationURL, resolvingAgainstBaseURL: false)!.queryItems!.first { $0.name == "p" }?.value
        }
        #expect(policies == ["B2C_1_SignUpSignIn", "B2C_1_PasswordReset"])
        let token = try #require(fixture.provider.transport.requests.first { $0.url.path.hasSuffix("/token") })
        #expect(token.url.query?.contains("p=B2C_1_PasswordReset") == true, "the reset flow's code was redeemed at another policy")
        #expect(agent.dismissed == [agent.presented[1].id], "the agent must stay up between the two user flows")
    }

    @Test("after a sign-out the next sign-in asks who signs in (prompt=login), also in a new store; a sign-in ends that")
    func signOutThenSignIn() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        let first = FakeUserAgent(provider: fixture.provider)
        await fixture.configure()
        let account = try await fixture.store.signIn(accountType: fixture.accountType, using: first)
        #expect(Self.prompt(first.presented[0]) == nil)
        try await fixture.store.remove(account)

        // The app restarts: a new store over the same storage.
        let clock = fixture.clock
        let restarted = AccountStore(storage: fixture.storage, transport: fixture.provider.transport, now: { clock.now })
        await restarted.setConfiguration(fixture.provider.configuration, forAccountType: fixture.accountType)
        #expect(try await restarted.asksForAccountNext(accountType: fixture.accountType))
        let second = FakeUserAgent(provider: fixture.provider)
        _ = try await restarted.signIn(accountType: fixture.accountType, using: second)
        #expect(Self.prompt(second.presented[0]) == "login")

        let third = FakeUserAgent(provider: fixture.provider)
        _ = try await restarted.signIn(accountType: fixture.accountType, using: third)
        #expect(Self.prompt(third.presented[0]) == nil, "single sign-on stays off after someone signed in")
        #expect(try await !restarted.asksForAccountNext(accountType: fixture.accountType))
    }

    static func prompt(_ session: SignInSession) -> String? {
        URLComponents(url: session.authorizationURL, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "prompt" }?.value
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
        guard case .accountsDidChange(_, .removed(let removed)) = await iterator.next() else {
            Issue.record("no removed event")
            return
        }
        #expect(removed.homeAccountID == account.homeAccountID)
    }

    @Test("an unknown account type is a clear error")
    func unknownType() async {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await #expect { try await fixture.store.signIn(accountType: "nope", using: FakeUserAgent(provider: fixture.provider)) } throws: {
            error in
            (error as? AccountStoreError)?.code == .unknownAccountType && "\(error)".contains("nope")
        }
    }
}
