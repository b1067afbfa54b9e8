import FoundationEssentials

/// One `/authorize` request (OAuth 2.0 §4.1.1, OIDC Core §3.1.2.1, RFC 7636 §4.3), with the
/// secrets the client keeps to check and redeem its answer.
public struct AuthorizationRequest: Sendable, Hashable {
    /// `client_id`.
    public let clientID: String
    /// `redirect_uri`.
    public let redirectURI: URL
    /// `scope`, space-joined on the wire.
    public let scopes: [String]
    /// `state`: binds the answer to this request (CSRF protection); 32 CSPRNG bytes.
    public let state: Secret
    /// `nonce`: binds the id_token to this request (replay protection); 32 CSPRNG bytes.
    public let nonce: Secret
    /// `code_challenge` and `code_challenge_method`, and the verifier kept back.
    public let proofKey: ProofKey
    /// `client_info=1`: asks Microsoft for the `uid.utid` home account id.
    public let requestsClientInfo: Bool
    /// `prompt`, `login_hint`, `domain_hint`, B2C's `p`, and anything else the app adds.
    public let additionalParameters: [String: String]
    /// The authorization endpoint the request goes to.
    public let endpoint: URL

    /// A request with fresh `state`, `nonce` and PKCE values.
    public init(configuration: AccountConfiguration, additionalParameters: [String: String] = [:]) {
        self.init(
            configuration: configuration,
            state: Secret(RandomString.base64URL(byteCount: 32)),
            nonce: Secret(RandomString.base64URL(byteCount: 32)),
            proofKey: ProofKey(),
            additionalParameters: additionalParameters
        )
    }

    /// A request with given values, for tests that need to know them.
    public init(
        configuration: AccountConfiguration,
        state: Secret,
        nonce: Secret,
        proofKey: ProofKey,
        additionalParameters: [String: String] = [:]
    ) {
        self.clientID = configuration.clientID
        self.redirectURI = configuration.redirectURL
        self.scopes = configuration.scopes
        self.state = state
        self.nonce = nonce
        self.proofKey = proofKey
        self.requestsClientInfo = configuration.isMicrosoftAuthority
        self.additionalParameters = configuration.additionalAuthorizationParameters.merging(additionalParameters) { $1 }
        self.endpoint = configuration.authorizationURL
    }

    /// The URL to load in the web view.
    public var url: URL {
        var pairs: [(String, String)] = [
            ("client_id", clientID),
            ("response_type", "code"),
            ("redirect_uri", redirectURI.absoluteString),
            ("scope", scopes.joined(separator: " ")),
            ("response_mode", "query"),
            ("state", state.revealed),
            ("nonce", nonce.revealed),
            ("code_challenge", proofKey.challenge),
            ("code_challenge_method", proofKey.method),
        ]
        if requestsClientInfo { pairs.append(("client_info", "1")) }
        let existing = Set(
            URLComponents(url: endpoint, resolvingAgainstBaseURL: false)?.queryItems?.map { $0.name.lowercased() } ?? [])
        let reserved = Set(pairs.map(\.0))
        for (name, value) in additionalParameters.sorted(by: { $0.key < $1.key })
        where !reserved.contains(name) && !existing.contains(name.lowercased()) {
            pairs.append((name, value))
        }
        return FormEncoding.url(endpoint, appending: pairs)
    }
}
