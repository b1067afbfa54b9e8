import FoundationEssentials

/// The fields of an `application/x-www-form-urlencoded` body or a query string, in order.
///
/// `+` is a space and `%XX` a byte, as HTML forms and OAuth clients send them. A repeated name keeps
/// its first value for `subscript`, as Entra does.
struct FormFields: Sendable, Equatable {
    private(set) var pairs: [(name: String, value: String)]

    init(_ pairs: [(String, String)] = []) { self.pairs = pairs.map { (name: $0.0, value: $0.1) } }

    /// Parses an encoded string (a query without its `?`, or a form body).
    init(encoded: some StringProtocol) {
        pairs = encoded.split(separator: "&", omittingEmptySubsequences: true).map { part in
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = Self.decode(pieces[0])
            let value = pieces.count > 1 ? Self.decode(pieces[1]) : ""
            return (name: name, value: value)
        }
    }

    subscript(name: String) -> String? { pairs.first { $0.name == name }?.value }

    /// The value, or nil when it is missing or only whitespace.
    func nonEmpty(_ name: String) -> String? {
        guard let value = self[name]?.trimmingWhitespace(), !value.isEmpty else { return nil }
        return value
    }

    func contains(_ name: String) -> Bool { pairs.contains { $0.name == name } }

    mutating func append(_ name: String, _ value: String) { pairs.append((name: name, value: value)) }

    /// The encoded form: spaces as `+`, everything outside the unreserved set as lower-case `%xx`,
    /// the way Entra writes its redirects.
    var encoded: String {
        pairs.map { Self.encode($0.name) + "=" + Self.encode($0.value) }.joined(separator: "&")
    }

    static func == (lhs: FormFields, rhs: FormFields) -> Bool {
        lhs.pairs.map(\.name) == rhs.pairs.map(\.name) && lhs.pairs.map(\.value) == rhs.pairs.map(\.value)
    }

    /// A form value: `+` is a space, `%XX` a byte of UTF-8; text whose escapes are malformed (or
    /// not UTF-8) is kept as it came, as Foundation's `removingPercentEncoding` leaves it to us.
    static func decode(_ text: some StringProtocol) -> String {
        let spaced = String(text.map { $0 == "+" ? " " : $0 })
        var bytes: [UInt8] = []
        var iterator = spaced.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return spaced }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self) ?? spaced
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)

    static func encode(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if unreserved.contains(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else if byte == UInt8(ascii: " ") {
                out += "+"
            } else {
                out += "%" + String(byte, radix: 16).leftPadded(to: 2)
            }
        }
        return out
    }
}

extension String {
    func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
