import Crypto
import FoundationEssentials
import _CryptoExtras

/// Checks an id_token as OIDC Core §3.1.3.7 asks, with Microsoft's rules for multi-tenant
/// issuers: RS256 signature by a key of the provider's JWKS (the one its `kid` names, or one
/// published without a `kid`), `iss` exactly as discovered (with Entra's `{tenantid}` filled in
/// from `tid`, and the key's own `issuer` if it has one), `aud` as a string or an array with
/// `azp` checked, `exp`/`nbf` with clock skew, and `nonce`.
public struct IDTokenValidator: Sendable {
    /// How far clocks may disagree.
    public var clockSkew: TimeInterval

    /// A validator allowing `clockSkew` seconds of disagreement (five minutes by default,
    /// the allowance Microsoft's own libraries use).
    public init(clockSkew: TimeInterval = 300) {
        self.clockSkew = clockSkew
    }

    /// Validates a token and returns its claims.
    /// - Parameters:
    ///   - expectedNonce: the `nonce` sent on `/authorize`; `nil` for tokens from a refresh,
    ///     which carry none.
    /// - Throws: ``IDTokenValidationError`` saying which check failed.
    public func validate(
        _ token: Secret,
        provider: OpenIDConfiguration,
        keys: JSONWebKeySet,
        clientID: String,
        expectedNonce: String?,
        now: Date
    ) throws(IDTokenValidationError) -> IDTokenClaims {
        let jwt: JSONWebToken
        do {
            jwt = try JSONWebToken(compact: token)
        } catch {
            throw .malformed(error.reason)
        }
        let algorithm = jwt.header["alg"]?.stringValue ?? "none"
        guard algorithm == "RS256" else { throw .unsupportedAlgorithm(algorithm) }

        let claims = try IDTokenClaims(jwt.claims)
        let keyID = jwt.header["kid"]?.stringValue
        let signingKeys = keys.keys.filter { key in key.keyType == "RSA" && (key.use == nil || key.use == "sig") }
        // The key the token names; else, as OIDC Core §10.1 allows, a key published without a
        // `kid` (a provider with one key need not name it); a token without `kid`: any key.
        let named = signingKeys.filter { keyID == nil || $0.keyID == keyID }
        let candidates = named.isEmpty ? signingKeys.filter { $0.keyID == nil } : named
        guard !candidates.isEmpty else { throw .unknownKey(keyID) }
        let digest = SHA256.hash(data: jwt.signingInput)
        let signature = _RSA.Signing.RSASignature(rawRepresentation: jwt.signature)
        guard
            let key = candidates.first(where: { key in
                guard let publicKey = Self.publicKey(key) else { return false }
                return publicKey.isValidSignature(signature, for: digest, padding: .insecurePKCS1v1_5)
            })
        else { throw .badSignature }

        let expectedIssuer = try Self.resolve(provider.issuer, tenantID: claims.tenantID)
        guard claims.issuer == expectedIssuer else {
            throw .issuerMismatch(expected: expectedIssuer, actual: claims.issuer)
        }
        if let keyIssuer = key.issuer {
            let resolved = try Self.resolve(keyIssuer, tenantID: claims.tenantID)
            guard claims.issuer == resolved else { throw .issuerMismatch(expected: resolved, actual: claims.issuer) }
        }
        guard claims.audiences.contains(clientID) else {
            throw .audienceMismatch(expected: clientID, actual: claims.audiences)
        }
        if claims.audiences.count > 1 || claims.authorizedParty != nil {
            guard claims.authorizedParty == clientID else {
                throw .authorizedPartyMismatch(expected: clientID, actual: claims.authorizedParty)
            }
        }
        guard claims.expiresAt.addingTimeInterval(clockSkew) > now else { throw .expired(claims.expiresAt) }
        if let notBefore = claims.notBefore, notBefore.addingTimeInterval(-clockSkew) > now {
            throw .notYetValid(notBefore)
        }
        if let expectedNonce {
            guard let nonce = claims.nonce, Secret(expectedNonce).matches(nonce) else { throw .nonceMismatch }
        }
        return claims
    }

    /// Fills Entra's `{tenantid}` issuer template from the token's `tid`.
    private static func resolve(_ issuer: String, tenantID: String?) throws(IDTokenValidationError) -> String {
        guard issuer.contains("{tenantid}") else { return issuer }
        guard let tenantID, !tenantID.isEmpty else { throw .missingClaim("tid") }
        return issuer.replacing("{tenantid}", with: tenantID)
    }

    private static func publicKey(_ key: JSONWebKey) -> _RSA.Signing.PublicKey? {
        guard let modulus = key.modulus.flatMap(Base64URL.decode), let exponent = key.exponent.flatMap(Base64URL.decode) else {
            return nil
        }
        return try? _RSA.Signing.PublicKey(n: modulus, e: exponent)
    }
}
