/// A value that must never reach a log line, an error message, a trace or a screenshot:
/// an authorization code, a token, a password, a client secret, a `state` or a PKCE verifier.
///
/// Redaction happens at the type: every way Swift formats a value (`description`,
/// `debugDescription`, `dump`, string interpolation, `Logger` metadata) prints `<redacted>`.
/// Read the wrapped value explicitly with ``revealed`` at the one place that needs it
/// (building a request body, a header, or the cache file).
public struct Secret: Sendable, Hashable, Decodable {
    /// The wrapped value. Reading it is a deliberate act; grep for `.revealed` to audit.
    public let revealed: String

    /// Wraps a secret string.
    public init(_ value: String) {
        self.revealed = value
    }

    /// Whether the secret is the empty string (an unset client secret, for example).
    public var isEmpty: Bool { revealed.isEmpty }

    /// A masked form for people who need to see that a token exists (the Me console):
    /// its length and last four characters, never enough to use it.
    public var masked: String {
        guard revealed.count > 12 else { return "<redacted>" }
        return "••••\(revealed.suffix(4)) (\(revealed.count) chars)"
    }

    /// Read from JSON as a plain string. There is no `Encodable`: a secret is written only
    /// where code spells out `.revealed` (the cache writer, a request's form), never by a
    /// value that happens to contain one being encoded.
    public init(from decoder: any Decoder) throws {
        self.revealed = try decoder.singleValueContainer().decode(String.self)
    }

}

extension Secret: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

extension Secret {
    /// A fresh unguessable value: `byteCount` bytes from the CSPRNG, base64url-encoded.
    public static func random(byteCount: Int) -> Secret { Secret(RandomString.base64URL(byteCount: byteCount)) }

    /// Whether `other` is this secret, compared in a time that does not tell where they differ
    /// (a `state`, a nonce, the window's token).
    public func matches(_ other: String) -> Bool {
        let left = Array(revealed.utf8)
        let right = Array(other.utf8)
        guard left.count == right.count else { return false }
        return zip(left, right).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
