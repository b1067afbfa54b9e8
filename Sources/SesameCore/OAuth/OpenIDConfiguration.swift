import FoundationEssentials

/// An OpenID Provider's discovery document (OIDC Discovery §3), the fields Sesame uses.
public struct OpenIDConfiguration: Sendable, Hashable, Decodable {
    /// `issuer`. Entra's multi-tenant documents carry the literal template
    /// `https://login.microsoftonline.com/{tenantid}/v2.0`.
    public let issuer: String
    /// `authorization_endpoint`.
    public let authorizationEndpoint: URL?
    /// `token_endpoint`.
    public let tokenEndpoint: URL?
    /// `jwks_uri`.
    public let jwksURI: URL
    /// `id_token_signing_alg_values_supported`.
    public let signingAlgorithms: [String]?
    /// `userinfo_endpoint` (OIDC Core §5.3): the signed-in user's claims, for an access token.
    public let userinfoEndpoint: URL?
    /// `device_authorization_endpoint` (RFC 8628 §4): where a device code sign-in starts.
    public let deviceAuthorizationEndpoint: URL?
    /// `token_endpoint_auth_methods_supported`: how a client may authenticate at the token
    /// endpoint (`client_secret_basic` when absent, OIDC Discovery §3).
    public let tokenEndpointAuthMethods: [String]?

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case jwksURI = "jwks_uri"
        case signingAlgorithms = "id_token_signing_alg_values_supported"
        case deviceAuthorizationEndpoint = "device_authorization_endpoint"
        case userinfoEndpoint = "userinfo_endpoint"
        case tokenEndpointAuthMethods = "token_endpoint_auth_methods_supported"
    }
}

/// A JSON Web Key Set (RFC 7517 §5).
public struct JSONWebKeySet: Sendable, Hashable, Decodable {
    /// `keys`.
    public let keys: [JSONWebKey]
}

/// One JSON Web Key (RFC 7517 §4), RSA fields (RFC 7518 §6.3.1) and Microsoft's `issuer`.
public struct JSONWebKey: Sendable, Hashable, Decodable {
    /// `kty`: `RSA`.
    public let keyType: String
    /// `kid`.
    public let keyID: String?
    /// `use`: `sig`.
    public let use: String?
    /// `alg`.
    public let algorithm: String?
    /// `n`: the modulus, base64url.
    public let modulus: String?
    /// `e`: the exponent, base64url.
    public let exponent: String?
    /// `issuer`: Microsoft restricts each key to the tokens of this issuer (which may carry
    /// the `{tenantid}` template).
    public let issuer: String?

    enum CodingKeys: String, CodingKey {
        case keyType = "kty"
        case keyID = "kid"
        case use
        case algorithm = "alg"
        case modulus = "n"
        case exponent = "e"
        case issuer
    }
}
