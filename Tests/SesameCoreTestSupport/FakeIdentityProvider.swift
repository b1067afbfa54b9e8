import Crypto
import Foundation
import SesameCore
import _CryptoExtras

/// An in-process identity provider behind a ``FakeTransport``: discovery, JWKS, and a token
/// endpoint that redeems codes and refresh tokens and signs real RS256 id_tokens. Tests tweak
/// its knobs to produce each failure.
public final class FakeIdentityProvider: @unchecked Sendable {
    public static let signingKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    public static let otherKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)

    public let base = URL(string: "https://login.microsoftonline.com")!
    public let tenant = "common"
    public let tenantID = "72f988bf-86f1-41af-91ab-2d7cd011db47"
    public let clientID = "6731de76-14a6-49ae-97bc-6eba6914391e"
    public let userObjectID = "00000000-0000-0000-66f3-3332eca7ea81"
    public let redirectURI = URL(string: "https://login.microsoftonline.com/common/oauth2/nativeclient")!

    private let lock = NSLock()
    private var _issuer = "https://login.microsoftonline.com/{tenantid}/v2.0"
    private var _keyIssuer: String? = "https://login.microsoftonline.com/{tenantid}/v2.0"
    private var _tokenOverrides: [String: Any] = [:]
    private var _signWith = FakeIdentityProvider.signingKey
    private var _rolledOver = false
    private var _codes: [String: (nonce: String?, verifier: String?)] = [:]
    private var _refreshTokens: [String: Bool] = [:]
    private var _refreshCount = 0
    private var _refreshesInFlight = 0
    private var _mostRefreshesAtOnce = 0
    private var _refreshedScopes: [String] = []
    private var _echoesScope = false
    private var _singleUseRefreshTokens = false
    private var _reuseDetected = 0
    private var refreshesHeld = false
    private var heldRefreshes: [CheckedContinuation<Void, Never>] = []
    private var _refreshError: [String: Any]?
    private var _expiresIn: Any = 3600
    private var _tokenCounter = 0
    private var _username = "alex@contoso.onmicrosoft.com"
    private var _uid = "00000000-0000-0000-66f3-3332eca7ea81"
    private var _answeredScope = "User.Read profile openid email"
    private var _throttle: (count: Int, retryAfter: Int) = (0, 0)
    private var _deviceAuthorization: [String: Any] = [
        "user_code": "FJQ8HWMS6", "device_code": "device-code-secret", "verification_uri": "https://microsoft.com/devicelogin",
        "expires_in": 900, "interval": 1,
        "message":
            "To sign in, use a web browser to open the page https://microsoft.com/devicelogin and enter the code FJQ8HWMS6 to authenticate.",
    ]
    private var _deviceAnswers: [String] = []
    private var _devicePolls = 0

    public let transport = FakeTransport()
    /// The provider's clock: the fixture shares its test clock so tokens are issued "now".
    public var clock = TestClock()
    public var now: Date { clock.now }

    public init() {
        // A request that arrives after the test let the provider go (a sign-in's early fetch of
        // the keys, still on its way) finds nobody to answer.
        transport.setHandler { [weak self] request in
            guard let self else { throw URLError(.cannotConnectToHost) }
            return try await self.handle(request)
        }
    }

    public func with<T>(_ body: (FakeIdentityProvider) -> T) -> T { lock.withLock { body(self) } }

    public var issuerTemplate: String {
        get { lock.withLock { _issuer } }
        set { lock.withLock { _issuer = newValue } }
    }
    public var keyIssuer: String? {
        get { lock.withLock { _keyIssuer } }
        set { lock.withLock { _keyIssuer = newValue } }
    }
    /// Claims to override in the next id_tokens (`aud`, `exp`, `nonce`, `iss`…); NSNull removes.
    public var tokenOverrides: [String: Any] {
        get { lock.withLock { _tokenOverrides } }
        set { lock.withLock { _tokenOverrides = newValue } }
    }
    public var signWith: _RSA.Signing.PrivateKey {
        get { lock.withLock { _signWith } }
        set { lock.withLock { _signWith = newValue } }
    }
    public var refreshCount: Int { lock.withLock { _refreshCount } }
    /// Rolls the signing key over: tokens are signed by another key, published as `key2`.
    public func rollKeysOver() {
        lock.withLock {
            _rolledOver = true
            _signWith = Self.otherKey
        }
    }
    private var publishedKey: (key: _RSA.Signing.PrivateKey, kid: String) {
        lock.withLock { _rolledOver ? (Self.otherKey, "key2") : (Self.signingKey, "key1") }
    }
    /// Refreshes wait, once they have arrived, until ``releaseRefreshes()``: a server the test
    /// answers for, so a step can happen while a refresh is on its way whatever the machine's pace.
    public func holdRefreshes() { lock.withLock { refreshesHeld = true } }

    public func releaseRefreshes() {
        let held = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            refreshesHeld = false
            defer { heldRefreshes = [] }
            return heldRefreshes
        }
        for refresh in held { refresh.resume() }
    }

    public var refreshError: [String: Any]? {
        get { lock.withLock { _refreshError } }
        set { lock.withLock { _refreshError = newValue } }
    }
    /// `expires_in` as sent: an Int (Entra) or a String (B2C).
    public var expiresIn: Any {
        get { lock.withLock { _expiresIn } }
        set { lock.withLock { _expiresIn = newValue } }
    }
    public var username: String {
        get { lock.withLock { _username } }
        set { lock.withLock { _username = newValue } }
    }
    public var uid: String {
        get { lock.withLock { _uid } }
        set { lock.withLock { _uid = newValue } }
    }
    public var liveRefreshTokens: [String] { lock.withLock { _refreshTokens.filter(\.value).map(\.key) } }
    /// `scope` as the token endpoint answers it (B2C answers a client-id scope with `/`).
    public var answeredScope: String {
        get { lock.withLock { _answeredScope } }
        set { lock.withLock { _answeredScope = newValue } }
    }
    /// Strict rotation: a refresh token works once; redeeming a used one again revokes every
    /// refresh token (the family), as servers with reuse detection do.
    public var singleUseRefreshTokens: Bool {
        get { lock.withLock { _singleUseRefreshTokens } }
        set { lock.withLock { _singleUseRefreshTokens = newValue } }
    }
    /// How many times a used refresh token was redeemed again.
    public var reuseDetected: Int { lock.withLock { _reuseDetected } }
    /// The most refresh-token redemptions that were under way at one moment.
    public var mostRefreshesAtOnce: Int { lock.withLock { _mostRefreshesAtOnce } }
    /// The `scope` of each refresh request, in order.
    public var refreshedScopes: [String] { lock.withLock { _refreshedScopes } }
    /// Whether `scope` answers what was asked (less OIDC's scopes) instead of ``answeredScope``.
    public var echoesScope: Bool {
        get { lock.withLock { _echoesScope } }
        set { lock.withLock { _echoesScope = newValue } }
    }
    /// The next `count` token requests answer 429 with `Retry-After: retryAfter`.
    public func throttle(count: Int, retryAfter: Int) { lock.withLock { _throttle = (count, retryAfter) } }

    /// What `/devicecode` answers (HTTP 200, as Entra answers even its errors there).
    public var deviceAuthorization: [String: Any] {
        get { lock.withLock { _deviceAuthorization } }
        set { lock.withLock { _deviceAuthorization = newValue } }
    }
    /// The OAuth `error` of each device-code poll in turn (`authorization_pending`, `slow_down`,
    /// …); `ok` (or none left) gives the tokens.
    public var deviceAnswers: [String] {
        get { lock.withLock { _deviceAnswers } }
        set { lock.withLock { _deviceAnswers = newValue } }
    }
    /// How many times a device polled.
    public var devicePolls: Int { lock.withLock { _devicePolls } }

    public var configuration: AccountConfiguration {
        AccountConfiguration(
            clientID: clientID,
            scopes: ["openid", "profile", "offline_access", "User.Read"],
            authorizationURL: base.appending(path: "\(tenant)/oauth2/v2.0/authorize"),
            tokenURL: base.appending(path: "\(tenant)/oauth2/v2.0/token"),
            redirectURL: redirectURI,
            loginURL: base.appending(path: "\(tenant)/login"),
            storageGroup: "com.example.sesame.tests")
    }

    /// Plays the browser: reads the authorization URL, "signs the user in" and returns the
    /// redirect URL the service would send the web view to.
    public func redirect(for authorizationURL: URL, extra: [String: String] = [:]) -> URL {
        let query = Dictionary(
            FormEncoding.decode(URLComponents(url: authorizationURL, resolvingAgainstBaseURL: false)!.percentEncodedQuery!),
            uniquingKeysWith: { $1 })
        let code = "0.AAAA" + UUID().uuidString
        lock.withLock { _codes[code] = (query["nonce"], query["code_challenge"]) }
        var pairs = [("code", code), ("client_info", clientInfo), ("state", query["state"]!), ("session_state", UUID().uuidString)]
        for (name, value) in extra.sorted(by: { $0.key < $1.key }) { pairs.append((name, value)) }
        return FormEncoding.url(URL(string: query["redirect_uri"]!)!, appending: pairs)
    }

    /// An error redirect in Entra's shape.
    public func errorRedirect(for authorizationURL: URL, error: String, description: String, subcode: String? = nil) -> URL {
        let query = Dictionary(
            FormEncoding.decode(URLComponents(url: authorizationURL, resolvingAgainstBaseURL: false)!.percentEncodedQuery!),
            uniquingKeysWith: { $1 })
        var pairs = [
            ("error", error),
            ("error_description", description + "\r\nTrace ID: 1\r\nCorrelation ID: 2\r\nTimestamp: 2026-01-01 00:00:00Z"),
        ]
        if let subcode { pairs.append(("error_subcode", subcode)) }
        pairs.append(("state", query["state"]!))
        return FormEncoding.url(URL(string: query["redirect_uri"]!)!, appending: pairs)
    }

    public var clientInfo: String {
        Base64URL.encode(try! JSONSerialization.data(withJSONObject: ["uid": uid, "utid": tenantID], options: [.sortedKeys]))
    }

    /// Answers a request as the provider (discovery, keys, token); 404 for anything else.
    public func handle(_ request: HTTPRequest) async throws -> HTTPResponse {
        let path = request.url.path
        if path.hasSuffix("/v2.0/.well-known/openid-configuration") {
            return json([
                "issuer": issuerTemplate,
                "authorization_endpoint": base.appending(path: "\(tenant)/oauth2/v2.0/authorize").absoluteString,
                "token_endpoint": base.appending(path: "\(tenant)/oauth2/v2.0/token").absoluteString,
                "jwks_uri": base.appending(path: "\(tenant)/discovery/v2.0/keys").absoluteString,
                "id_token_signing_alg_values_supported": ["RS256"],
            ])
        }
        if path.hasSuffix("/discovery/v2.0/keys") {
            let published = publishedKey
            var key: [String: Any] = [
                "kty": "RSA", "use": "sig", "kid": published.kid,
                "n": Base64URL.encode(published.key.publicKey.modulusBytes), "e": "AQAB",
            ]
            if let keyIssuer { key["issuer"] = keyIssuer }
            return json(["keys": [key]])
        }
        if path.hasSuffix("/oauth2/v2.0/token") {
            return try await token(request.form)
        }
        if path.hasSuffix("/oauth2/v2.0/devicecode") {
            return json(deviceAuthorization)
        }
        return HTTPResponse(status: 404)
    }

    private func token(_ form: [String: String]) async throws -> HTTPResponse {
        let throttled = lock.withLock { () -> Int? in
            guard _throttle.count > 0 else { return nil }
            _throttle.count -= 1
            return _throttle.retryAfter
        }
        if let throttled {
            return json(
                [
                    "error": "temporarily_unavailable", "error_codes": [50196],
                    "error_description": "AADSTS50196: The server terminated an operation because it encountered a client request loop.",
                ],
                status: 429, headers: ["Content-Type": "application/json", "Retry-After": String(throttled)])
        }
        var nonce: String?
        switch form["grant_type"] {
        case "authorization_code":
            guard let code = form["code"], let issued = lock.withLock({ _codes.removeValue(forKey: code) }) else {
                return json(
                    [
                        "error": "invalid_grant", "error_description": "AADSTS54005: OAuth2 Authorization code was already redeemed.",
                        "error_codes": [54005],
                    ], status: 400)
            }
            let challenge = Base64URL.encode(SHA256.hash(data: Data((form["code_verifier"] ?? "").utf8)))
            guard challenge == issued.verifier else {
                return json(
                    [
                        "error": "invalid_grant",
                        "error_description":
                            "AADSTS501481: The Code_Verifier does not match the code_challenge supplied in the authorization request.",
                        "error_codes": [501481],
                    ], status: 400)
            }
            nonce = issued.nonce
        case "refresh_token":
            lock.withLock {
                _refreshesInFlight += 1
                _mostRefreshesAtOnce = max(_mostRefreshesAtOnce, _refreshesInFlight)
                _refreshedScopes.append(form["scope"] ?? "")
            }
            defer { lock.withLock { _refreshesInFlight -= 1 } }
            // Any hold the test put on refreshes (holdRefreshes).
            await withCheckedContinuation { continuation in
                let waits = lock.withLock { () -> Bool in
                    if refreshesHeld { heldRefreshes.append(continuation) }
                    return refreshesHeld
                }
                if !waits { continuation.resume() }
            }
            lock.withLock { _refreshCount += 1 }
            if let error = refreshError { return json(error, status: 400) }
            let accepted = lock.withLock { () -> Bool in
                guard let token = form["refresh_token"], let live = _refreshTokens[token] else { return false }
                guard _singleUseRefreshTokens else { return live }
                if live {
                    _refreshTokens[token] = false
                    return true
                }
                _reuseDetected += 1
                for key in _refreshTokens.keys { _refreshTokens[key] = false }
                return false
            }
            guard accepted else {
                return json(
                    [
                        "error": "invalid_grant", "error_description": "AADSTS700082: The refresh token has expired due to inactivity.",
                        "error_codes": [700082],
                    ], status: 400)
            }
        case "urn:ietf:params:oauth:grant-type:device_code":
            let answer = lock.withLock { () -> String in
                _devicePolls += 1
                return _deviceAnswers.isEmpty ? "ok" : _deviceAnswers.removeFirst()
            }
            guard answer == "ok" else {
                return json(["error": answer, "error_description": "AADSTS70016: \(answer)", "error_codes": [70016]], status: 400)
            }
        default:
            return json(["error": "unsupported_grant_type"], status: 400)
        }
        let (accessToken, refreshToken) = lock.withLock { () -> (String, String) in
            _tokenCounter += 1
            let refresh = "rt-\(_tokenCounter)-" + UUID().uuidString
            _refreshTokens[refresh] = true
            return ("at-\(_tokenCounter)-" + UUID().uuidString, refresh)
        }
        var body: [String: Any] = [
            "token_type": "Bearer",
            "scope": echoesScope
                ? (form["scope"] ?? "").split(separator: " ").filter { !["openid", "profile", "offline_access"].contains($0) }.joined(
                    separator: " ") : answeredScope,
            "expires_in": expiresIn, "ext_expires_in": expiresIn,
            "access_token": accessToken, "refresh_token": refreshToken, "client_info": clientInfo,
        ]
        body["id_token"] = idToken(nonce: nonce)
        return json(body)
    }

    /// A signed id_token with the current overrides.
    public func idToken(nonce: String?) -> String {
        var claims: [String: Any] = [
            "aud": clientID, "iss": "https://login.microsoftonline.com/\(tenantID)/v2.0",
            "iat": Int(now.timeIntervalSince1970), "nbf": Int(now.timeIntervalSince1970), "exp": Int(now.timeIntervalSince1970) + 3600,
            "name": "Alex Wilber", "oid": userObjectID, "preferred_username": username,
            "sub": "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ",
            "tid": tenantID, "ver": "2.0",
        ]
        if let nonce { claims["nonce"] = nonce }
        for (name, value) in tokenOverrides {
            if value is NSNull { claims[name] = nil } else { claims[name] = value }
        }
        return Self.sign(claims, with: signWith, kid: lock.withLock { _rolledOver } ? "key2" : "key1")
    }

    public static func sign(_ claims: [String: Any], with key: _RSA.Signing.PrivateKey, kid: String, alg: String = "RS256") -> String {
        let header = Base64URL.encode(
            try! JSONSerialization.data(withJSONObject: ["alg": alg, "kid": kid, "typ": "JWT"], options: [.sortedKeys]))
        let payload = Base64URL.encode(try! JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]))
        let input = Data("\(header).\(payload)".utf8)
        let signature = try! key.signature(for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5)
        return "\(header).\(payload).\(Base64URL.encode(signature.rawRepresentation))"
    }
}

extension _RSA.Signing.PublicKey {
    /// The modulus bytes, for the JWKS `n`.
    public var modulusBytes: Data { try! getKeyPrimitives().modulus }
}
