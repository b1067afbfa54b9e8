import FoundationEssentials

/// What came back on the redirect URI: a code, or an error (OAuth 2.0 §4.1.2 and §4.1.2.1).
public enum AuthorizationResponse: Sendable, Hashable {
    /// Success.
    case code(AuthorizationCodeResponse)
    /// The identity service (or the user) refused.
    case error(AuthorizationErrorResponse)

    /// Parses a redirect URL's query, or its fragment for `response_mode=fragment`.
    /// - Returns: `nil` when the URL carries neither `code` nor `error`.
    public init?(redirectURL url: URL) {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        var pairs = FormEncoding.decode(components?.percentEncodedQuery ?? "")
        if !pairs.contains(where: { $0.0 == "code" || $0.0 == "error" }) {
            pairs = FormEncoding.decode(components?.percentEncodedFragment ?? "")
        }
        var fields: [String: String] = [:]
        for (name, value) in pairs where fields[name] == nil { fields[name] = value }
        if let error = fields["error"] {
            self = .error(AuthorizationErrorResponse(fields: fields, error: error))
        } else if let code = fields["code"], !code.isEmpty {
            self = .code(AuthorizationCodeResponse(fields: fields, code: code))
        } else {
            return nil
        }
    }

    /// The `state` the answer carries.
    public var state: String? {
        switch self {
        case .code(let response): response.state?.revealed
        case .error(let response): response.state?.revealed
        }
    }
}

/// A successful authorization response.
public struct AuthorizationCodeResponse: Sendable, Hashable {
    /// `code`: single use, about ten minutes.
    public let code: Secret
    /// `state`, echoed.
    public let state: Secret?
    /// `session_state`: Entra's session id.
    public let sessionState: String?
    /// `client_info`: base64url `{"uid","utid"}` when `client_info=1` was sent.
    public let clientInfo: String?
    /// Every other parameter, kept.
    public let additionalParameters: [String: String]

    init(fields: [String: String], code: String) {
        self.code = Secret(code)
        self.state = fields["state"].map(Secret.init)
        self.sessionState = fields["session_state"]
        self.clientInfo = fields["client_info"]
        self.additionalParameters = fields.filter { !["code", "state", "session_state", "client_info"].contains($0.key) }
    }
}

/// An error authorization response, in Entra's and B2C's shape.
public struct AuthorizationErrorResponse: Sendable, Hashable {
    /// `error`: `access_denied`, `login_required`, `interaction_required`, ….
    public let error: String
    /// `error_description`: `AADSTSnnnnn: text\r\nTrace ID…` (B2C: `AADB2Cnnnnn: …`).
    public let errorDescription: String?
    /// `error_uri`.
    public let errorURI: String?
    /// `error_subcode` (`cancel` from brokers).
    public let errorSubcode: String?
    /// `state`, echoed.
    public let state: Secret?

    init(fields: [String: String], error: String) {
        self.error = error
        self.errorDescription = fields["error_description"]
        self.errorURI = fields["error_uri"]
        self.errorSubcode = fields["error_subcode"]
        self.state = fields["state"].map(Secret.init)
    }
}
