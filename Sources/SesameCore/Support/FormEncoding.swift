import FoundationEssentials

/// `application/x-www-form-urlencoded` and URL-query encoding with a strict character set:
/// everything but RFC 3986's unreserved characters is percent-encoded, so a quote in an
/// OData filter or a `+` in a token can never change a request's meaning.
public enum FormEncoding {
    /// RFC 3986's unreserved characters: letters, digits, `-`, `.`, `_`, `~`.
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }

    /// Percent-encodes one name or value (its UTF-8 bytes).
    public static func escape(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            if isUnreserved(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return out
    }

    /// `%XX` sequences decoded as UTF-8; nil when one is malformed or the bytes are not UTF-8
    /// (Foundation's `removingPercentEncoding`).
    public static func unescape(_ text: some StringProtocol) -> String? {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        while index < text.utf8.endIndex {
            let byte = text.utf8[index]
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                index = text.utf8.index(after: index)
                continue
            }
            let first = text.utf8.index(after: index)
            guard first < text.utf8.endIndex else { return nil }
            let second = text.utf8.index(after: first)
            guard second < text.utf8.endIndex, let high = hexValue(text.utf8[first]), let low = hexValue(text.utf8[second]) else {
                return nil
            }
            bytes.append(high << 4 | low)
            index = text.utf8.index(after: second)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Encodes pairs in order as `name=value&…`. A leading `$` in a name (OData's `$filter`)
    /// is kept as is: it is legal in a query and Graph documents it unescaped.
    public static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { name, value in
            let escapedName = name.hasPrefix("$") ? "$" + escape(String(name.dropFirst())) : escape(name)
            return "\(escapedName)=\(escape(value))"
        }
        .joined(separator: "&")
    }

    /// Decodes `name=value&…` (either a query or a form body; `+` means a space).
    public static func decode(_ text: String) -> [(String, String)] {
        text.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func unescape(_ part: Substring) -> String {
                let spaced = String(part.map { $0 == "+" ? " " : $0 })
                return FormEncoding.unescape(spaced) ?? spaced
            }
            return (unescape(parts[0]), parts.count > 1 ? unescape(parts[1]) : "")
        }
    }

    /// `url` with `pairs` appended to whatever query it already has (B2C's `?p=` survives).
    public static func url(_ url: URL, appending pairs: [(String, String)]) -> URL {
        guard !pairs.isEmpty else { return url }
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        let extra = encode(pairs)
        if let existing = components.percentEncodedQuery, !existing.isEmpty {
            components.percentEncodedQuery = existing + "&" + extra
        } else {
            components.percentEncodedQuery = extra
        }
        return components.url!
    }
}
