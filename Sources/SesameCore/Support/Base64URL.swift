import FoundationEssentials

/// Base64url without padding (RFC 4648 §5), the alphabet of JWTs, PKCE and `client_info`.
public enum Base64URL {
    /// Encodes bytes as base64url without `=` padding.
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        String(
            Data(bytes).base64EncodedString().compactMap { character -> Character? in
                switch character {
                case "+": "-"
                case "/": "_"
                case "=": nil
                default: character
                }
            })
    }

    /// Decodes base64url, with or without padding; `nil` when the text is not base64url.
    public static func decode(_ text: some StringProtocol) -> Data? {
        var base64 = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        guard !base64.contains("=") || base64.count % 4 == 0 else { return nil }
        while base64.count % 4 != 0 { base64.append("=") }
        return Data(base64Encoded: base64)
    }
}
