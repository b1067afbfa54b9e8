import FoundationEssentials

/// One of the checks Sesame makes on an ID token before it uses it (OpenID Connect Core
/// §3.1.3.7), and how it went: what the flow inspector shows as ✓ or ✗.
public struct IDTokenCheck: Sendable, Hashable {
    public enum Name: String, Sendable, CaseIterable {
        /// `alg` RS256, a key of the provider's JWKS by `kid`, and the signature with it.
        case signature
        /// `iss` is the provider's issuer.
        case issuer
        /// `aud` names this app (and `azp`, when there are several).
        case audience
        /// `exp` has not passed and `nbf` has come (with the allowed clock skew).
        case lifetime
        /// `nonce` is the one this sign-in sent (interactive sign-ins only).
        case nonce
    }

    public let name: Name
    /// true: passed; false: failed (the token is refused); nil: not reached.
    public let passed: Bool?
    /// The header's `kid` (for ``Name/signature``): which of the provider's keys signed it.
    public let keyID: String?

    /// The checks of a token that passed them all (`nonce` only where one was expected).
    static func allPassed(idToken: Secret, nonceChecked: Bool) -> [IDTokenCheck] {
        outcome(failedAt: nil, idToken: idToken, nonceChecked: nonceChecked)
    }

    /// The checks of a token the validator refused with `failure`: those before it passed.
    static func refused(by failure: IDTokenValidationError, idToken: Secret, nonceChecked: Bool) -> [IDTokenCheck] {
        let failed: Name =
            switch failure {
            // The tenant names the issuer of a template issuer (`{tenantid}`).
            case .missingClaim("tid"), .issuerMismatch: .issuer
            case .malformed, .unsupportedAlgorithm, .unknownKey, .badSignature, .missingClaim, .malformedClaim: .signature
            case .audienceMismatch, .authorizedPartyMismatch: .audience
            case .expired, .notYetValid: .lifetime
            case .nonceMismatch: .nonce
            }
        return outcome(failedAt: failed, idToken: idToken, nonceChecked: nonceChecked)
    }

    private static func outcome(failedAt failed: Name?, idToken: Secret, nonceChecked: Bool) -> [IDTokenCheck] {
        let keyID = (try? JSONWebToken(compact: idToken))?.header["kid"]?.stringValue
        var reached = true
        return Name.allCases.filter { $0 != .nonce || nonceChecked }.map { name in
            defer { if name == failed { reached = false } }
            let passed: Bool? = reached ? name != failed : nil
            return IDTokenCheck(name: name, passed: passed, keyID: name == .signature ? keyID : nil)
        }
    }
}
