import Foundation
import SesameCoreTestSupport
import Testing
import _CryptoExtras

@testable import SesameCore

/// What "any OpenID Connect provider" needs beyond Microsoft's: OIDC Core's id_token rules,
/// discovery's endpoints and client authentication, and the generic settings keys.
@Suite("Any OpenID provider")
struct OpenIDProviderTests {
    static let issuer = "https://id.example.org"
    static let clientID = "sesame-desktop"
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func provider() throws -> OpenIDConfiguration {
        try JSONDecoder().decode(
            OpenIDConfiguration.self,
            from: Data(#"{"issuer":"https://id.example.org","jwks_uri":"https://id.example.org/jwks"}"#.utf8))
    }

    static func keys(kid: String?) throws -> JSONWebKeySet {
        var key: [String: Any] = [
            "kty": "RSA", "e": "AQAB", "n": Base64URL.encode(FakeIdentityProvider.signingKey.publicKey.modulusBytes),
        ]
        if let kid { key["kid"] = kid }
        return try JSONDecoder().decode(JSONWebKeySet.self, from: JSONSerialization.data(withJSONObject: ["keys": [key]]))
    }

    static func token(_ overrides: [String: Any] = [:], kid: String = "k1") -> Secret {
        var claims: [String: Any] = [
            "iss": issuer, "aud": clientID, "sub": "alice", "exp": Int(now.timeIntervalSince1970) + 600,
            "iat": Int(now.timeIntervalSince1970), "nonce": "n-1",
        ]
        for (name, value) in overrides { claims[name] = value }
        return Secret(FakeIdentityProvider.sign(claims, with: FakeIdentityProvider.signingKey, kid: kid))
    }

    func validate(_ token: Secret, keys: JSONWebKeySet) throws(IDTokenValidationError) -> IDTokenClaims {
        try IDTokenValidator().validate(
            token, provider: try! Self.provider(), keys: keys, clientID: Self.clientID, expectedNonce: "n-1", now: Self.now)
    }

    @Test("aud as an array: one party is enough; several need azp naming this client")
    func audienceArrays() throws {
        let keys = try Self.keys(kid: "k1")
        #expect(try validate(Self.token(["aud": [Self.clientID]]), keys: keys).subject == "alice")
        #expect(try validate(Self.token(["aud": [Self.clientID, "api://other"], "azp": Self.clientID]), keys: keys).subject == "alice")
        #expect(throws: IDTokenValidationError.authorizedPartyMismatch(expected: Self.clientID, actual: nil)) {
            try validate(Self.token(["aud": [Self.clientID, "api://other"]]), keys: keys)
        }
        #expect(throws: IDTokenValidationError.authorizedPartyMismatch(expected: Self.clientID, actual: "someone-else")) {
            try validate(Self.token(["aud": [Self.clientID, "api://other"], "azp": "someone-else"]), keys: keys)
        }
        #expect(throws: IDTokenValidationError.authorizedPartyMismatch(expected: Self.clientID, actual: "someone-else")) {
            try validate(Self.token(["azp": "someone-else"]), keys: keys)
        }
    }

    @Test("a JWKS whose one key has no kid verifies a token that names one; a wrong signature still fails")
    func keyWithoutKid() throws {
        #expect(try validate(Self.token(kid: "rotated-7"), keys: Self.keys(kid: nil)).subject == "alice")
        let forged = Secret(
            FakeIdentityProvider.sign(
                [
                    "iss": Self.issuer, "aud": Self.clientID, "sub": "mallory", "exp": Int(Self.now.timeIntervalSince1970) + 600,
                    "nonce": "n-1",
                ],
                with: FakeIdentityProvider.otherKey, kid: "k1"))
        #expect(throws: IDTokenValidationError.badSignature) { try validate(forged, keys: Self.keys(kid: nil)) }
        #expect(throws: IDTokenValidationError.unknownKey("k9")) { try validate(Self.token(kid: "k9"), keys: Self.keys(kid: "k1")) }
    }

    @Test("the issuer must be exactly as discovered: no trailing-slash or case leniency")
    func exactIssuer() throws {
        let keys = try Self.keys(kid: "k1")
        for wrong in ["https://id.example.org/", "https://ID.example.org", "https://id.example.org.evil"] {
            #expect(throws: IDTokenValidationError.issuerMismatch(expected: Self.issuer, actual: wrong)) {
                try validate(Self.token(["iss": wrong]), keys: keys)
            }
        }
    }

    @Test("client authentication follows discovery: Basic when it names none or lists it, post when only that, none without a secret")
    func clientAuthentication() {
        #expect(ClientAuthentication.choose(hasSecret: true, supported: nil, microsoftAuthority: false) == .clientSecretBasic)
        #expect(
            ClientAuthentication.choose(
                hasSecret: true, supported: ["client_secret_post", "client_secret_basic"], microsoftAuthority: false)
                == .clientSecretBasic)
        #expect(
            ClientAuthentication.choose(hasSecret: true, supported: ["client_secret_post"], microsoftAuthority: false) == .clientSecretPost)
        #expect(ClientAuthentication.choose(hasSecret: true, supported: nil, microsoftAuthority: true) == .clientSecretPost)
        #expect(ClientAuthentication.choose(hasSecret: false, supported: ["client_secret_basic"], microsoftAuthority: false) == .none)
        // RFC 6749 §2.3.1: each part form-encoded before the base64.
        let header = ClientAuthentication.basicCredentials(clientID: "a b", secret: Secret("p:w&d"))
        #expect(header == "Basic " + Data("a%20b:p%3Aw%26d".utf8).base64EncodedString())
    }

    @Test("the secret goes where the method says: an Authorization header for Basic, the form for post, nowhere without one")
    func secretOnTheWire() async throws {
        for (method, header, inForm) in [
            (ClientAuthentication.clientSecretBasic, true, false), (.clientSecretPost, false, true),
        ] {
            let transport = FakeTransport { _ in json(["access_token": "at", "token_type": "Bearer", "expires_in": 3600]) }
            var configuration = AccountConfiguration(
                clientID: Self.clientID, clientSecret: Secret("s3cret"), scopes: ["api"],
                authorizationURL: URL(string: "https://id.example.org/authorize")!, tokenURL: URL(string: "https://id.example.org/token")!,
                redirectURL: URL(string: "http://localhost/cb")!, storageGroup: "g")
            configuration.clientAuthentication = method
            let client = TokenEndpointClient(transport: transport, logger: .init(label: "test"))
            _ = try await client.send(
                RefreshTokenRequest(clientID: Self.clientID, refreshToken: Secret("rt"), scopes: ["api"], requestsClientInfo: false),
                configuration: configuration, accountType: "t")
            let request = try #require(transport.requests.first)
            #expect((request.headers["Authorization"] == "Basic " + Data("sesame-desktop:s3cret".utf8).base64EncodedString()) == header)
            #expect((request.form["client_secret"] == "s3cret") == inForm, "\(method)")
        }
    }

    @Test("settings with only discoveryURL, clientID and a secret: endpoints from discovery, defaults for the rest")
    func settings() throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
              <key>clientID</key><string>sesame-desktop</string>
              <key>clientSecret</key><string>s3cret</string>
              <key>discoveryURL</key><string>https://id.example.org/.well-known/openid-configuration</string>
            </dict></plist>
            """
        guard case .openID(let settings) = try SampleSettings.parse(Data(plist.utf8), file: "openid.plist") else {
            Issue.record("not read as an OpenID provider's settings")
            return
        }
        #expect(settings.accountType == "openid")
        #expect(settings.scopes == ["openid", "profile", "email", "offline_access"])
        let configuration = settings.accountConfiguration
        #expect(configuration.discoveredEndpoints == [.authorization, .token])
        #expect(configuration.clientSecret?.revealed == "s3cret")
        #expect(!configuration.isMicrosoftAuthority)
        #expect(SignedInAccounts.environment(of: configuration) == "id.example.org")

        let noOpenID = plist.replacingOccurrences(
            of: "<key>clientSecret</key>", with: "<key>scopes</key><string>profile email</string><key>clientSecret</key>")
        #expect(throws: SettingsError.self) { try SampleSettings.parse(Data(noOpenID.utf8), file: "openid.plist") }
    }

    @Test("a discovery document pointing the token endpoint at plain http elsewhere is refused before anything is sent")
    func hostileDiscovery() async throws {
        let transport = FakeTransport()
        transport.setHandler { request in
            // Only the provider's metadata is fetched; no token request leaves.
            if request.url.path == "/jwks" { return HTTPResponse(status: 200, body: Data(#"{"keys":[]}"#.utf8)) }
            #expect(request.url.path.hasSuffix("openid-configuration"), "\(request.url)")
            let body = #"""
                {"issuer":"https://id.example.org","jwks_uri":"https://id.example.org/jwks",
                 "authorization_endpoint":"https://id.example.org/authorize","token_endpoint":"http://collector.example/token"}
                """#
            return HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data(body.utf8))
        }
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = AccountStore(storage: FileTokenStorage(directory: directory), transport: transport)
        let discovery = URL(string: "https://id.example.org/.well-known/openid-configuration")!
        var configuration = AccountConfiguration(
            clientID: Self.clientID, clientSecret: Secret("s3cret"), scopes: ["openid"], authorizationURL: discovery, tokenURL: discovery,
            redirectURL: URL(string: "http://localhost/cb")!, storageGroup: "g", discoveryURL: discovery)
        configuration.discoveredEndpoints = [.authorization, .token]
        await store.setConfiguration(configuration, forAccountType: "openid")
        do {
            _ = try await store.signInWithDeviceCode(accountType: "openid") { _ in }
            Issue.record("signed in through an http token endpoint")
        } catch {
            #expect(error.code == .providerMetadataUnavailable)
            #expect(error.message.contains("token_endpoint"), "\(error.message)")
        }
    }
}
