import FoundationEssentials

/// A request to the token endpoint (OAuth 2.0 §4.1.3, §6): one value type per grant. Secrets
/// stay ``Secret`` until ``formFields`` puts them on the wire; printing a request shows
/// `<redacted>` for each.
public protocol TokenRequest: Sendable, CustomStringConvertible {
    /// `grant_type`.
    var grantType: String { get }
    /// `client_id`.
    var clientID: String { get }
    /// The form fields in wire order, secrets revealed (the wire is their one destination).
    var formFields: [(String, String)] { get }
}

extension TokenRequest {
    public var description: String {
        let fields = formFields.map { name, value in
            "\(name)=\(Self.secretFields.contains(name) ? "<redacted>" : value)"
        }
        return "TokenRequest(\(fields.joined(separator: ", ")))"
    }

    static var secretFields: Set<String> { ["code", "code_verifier", "refresh_token", "client_secret", "device_code"] }
}

/// Redeeming an authorization code: `grant_type=authorization_code` with PKCE (RFC 7636 §4.5).
public struct AuthorizationCodeRequest: TokenRequest {
    public var grantType: String { "authorization_code" }
    /// `client_id`.
    public let clientID: String
    /// `code`: from the redirect.
    public let code: Secret
    /// `redirect_uri`: the same one the authorization request named.
    public let redirectURI: URL
    /// `code_verifier`: the PKCE secret kept back from the authorization request.
    public let codeVerifier: Secret
    /// `scope`, space-joined.
    public let scopes: [String]
    /// `client_info=1`: Microsoft's `uid.utid` home account id.
    public let requestsClientInfo: Bool

    /// The redemption of `code`, answering `request`.
    init(code: Secret, answering request: AuthorizationRequest) {
        clientID = request.clientID
        self.code = code
        redirectURI = request.redirectURI
        codeVerifier = request.proofKey.verifier
        scopes = request.scopes
        requestsClientInfo = request.requestsClientInfo
    }

    public var formFields: [(String, String)] {
        var fields = [
            ("client_id", clientID), ("grant_type", grantType), ("code", code.revealed),
            ("redirect_uri", redirectURI.absoluteString), ("code_verifier", codeVerifier.revealed),
            ("scope", scopes.joined(separator: " ")),
        ]
        if requestsClientInfo { fields.append(("client_info", "1")) }
        return fields
    }
}

/// Redeeming a refresh token: `grant_type=refresh_token` (OAuth 2.0 §6).
public struct RefreshTokenRequest: TokenRequest {
    public var grantType: String { "refresh_token" }
    /// `client_id`.
    public let clientID: String
    /// `refresh_token`.
    public let refreshToken: Secret
    /// `scope`, space-joined: the OpenID scopes the account type asks for, then the wanted ones.
    public let scopes: [String]
    /// `client_info=1`.
    public let requestsClientInfo: Bool

    /// A refresh for `scopes`.
    init(clientID: String, refreshToken: Secret, scopes: [String], requestsClientInfo: Bool) {
        self.clientID = clientID
        self.refreshToken = refreshToken
        self.scopes = scopes
        self.requestsClientInfo = requestsClientInfo
    }

    public var formFields: [(String, String)] {
        var fields = [
            ("client_id", clientID), ("grant_type", grantType), ("refresh_token", refreshToken.revealed),
            ("scope", scopes.joined(separator: " ")),
        ]
        if requestsClientInfo { fields.append(("client_info", "1")) }
        return fields
    }
}
