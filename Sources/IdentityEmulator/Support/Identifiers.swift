import Crypto
import Foundation

/// Random identifiers: GUIDs for trace and correlation ids, opaque handles for codes, tokens,
/// sessions and sign-in transactions.
enum Identifiers {
    static func guid() -> String { UUID().uuidString.lowercased() }

    static func format(guidBytes input: [UInt8]) -> String {
        var bytes = input
        bytes[6] = (bytes[6] & 0x0f) | 0x40
        bytes[8] = (bytes[8] & 0x3f) | 0x80
        let hex = bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        let characters = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
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
