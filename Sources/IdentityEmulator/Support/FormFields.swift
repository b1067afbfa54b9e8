import Foundation

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
        guard let value = self[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else { return nil }
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

    static func decode(_ text: some StringProtocol) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
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
