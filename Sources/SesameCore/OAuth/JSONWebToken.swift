import FoundationEssentials

/// A compact JWS (RFC 7515 §7.1) split into its parts. Parsing does not trust anything:
/// ``IDTokenValidator`` checks the signature and the claims.
public struct JSONWebToken: Sendable {
    /// The protected header's fields (`alg`, `kid`, `typ`, …).
    public let header: [String: JSONValue]
    /// The payload's claims.
    public let claims: [String: JSONValue]
    /// `BASE64URL(header) || '.' || BASE64URL(payload)`: the bytes the signature covers.
    public let signingInput: Data
    /// The signature bytes.
    public let signature: Data

    /// Why a token could not be parsed.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What was wrong, never the token itself.
        public let reason: String
        public var description: String { "malformed JWT: \(reason)" }
    }

    /// Parses `header.payload.signature`.
    public init(compact: Secret) throws(ParseError) {
        let parts = compact.revealed.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw ParseError(reason: "expected 3 dot-separated parts, found \(parts.count)") }
        guard let headerData = Base64URL.decode(parts[0]), let payloadData = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2])
        else { throw ParseError(reason: "a part is not base64url") }
        guard let header = try? JSONDecoder().decode([String: JSONValue].self, from: headerData) else {
            throw ParseError(reason: "the header is not a JSON object")
        }
        guard let claims = try? JSONDecoder().decode([String: JSONValue].self, from: payloadData) else {
            throw ParseError(reason: "the payload is not a JSON object")
        }
        self.header = header
        self.claims = claims
        self.signingInput = Data("\(parts[0]).\(parts[1])".utf8)
        self.signature = signature
    }
}
