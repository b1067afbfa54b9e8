import FoundationEssentials

/// A successful token endpoint answer (OAuth 2.0 §5.1), in Entra's and B2C's shapes.
///
/// Entra's v2 endpoint sends numbers as JSON numbers; B2C (and Entra v1) as strings
/// (`"expires_in":"3600"`): both are read. Fields this type does not model are kept in
/// ``additionalFields``.
public struct TokenResponse: Sendable, Hashable, Decodable, CustomStringConvertible {
    /// `access_token`.
    public let accessToken: Secret
    /// `token_type`: `Bearer`.
    public let tokenType: String
    /// `expires_in`: seconds, as a number or a string; 600 when absent (as MSAL assumes).
    public let expiresIn: Int
    /// `ext_expires_in`: Entra's extended lifetime for outages.
    public let extendedExpiresIn: Int?
    /// `refresh_in`: when Entra suggests refreshing early.
    public let refreshIn: Int?
    /// `scope`: the granted scopes (Entra echoes them without `offline_access`). `nil` when the
    /// answer names none: absent, empty, or B2C's `"/"` for a client-id scope — then the scopes
    /// asked for are what the token is cached under.
    public let scope: [String]?
    /// `refresh_token`.
    public let refreshToken: Secret?
    /// `id_token`: a JWT, validated before it is stored.
    public let idToken: Secret?
    /// `client_info`: base64url `{"uid","utid"}`.
    public let clientInfo: String?
    /// B2C's `not_before`.
    public let notBefore: Int?
    /// B2C's `expires_on`.
    public let expiresOn: Int?
    /// B2C's `refresh_token_expires_in`.
    public let refreshTokenExpiresIn: Int?
    /// B2C's `id_token_expires_in`.
    public let idTokenExpiresIn: Int?
    /// B2C's `profile_info`.
    public let profileInfo: String?
    /// Every field not modelled above.
    public let additionalFields: [String: JSONValue]

    private static let modelled: Set<String> = [
        "access_token", "token_type", "expires_in", "ext_expires_in", "refresh_in", "scope", "refresh_token",
        "id_token", "client_info", "not_before", "expires_on", "refresh_token_expires_in", "id_token_expires_in",
        "profile_info",
    ]

    public init(from decoder: any Decoder) throws {
        let fields = try [String: JSONValue](from: decoder)
        func string(_ name: String) -> String? { fields[name]?.stringValue }
        func integer(_ name: String) throws -> Int? {
            guard let value = fields[name], value != .null else { return nil }
            guard let integer = value.integerValue else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: [AnyCodingKey(name)],
                        debugDescription: "\(name) is not a whole number of reasonable size (as a number or a numeric string)"))
            }
            return integer
        }
        guard let accessToken = string("access_token"), !accessToken.isEmpty else {
            throw DecodingError.keyNotFound(AnyCodingKey("access_token"), .init(codingPath: [], debugDescription: "no access_token"))
        }
        self.accessToken = Secret(accessToken)
        self.tokenType = string("token_type") ?? "Bearer"
        self.expiresIn = try integer("expires_in") ?? 600
        self.extendedExpiresIn = try integer("ext_expires_in")
        self.refreshIn = try integer("refresh_in")
        let granted = string("scope").map { $0.split(separator: " ").map(String.init).filter { $0 != "/" } }
        self.scope = granted.flatMap { $0.isEmpty ? nil : $0 }
        self.refreshToken = string("refresh_token").flatMap { $0.isEmpty ? nil : Secret($0) }
        self.idToken = string("id_token").flatMap { $0.isEmpty ? nil : Secret($0) }
        self.clientInfo = string("client_info")
        self.notBefore = try integer("not_before")
        self.expiresOn = try integer("expires_on")
        self.refreshTokenExpiresIn = try integer("refresh_token_expires_in")
        self.idTokenExpiresIn = try integer("id_token_expires_in")
        self.profileInfo = string("profile_info")
        self.additionalFields = fields.filter { !Self.modelled.contains($0.key) }
    }

    public var description: String {
        "TokenResponse(token_type: \(tokenType), expires_in: \(expiresIn), scope: \(scope?.joined(separator: " ") ?? "-"), "
            + "refresh_token: \(refreshToken == nil ? "none" : "<redacted>"), id_token: \(idToken == nil ? "none" : "<redacted>"))"
    }
}
