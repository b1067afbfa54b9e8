import FoundationEssentials

/// `response_mode`: how the result reaches the redirect URI.
enum ResponseMode: String, Sendable {
    case query, fragment
    case formPost = "form_post"
}

/// A validated request to `/oauth2/v2.0/authorize`.
struct AuthorizeRequest: Sendable {
    let endpoint: IdentityEndpoint
    let client: ClientRegistration
    /// `redirect_uri` as sent (the token request must repeat it).
    let redirectURI: String
    /// Where the browser goes back to: `redirect_uri` after Entra's trailing-slash rule.
    let replyURI: String
    /// `response_mode`, defaulting to `query` for `code`.
    let responseMode: ResponseMode
    /// `scope` as sent, and what it asks for.
    let scope: String
    let scopes: ScopeRequest
    /// `state`: returned verbatim.
    let state: String?
    /// `nonce`: copied into the id_token verbatim (MSAL sends a SHA-256 hex of its own nonce).
    let nonce: String?
    /// `prompt`: `login`, `select_account`, `consent`, `none`, `create`.
    let prompt: String?
    /// `login_hint`: pre-fills the username.
    let loginHint: String?
    /// `code_challenge` and `code_challenge_method` (`S256` or `plain`; plain when absent).
    let codeChallenge: String?
    let codeChallengeMethod: String
    /// `client_info=1`: return `client_info` with the code.
    let wantsClientInfo: Bool
    /// `client-request-id`: the correlation id of every error this request causes.
    let correlationID: String
    /// `claims`: a claims request; one naming Conditional Access policies (`capolids`), as the
    /// challenge of AADSTS50076 does, demands multi-factor authentication.
    var claims: String? = nil

    /// Whether the request's claims demand multi-factor authentication.
    var demandsMFA: Bool { claims?.contains("capolids") == true }

    /// Why an authorize request fails: shown on the page (the client or redirect URI cannot be
    /// trusted) or sent back to the redirect URI.
    enum Failure: Error {
        case page(ServiceError)
        case redirect(ServiceError, to: AuthorizeRequest.Reply)
    }

    /// Enough of a request to send an error back.
    struct Reply: Sendable {
        let uri: String
        let mode: ResponseMode
        let state: String?
        let correlationID: String
    }

    var reply: Reply { Reply(uri: replyURI, mode: responseMode, state: state, correlationID: correlationID) }

    static func parse(
        _ query: FormFields, endpoint: IdentityEndpoint, clients: [ClientRegistration], emulatorBase: URL, lenient: Bool = false
    ) throws(Failure) -> AuthorizeRequest {
        let correlationID = query.nonEmpty("client-request-id") ?? Identifiers.guid()
        let b2c = endpoint.tenant.kind == .b2c

        guard let clientID = query.nonEmpty("client_id")?.lowercased() else { throw .page(.missingParameter("client_id")) }
        guard let client = clients.first(where: { $0.clientID == clientID && $0.tenantKinds.contains(endpoint.tenant.kind) }) else {
            throw .page(.unknownClient(clientID, tenant: endpoint.tenant.id))
        }
        guard let redirectURI = query.nonEmpty("redirect_uri") else {
            throw .page(
                b2c ? .b2c("invalid_request", 90008, "The request does not contain a redirect_uri.") : .missingParameter("redirect_uri"))
        }
        guard let replyURI = client.replyURI(for: redirectURI, emulatorBase: emulatorBase) else {
            throw .page(
                b2c
                    ? .b2cRedirectNotRegistered(redirectURI, clientID: clientID)
                    : .redirectURINotRegistered(redirectURI, clientID: clientID))
        }

        let state = query["state"]
        let responseType = query.nonEmpty("response_type") ?? ""
        let modeText = query.nonEmpty("response_mode")
        let mode = modeText.flatMap(ResponseMode.init(rawValue:)) ?? .query
        let reply = Reply(uri: replyURI, mode: mode, state: state, correlationID: correlationID)

        if let modeText, ResponseMode(rawValue: modeText) == nil {
            throw .redirect(
                .invalidRequest(900144, "The value '\(modeText)' for response_mode is not supported. Use query, fragment or form_post."),
                to: reply)
        }
        guard !responseType.isEmpty else { throw .redirect(.missingParameter("response_type"), to: reply) }
        guard responseType.split(separator: " ").map(String.init) == ["code"] else {
            throw .redirect(.unsupportedResponseType(responseType), to: reply)
        }
        guard let scope = query.nonEmpty("scope") else {
            throw .redirect(
                b2c ? .b2c("invalid_request", 90010, "The request does not contain a scope.") : .missingParameter("scope"), to: reply)
        }
        let scopes: ScopeRequest
        do {
            scopes = try ScopeRequest.parse(scope, tenant: endpoint.tenant, clientID: client.clientID, lenient: lenient)
        } catch {
            throw .redirect(error, to: reply)
        }
        if b2c, scopes.resource == nil, !scopes.wantsIDToken {
            throw .redirect(
                .b2c("invalid_request", 90115, "The request must contain the openid scope or the client id as a scope."), to: reply)
        }

        let challenge = query.nonEmpty("code_challenge")
        let method = query.nonEmpty("code_challenge_method") ?? "plain"
        if query.nonEmpty("code_challenge_method") != nil, challenge == nil {
            throw .redirect(.missingParameter("code_challenge"), to: reply)
        }
        if challenge != nil, method != "S256", method != "plain" {
            throw .redirect(
                b2c
                    ? .b2c(
                        "invalid_request", 90184, "The supplied code_challenge_method is not supported. Supported values are plain or S256."
                    )
                    : .invalidRequest(50147, "The code_challenge_method '\(method)' is not supported. Use S256 or plain."), to: reply)
        }
        if let challenge, !(43...128).contains(challenge.count) {
            throw .redirect(.invalidRequest(501491, "Invalid size of Code_Challenge parameter."), to: reply)
        }

        let prompt = query.nonEmpty("prompt")?.lowercased()
        if let prompt, !["login", "select_account", "consent", "none", "create"].contains(prompt) {
            throw .redirect(
                .invalidRequest(90023, "Invalid prompt value '\(prompt)'. Use login, select_account, consent or none."), to: reply)
        }

        return AuthorizeRequest(
            endpoint: endpoint, client: client, redirectURI: redirectURI, replyURI: replyURI, responseMode: mode,
            scope: scope, scopes: scopes, state: state, nonce: query["nonce"], prompt: prompt,
            loginHint: query.nonEmpty("login_hint"), codeChallenge: challenge, codeChallengeMethod: method,
            wantsClientInfo: query["client_info"] == "1", correlationID: correlationID, claims: query.nonEmpty("claims"))
    }
}
