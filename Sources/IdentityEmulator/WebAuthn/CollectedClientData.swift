import FoundationEssentials

/// Why `clientDataJSON` was refused.
enum ClientDataError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Larger than 4 KiB.
    case tooLarge
    /// Not a JSON object with string `type`, `challenge` and `origin`.
    case malformed
    /// `challenge` is not base64url.
    case challengeNotBase64URL

    var description: String {
        switch self {
        case .tooLarge: "the client data is larger than 4 KiB"
        case .malformed: "the client data is not the JSON object a browser writes"
        case .challengeNotBase64URL: "the client data's challenge is not base64url"
        }
    }
}

/// The browser's `clientDataJSON` (WebAuthn Level 3 §5.8.1): what the browser says it asked
/// the authenticator to sign, and for whom.
struct CollectedClientData: Sendable, Equatable {
    static let maximumSize = 4 * 1024

    /// `type`: `webauthn.create` for a registration, `webauthn.get` for a sign-in.
    let type: String
    /// `challenge`, decoded from base64url.
    let challenge: [UInt8]
    /// `origin`: the page's origin as the browser saw it.
    let origin: String
    /// `crossOrigin`: true when the call came from a frame of another origin.
    let crossOrigin: Bool?
    /// `topOrigin`: the top-level origin, present only for cross-origin frames.
    let topOrigin: String?
    /// The bytes as received: the client data hash is over them.
    let raw: [UInt8]

    private struct Wire: Decodable {
        let type: String
        let challenge: String
        let origin: String
        let crossOrigin: Bool?
        let topOrigin: String?
    }

    init(_ bytes: [UInt8]) throws(ClientDataError) {
        guard bytes.count <= Self.maximumSize else { throw .tooLarge }
        guard let wire = try? JSONDecoder().decode(Wire.self, from: Data(bytes)) else { throw .malformed }
        guard let challenge = WebAuthnBase64URL.decode(wire.challenge) else { throw .challengeNotBase64URL }
        type = wire.type
        self.challenge = challenge
        origin = wire.origin
        crossOrigin = wire.crossOrigin
        topOrigin = wire.topOrigin
        raw = bytes
    }
}

/// base64url as WebAuthn's JSON forms write it: no padding, and nothing outside the URL-safe
/// alphabet accepted (the emulator's general decoder is kinder than a relying party should be).
enum WebAuthnBase64URL {
    static func encode(_ bytes: some Sequence<UInt8>) -> String { Base64URL.encode(bytes) }

    static func decode(_ text: String, maximumLength: Int = 64 * 1024) -> [UInt8]? {
        guard text.utf8.count <= maximumLength, text.utf8.count % 4 != 1 else { return nil }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"):
                continue
            default: return nil
            }
        }
        return Base64URL.decode(text).map { Array($0) }
    }
}
