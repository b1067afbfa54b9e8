import FoundationEssentials

/// base64url without padding (RFC 7515 §2), the encoding of JWT parts, `client_info` and opaque ids.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Encodes straight into the URL-safe alphabet: every token the emulator signs is three of
    /// these, so no intermediate string is built and rewritten.
    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let input = Array(bytes)
        var output = [UInt8](repeating: 0, count: (input.count * 4 + 2) / 3)
        var written = 0
        var index = 0
        while index + 3 <= input.count {
            let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            output[written] = alphabet[Int(group >> 18 & 63)]
            output[written + 1] = alphabet[Int(group >> 12 & 63)]
            output[written + 2] = alphabet[Int(group >> 6 & 63)]
            output[written + 3] = alphabet[Int(group & 63)]
            written += 4
            index += 3
        }
        let rest = input.count - index
        if rest > 0 {
            let group = UInt32(input[index]) << 16 | (rest == 2 ? UInt32(input[index + 1]) << 8 : 0)
            output[written] = alphabet[Int(group >> 18 & 63)]
            output[written + 1] = alphabet[Int(group >> 12 & 63)]
            written += 2
            if rest == 2 {
                output[written] = alphabet[Int(group >> 6 & 63)]
                written += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    static func decode(_ text: some StringProtocol) -> Data? {
        var base64 = text.utf8.map { $0 == UInt8(ascii: "-") ? UInt8(ascii: "+") : $0 == UInt8(ascii: "_") ? UInt8(ascii: "/") : $0 }
        while base64.count % 4 != 0 { base64.append(UInt8(ascii: "=")) }
        return Data(base64Encoded: Data(base64))
    }
}
