import Crypto
import FoundationEssentials

/// The shared secret of an authenticator app (software OATH token): the key both the app and the
/// emulator feed to HMAC-SHA1. Entra makes it when a user registers "a different authenticator
/// app" and shows it two ways: in the QR code's `otpauth://` URI (``TOTP/keyURI(secret:issuer:account:)``)
/// and, under "Can't scan image?", as the **Secret key** (``base32``) beside the **Account name**.
///
/// A secret is a secret: ``description`` and ``debugDescription`` never show its bytes, so it cannot
/// reach a log line or an error text by string interpolation.
public struct TOTPSecret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The key itself (RFC 4226 §4 R6: at least 128 bits; 160 recommended).
    public let bytes: [UInt8]

    /// The number of random bytes a registration makes: 160 bits, RFC 4226's recommendation and
    /// HMAC-SHA1's output length.
    public static let randomLength = 20

    /// The longest secret the emulator takes from outside (a policy file, an endpoint): Entra's
    /// limit for a hardware token's secret is 128 base32 characters, 80 bytes.
    public static let maximumLength = 80

    /// A secret of exactly these bytes (a test's, or one read back from state).
    public init(bytes: [UInt8]) throws(TOTPError) {
        guard !bytes.isEmpty, bytes.count <= Self.maximumLength else { throw .secretLength }
        self.bytes = bytes
    }

    /// A new secret of `byteCount` bytes (clamped to 10…``maximumLength``) from the system's random
    /// source. Entra's own keys are reported (not by Microsoft) as 16 base32 characters, 10 bytes;
    /// the default is RFC 4226's recommended 20.
    public static func random(byteCount: Int = randomLength) -> TOTPSecret {
        var generator = SystemRandomNumberGenerator()
        let count = min(max(byteCount, 10), maximumLength)
        let bytes = (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return TOTPSecret(unchecked: bytes)
    }

    private init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    /// The secret as a person types it (RFC 4648 base32, any case, spaces ignored, `=` padding
    /// allowed at the end).
    public init(base32 text: String) throws(TOTPError) {
        try self.init(bytes: Base32.decode(text))
    }

    /// The **Secret key** Entra shows under "Can't scan image?" and the URI's `secret`: RFC 4648
    /// base32, upper case, no padding.
    public var base32: String { Base32.encode(bytes) }

    public var description: String { "TOTPSecret(\(bytes.count) bytes, redacted)" }
    public var debugDescription: String { description }
}

/// Why a secret, a code or a URI's parts were refused. No case carries the refused value: the
/// value may be a secret.
public enum TOTPError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text is not base32 (a character outside `A–Z 2–7`, or a length no byte string encodes).
    case notBase32
    /// The secret is empty or longer than ``TOTPSecret/maximumLength`` bytes.
    case secretLength

    public var description: String {
        switch self {
        case .notBase32: "The secret key is not base32 text (letters A–Z and digits 2–7)."
        case .secretLength: "The secret key is empty or longer than \(TOTPSecret.maximumLength) bytes."
        }
    }
}

/// RFC 4648 §6 base32 (`A–Z 2–7`), as authenticator apps read it.
public enum Base32 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// `bytes` in base32, upper case, without `=` padding (as the Key Uri Format asks).
    public static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                output.append(alphabet[Int((buffer >> UInt32(bits - 5)) & 0x1F)])
                bits -= 5
            }
        }
        if bits > 0 { output.append(alphabet[Int((buffer << UInt32(5 - bits)) & 0x1F)]) }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes of base32 `text`: any case, spaces ignored, `=` padding only at the end. Throws
    /// ``TOTPError/notBase32`` for anything else, and ``TOTPError/secretLength`` past
    /// ``TOTPSecret/maximumLength`` bytes (checked before decoding: input is bounded).
    public static func decode(_ text: String) throws(TOTPError) -> [UInt8] {
        var values: [UInt8] = []
        var padding = 0
        for scalar in text.unicodeScalars {
            switch scalar {
            case " ": continue
            case "=": padding += 1
            case "A"..."Z", "2"..."7", "a"..."z":
                guard padding == 0 else { throw .notBase32 }
                let upper = scalar.value >= 0x61 ? scalar.value - 0x20 : scalar.value
                values.append(upper >= 0x41 ? UInt8(upper - 0x41) : UInt8(upper - 0x32 + 26))
                guard values.count * 5 / 8 <= TOTPSecret.maximumLength else { throw .secretLength }
            default: throw .notBase32
            }
        }
        // RFC 4648 §6: the last quantum is 2, 4, 5 or 7 characters; 1, 3 or 6 encode no whole byte.
        guard ![1, 3, 6].contains(values.count % 8) else { throw .notBase32 }
        if padding > 0, (values.count + padding) % 8 != 0 { throw .notBase32 }
        var bytes: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for value in values {
            buffer = (buffer << 5) | UInt32(value)
            bits += 5
            if bits >= 8 {
                bytes.append(UInt8((buffer >> UInt32(bits - 8)) & 0xFF))
                bits -= 8
            }
        }
        return bytes
    }
}

/// RFC 6238 time-based one-time passwords as the Authenticator app (or any authenticator app)
/// shows them for a work account: HMAC-SHA1, 6 digits, a new code every 30 seconds.
public enum TOTP {
    /// Digits in a code Entra asks for ("Enter the 6-digit code shown in the Authenticator app").
    public static let digits = 6
    /// Seconds per time step (RFC 6238's X; Entra's software tokens use 30).
    public static let period: Int64 = 30
    /// Steps either side of the current one a code may come from: a phone's clock a little off,
    /// or a code typed as it changes (RFC 6238 §5.2 recommends at most one step of delay).
    public static let tolerance: Int64 = 1

    /// The time step `now` is in: `floor(unix time / period)` (RFC 6238 §4.2, T0 = 0).
    public static func step(at now: Date, period: Int64 = period) -> Int64 {
        Int64((now.timeIntervalSince1970 / Double(period)).rounded(.down))
    }

    /// The code for `now`, as the app shows it (leading zeros kept).
    public static func code(secret: TOTPSecret, at now: Date) -> String {
        code(secret: secret, step: step(at: now), digits: digits)
    }

    /// The code for time step `step` with `digits` digits: RFC 4226's HOTP with the step as the
    /// counter, dynamic truncation, then `mod 10^digits`. `digits` is 6 for Entra; RFC 6238's
    /// Appendix B vectors have 8.
    static func code(secret: TOTPSecret, step: Int64, digits: Int) -> String {
        precondition((1...9).contains(digits), "HOTP codes have 1 to 9 digits")
        var counter = UInt64(bitPattern: step).bigEndian
        let message = withUnsafeBytes(of: &counter) { Array($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: SymmetricKey(data: secret.bytes)))
        let offset = Int(mac[mac.count - 1] & 0x0F)
        let binary =
            (UInt32(mac[offset] & 0x7F) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8)
            | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: digits - value.count) + value
    }

    /// The `otpauth://` URI the registration page's QR code holds (Google Authenticator's Key Uri
    /// Format): `otpauth://totp/<issuer>:<account>?secret=<base32>&issuer=<issuer>`, e.g. issuer
    /// the tenant's name and account the user's UPN. Both are percent-encoded (a `:` inside
    /// either becomes `%3A`, so the label still splits in one place); `algorithm`, `digits` and
    /// `period` are left at the format's defaults (SHA1, 6, 30), which are Entra's.
    public static func keyURI(secret: TOTPSecret, issuer: String, account: String) -> String {
        let issuerText = percentEncoded(issuer)
        return "otpauth://totp/\(issuerText):\(percentEncoded(account))?secret=\(secret.base32)&issuer=\(issuerText)"
    }

    /// RFC 3986 unreserved characters and `@` as they are; every other UTF-8 byte as `%XX`.
    private static func percentEncoded(_ text: String) -> String {
        var output = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "@"):
                output.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                output += "%"
                output.unicodeScalars.append(hex[Int(byte >> 4)])
                output.unicodeScalars.append(hex[Int(byte & 0x0F)])
            }
        }
        return output
    }
}

/// A user's registered authenticator app as the verifier sees it: the secret and the last time
/// step a code was accepted from, so a code cannot be used twice (RFC 6238 §5.2: "the verifier
/// MUST NOT accept the second attempt of the OTP after the successful validation").
public struct AuthenticatorAppCode: Sendable, Hashable {
    /// The shared secret.
    public let secret: TOTPSecret
    /// The time step of the last code accepted; a code from it or an earlier step is refused.
    public private(set) var lastAcceptedStep: Int64?

    public init(secret: TOTPSecret, lastAcceptedStep: Int64? = nil) {
        self.secret = secret
        self.lastAcceptedStep = lastAcceptedStep
    }

    /// What became of a code a user typed.
    public enum Verdict: Sendable, Hashable {
        /// The code is right; it came from `step` (the current one or ``TOTP/tolerance`` either side).
        case accepted(step: Int64)
        /// Not six digits (spaces around and between the digits are ignored).
        case malformed
        /// Six digits, but no step in the window has that code.
        case wrong
        /// The right code for a step a code was already accepted from (or an earlier one).
        case replayed
    }

    /// Checks `typed` at `now` against the current step and ``TOTP/tolerance`` steps either side,
    /// and on success remembers the step, so the same code (or an older one) is refused from then
    /// on.
    public mutating func verify(_ typed: String, now: Date) -> Verdict {
        let digits = typed.unicodeScalars.filter { $0 != " " }
        guard digits.count == TOTP.digits, digits.allSatisfy({ ("0"..."9").contains($0) }) else { return .malformed }
        let code = String(String.UnicodeScalarView(digits))
        let current = TOTP.step(at: now)
        // Every step in the window is computed and compared, so the time taken says nothing about
        // which one matched.
        var matches: [Int64] = []
        for step in (current - TOTP.tolerance)...(current + TOTP.tolerance)
        where constantTimeEqual(TOTP.code(secret: secret, step: step, digits: TOTP.digits), code) {
            matches.append(step)
        }
        guard !matches.isEmpty else { return .wrong }
        guard let step = matches.first(where: { step in lastAcceptedStep.map { step > $0 } ?? true }) else { return .replayed }
        lastAcceptedStep = step
        return .accepted(step: step)
    }

    private func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let a = Array(a.utf8)
        let b = Array(b.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
