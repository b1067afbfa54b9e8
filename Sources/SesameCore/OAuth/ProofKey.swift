import Crypto
import FoundationEssentials

/// A PKCE proof key (RFC 7636): the verifier kept by the client, the challenge sent on
/// `/authorize`, and the method, always `S256`.
public struct ProofKey: Sendable, Hashable, CustomStringConvertible {
    /// `code_verifier`: 43 characters from 32 CSPRNG bytes (RFC 7636 §4.1). Sent only to the
    /// token endpoint.
    public let verifier: Secret
    /// `code_challenge`: base64url(SHA-256(verifier)).
    public let challenge: String
    /// `code_challenge_method`.
    public let method = "S256"

    /// A fresh proof key from the CSPRNG.
    public init() {
        self.init(verifier: RandomString.base64URL(byteCount: 32))
    }

    /// A proof key for a given verifier (RFC 7636 Appendix B's test vector, for example).
    public init(verifier: String) {
        self.verifier = Secret(verifier)
        self.challenge = Base64URL.encode(SHA256.hash(data: Data(verifier.utf8)))
    }

    public var description: String { "ProofKey(method: S256, challenge: \(challenge))" }
}
