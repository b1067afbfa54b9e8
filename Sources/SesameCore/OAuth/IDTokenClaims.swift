import FoundationEssentials

/// The id_token claims Sesame reads (OIDC Core §2; Entra's and B2C's claim references).
public struct IDTokenClaims: Sendable, Hashable {
    /// `iss`.
    public let issuer: String
    /// `aud`: a string, or an array of them.
    public let audiences: [String]
    /// `sub`.
    public let subject: String
    /// `exp`.
    public let expiresAt: Date
    /// `nbf`.
    public let notBefore: Date?
    /// `iat`.
    public let issuedAt: Date?
    /// `nonce`.
    public let nonce: String?
    /// `azp`: the party the token was issued to, when `aud` names several.
    public let authorizedParty: String?
    /// `oid`: the user's object id.
    public let objectID: String?
    /// `tid`: the tenant id.
    public let tenantID: String?
    /// `preferred_username` (v2), else `upn`, else the first of B2C's `emails`, else `email`.
    public let username: String?
    /// `name`.
    public let name: String?
    /// `tfp` (or `acr` on legacy B2C policies): the policy that issued the token.
    public let policy: String?
    /// Every claim as sent.
    public let all: [String: JSONValue]

    /// Reads the claims of a parsed token.
    /// - Throws: ``IDTokenValidationError`` when a required claim is absent or mistyped.
    public init(_ claims: [String: JSONValue]) throws(IDTokenValidationError) {
        func string(_ name: String) -> String? { claims[name]?.stringValue }
        func date(_ name: String) throws(IDTokenValidationError) -> Date? {
            guard let value = claims[name] else { return nil }
            guard let seconds = value.integerValue else { throw .malformedClaim(name) }
            return Date(timeIntervalSince1970: TimeInterval(seconds))
        }
        guard let issuer = string("iss") else { throw .missingClaim("iss") }
        guard let audiences = claims["aud"]?.stringArray, !audiences.isEmpty else { throw .missingClaim("aud") }
        guard let subject = string("sub") else { throw .missingClaim("sub") }
        guard let expiresAt = try date("exp") else { throw .missingClaim("exp") }
        self.issuer = issuer
        self.audiences = audiences
        self.subject = subject
        self.expiresAt = expiresAt
        self.notBefore = try date("nbf")
        self.issuedAt = try date("iat")
        self.nonce = string("nonce")
        self.authorizedParty = string("azp")
        self.objectID = string("oid")
        self.tenantID = string("tid")
        self.username = string("preferred_username") ?? string("upn") ?? claims["emails"]?.stringArray?.first ?? string("email")
        self.name = string("name")
        self.policy = string("tfp") ?? string("acr")
        self.all = claims
    }
}
