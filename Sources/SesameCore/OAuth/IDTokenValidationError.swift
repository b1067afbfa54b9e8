import FoundationEssentials

/// Why an id_token was refused. Never carries the token.
public enum IDTokenValidationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not a compact JWS.
    case malformed(String)
    /// `alg` is not RS256 (`none` and HMAC algorithms are refused outright).
    case unsupportedAlgorithm(String)
    /// No key in the provider's JWKS has the token's `kid`, even after refetching it.
    case unknownKey(String?)
    /// The signature does not verify with the provider's key.
    case badSignature
    /// A required claim is absent.
    case missingClaim(String)
    /// A claim has the wrong type.
    case malformedClaim(String)
    /// `iss` is not the provider's issuer.
    case issuerMismatch(expected: String, actual: String)
    /// `aud` does not contain the client id.
    case audienceMismatch(expected: String, actual: [String])
    /// `azp` is not the client id, or is missing although `aud` names several parties (OIDC
    /// Core §3.1.3.7, items 4 and 5).
    case authorizedPartyMismatch(expected: String, actual: String?)
    /// `nonce` is not the one sent on `/authorize`.
    case nonceMismatch
    /// `exp` has passed (beyond the allowed clock skew).
    case expired(Date)
    /// `nbf` is in the future (beyond the allowed clock skew).
    case notYetValid(Date)

    public var description: String {
        switch self {
        case .malformed(let reason): "the id_token is malformed: \(reason)"
        case .unsupportedAlgorithm(let alg): "the id_token is signed with \(alg), only RS256 is accepted"
        case .unknownKey(let kid): "the id_token's signing key \(kid ?? "(no kid)") is not in the provider's published keys"
        case .badSignature: "the id_token's signature does not verify with the provider's published key"
        case .missingClaim(let name): "the id_token has no \(name) claim"
        case .malformedClaim(let name): "the id_token's \(name) claim has the wrong type"
        case .issuerMismatch(let expected, let actual): "the id_token was issued by \(actual), expected \(expected)"
        case .audienceMismatch(let expected, let actual):
            "the id_token is for \(actual.joined(separator: ", ")), not this app (\(expected))"
        case .authorizedPartyMismatch(let expected, let actual):
            actual.map { "the id_token was issued to \($0) (azp), not this app (\(expected))" }
                ?? "the id_token names several audiences but no authorized party (azp)"
        case .nonceMismatch: "the id_token's nonce does not match this sign-in request (possible replay)"
        case .expired(let date): "the id_token expired at \(date.formatted(.iso8601)); check the system clock"
        case .notYetValid(let date): "the id_token is not valid before \(date.formatted(.iso8601)); check the system clock"
        }
    }
}
