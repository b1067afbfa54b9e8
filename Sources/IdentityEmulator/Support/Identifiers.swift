import Crypto
import FoundationEssentials

/// Random identifiers: GUIDs for trace and correlation ids, opaque handles for codes, tokens,
/// sessions and sign-in transactions.
enum Identifiers {
    static func guid() -> String { UUID().uuidString.lowercased() }

    static func format(guidBytes input: [UInt8]) -> String {
        var bytes = input
        bytes[6] = (bytes[6] & 0x0f) | 0x40
        bytes[8] = (bytes[8] & 0x3f) | 0x80
        let digits = Array("0123456789abcdef".utf8)
        // 8-4-4-4-12 hex digits: dashes before bytes 4, 6, 8 and 10.
        var output: [UInt8] = []
        output.reserveCapacity(36)
        for (index, byte) in bytes.prefix(16).enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { output.append(UInt8(ascii: "-")) }
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 15)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// `count` random bytes as base64url: unguessable handles (codes, refresh tokens, sessions).
    static func opaque(bytes count: Int = 32) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Base64URL.encode(bytes)
    }

    /// A six-digit one-time code, as sent by SMS.
    static func oneTimeCode() -> String { String(Int.random(in: 0...999_999)).leftPadded(to: 6) }

    /// The SHA-256 of a handle, as stored: the state file never holds a usable code or token.
    static func digest(_ handle: String) -> String { Base64URL.encode(SHA256.hash(data: Data(handle.utf8))) }
}
