import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SesameTestSupport
import Synchronization
import Testing
import _CryptoExtras

@testable import IdentityEmulator

/// The bundled clients' ids and redirect URIs, as in Resources/settings.
enum Clients {
    static let directory = "6731de76-14a6-49ae-97bc-6eba6914391e"
    static let me = "66855f8a-60cd-445e-a9bb-8cd8eadbd3fa"
    static let tasks = "90c0fe63-bcf2-44d5-8fb7-b8bbc0b29dc6"
    static let nativeClient = "https://login.microsoftonline.com/common/oauth2/nativeclient"
    static let b2cNativeClient = "https://fabrikamb2c.b2clogin.com/oauth2/nativeclient"
    /// The task API's scopes, on its App ID URI (a registration of its own).
    static let taskScopes = "https://fabrikamb2c.onmicrosoft.com/tasks/read https://fabrikamb2c.onmicrosoft.com/tasks/write"
    /// The tenant the bundled (single-tenant) Entra apps are registered in.
    static let contoso = "contoso.onmicrosoft.com"
}

/// The codes the emulator announces (`mfa-code …`), collected for the test.
typealias Announcements = OneTimeCodes

/// The tests' headless browser (SesameTestSupport), with the emulator tests' own helpers.
typealias Browser = HeadlessBrowser

/// An emulator on Hummingbird's router test framework, plus a tiny browser (cookies, forms) to
/// walk its sign-in pages.
struct EmulatorFixture {
    let emulator: IdentityEmulator
    let announcements: Announcements
    let clock: EmulatorClock
    static let base = URL(string: "http://127.0.0.1:8400")!
    /// The federated identity provider's host name. Not the default (`localhost` for
    /// 127.0.0.1): Hummingbird's router test client says `localhost` for every request that names
    /// no `Host`, and Entra's pages must keep answering those.
    static let federationHostname = "sts.fabrikam.example"
    /// Where the fixture's Fabrikam AD FS answers.
    static let federationBase = URL(string: "http://\(federationHostname):8400")!

    init(
        users: Int = 60, stateDirectory: URL? = nil, extraClients: [ClientRegistration] = [], demo: Bool = false,
        accessTokenLifetime: Int? = nil, userConsent: UserConsentPolicy = .allowed, lenient: Bool = false, base: URL = Self.base
    ) async throws {
        var configuration = EmulatorConfiguration()
        configuration.federationHostname = Self.federationHostname
        configuration.userCount = users
        configuration.stateDirectory = stateDirectory
        configuration.extraClients = extraClients
        configuration.demoMode = demo
        configuration.accessTokenLifetime = accessTokenLifetime
        configuration.lenient = lenient
        configuration.userConsent = userConsent
        let announcements = Announcements()
        configuration.announce = { announcements.record($0) }
        clock = configuration.clock
        self.announcements = announcements
        emulator = try await IdentityEmulator(configuration: configuration, base: base)
    }

    /// Runs `body` with a browser against the router.
    func withBrowser<T: Sendable>(_ body: @Sendable (Browser) async throws -> T) async throws -> T {
        let app = Application(router: emulator.router())
        return try await app.test(.router) { client in
            try await body(HeadlessBrowser(router: client, codes: announcements))
        }
    }
}

extension HeadlessBrowser {
    // MARK: The tutorial flow

    static func authorizeURI(
        tenant: String = Clients.contoso, client: String = Clients.directory, redirect: String = Clients.nativeClient,
        scope: String = "openid profile offline_access User.Read User.ReadBasic.All", state: String? = "state-123",
        nonce: String? = "nonce-456", challenge: String? = ProofKey.challenge, method: String? = "S256", extra: [(String, String)] = []
    ) -> String {
        var fields = FormFields([("client_id", client), ("response_type", "code"), ("redirect_uri", redirect), ("scope", scope)])
        if let state { fields.append("state", state) }
        if let nonce { fields.append("nonce", nonce) }
        if let challenge { fields.append("code_challenge", challenge) }
        if let method { fields.append("code_challenge_method", method) }
        for (name, value) in extra { fields.append(name, value) }
        return "/\(tenant)/oauth2/v2.0/authorize?\(fields.encoded)"
    }

    /// Walks username → password (→ SMS) → "Stay signed in?" (→ consent) for the Directory
    /// sample's request and returns the redirect.
    func signIn(_ user: String, password: String = "Passw0rd!", tenant: String = Clients.contoso, consent: Bool = true) async throws -> Page
    {
        try await signIn(user, password: password, authorize: Browser.authorizeURI(tenant: tenant), tenant: tenant, consent: consent)
    }

    /// Redeems a code at the token endpoint.
    func redeem(
        _ code: String, tenant: String = Clients.contoso, client: String = Clients.directory, redirect: String = Clients.nativeClient,
        verifier: String = ProofKey.verifier, extra: [(String, String)] = []
    ) async throws -> Page {
        try await post(
            "/\(tenant)/oauth2/v2.0/token",
            form: [
                ("client_id", client), ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect),
                ("code_verifier", verifier), ("client_info", "1"),
            ] + extra)
    }

    func refresh(
        _ token: String, tenant: String = Clients.contoso, client: String = Clients.directory, scope: String? = nil
    ) async throws -> Page {
        var form = [("client_id", client), ("grant_type", "refresh_token"), ("refresh_token", token)]
        if let scope { form.append(("scope", scope)) }
        return try await post("/\(tenant)/oauth2/v2.0/token", form: form)
    }

    /// Signs alex (or `user`) in and returns the token response.
    func tokens(
        for user: String = "alex@contoso.onmicrosoft.com", scope: String = "openid profile offline_access User.Read User.ReadBasic.All"
    ) async throws -> [String: Any] {
        let redirect = try await signIn(user, authorize: Browser.authorizeURI(scope: scope))
        let code = try #require(redirect.redirectFields["code"])
        return try await redeem(code).json
    }
}

/// RFC 7636's example pair.
enum ProofKey {
    static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
}

/// Decodes a JWT's header and claims (no verification).
func jwtParts(_ token: String) throws -> (header: [String: Any], claims: [String: Any]) {
    let parts = token.split(separator: ".")
    try #require(parts.count == 3)
    func object(_ part: Substring) throws -> [String: Any] {
        let data = try #require(Base64URL.decode(part))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
    return (try object(parts[0]), try object(parts[1]))
}

/// Verifies a JWT's RS256 signature against a JWKS key (`n`, `e`), as a client would.
func verifySignature(_ token: String, jwk: [String: Any]) throws -> Bool {
    let parts = token.split(separator: ".")
    let nText = try #require(jwk["n"] as? String)
    let eText = try #require(jwk["e"] as? String)
    let n = try #require(Base64URL.decode(nText))
    let e = try #require(Base64URL.decode(eText))
    let key = try _RSA.Signing.PublicKey(n: n, e: e)
    let signatureBytes = try #require(Base64URL.decode(parts[2]))
    let signature = _RSA.Signing.RSASignature(rawRepresentation: signatureBytes)
    return key.isValidSignature(signature, for: SHA256.hash(data: Data("\(parts[0]).\(parts[1])".utf8)), padding: .insecurePKCS1v1_5)
}
