import FoundationEssentials

/// What Sesame's programs need of Foundation's text formatting, without Foundation's
/// internationalization and ICU's data (34 MB in every statically linked program): the printf
/// specifiers its sentences and their translations use, trimming, and case-blind comparison.
extension String {
    /// `format` with `arguments` put in, as `printf` and Foundation's `String(format:)` do, for
    /// the specifiers Sesame's strings and catalogs use: `%@` and `%s` (any value, as
    /// `String(describing:)` writes it), `%d`/`%i`/`%ld`/`%u` (whole numbers), `%f` (numbers, with
    /// `.N` digits, 6 by default), `%x`/`%X` (hexadecimal), `%%`; a width (`%7.3f`, `%24s`, `-` to
    /// pad on the right, `0` with zeros); and positions (`%2$@ … %1$@`), which translations
    /// reorder. A specifier with no argument left stays as it is, so a bad catalog shows itself.
    public init(formatting format: String, _ arguments: any Sendable...) {
        self = Self.formatted(format, arguments)
    }

    static func formatted(_ format: String, _ arguments: [any Sendable]) -> String {
        var out = ""
        var next = 0
        var index = format.startIndex
        while index < format.endIndex {
            let character = format[index]
            guard character == "%", let spec = Specifier(format, after: index) else {
                out.append(character)
                index = format.index(after: index)
                continue
            }
            index = spec.end
            if spec.conversion == "%" {
                out.append("%")
                continue
            }
            let position = spec.position.map { $0 - 1 } ?? next
            next = position + 1
            guard arguments.indices.contains(position) else {
                out += format[spec.start..<spec.end]
                continue
            }
            out += spec.pad(spec.render(arguments[position]))
        }
        return out
    }

    /// One `%…` specifier: `%[N$][-0][width][.precision][l|ll|h]conversion`.
    private struct Specifier {
        let start: String.Index
        let end: String.Index
        var position: Int?
        var leftAligned = false
        var zeroPadded = false
        var width = 0
        var precision: Int?
        let conversion: Character

        init?(_ format: String, after start: String.Index) {
            self.start = start
            var index = format.index(after: start)
            func digits() -> Int? {
                var value: Int?
                while index < format.endIndex, let digit = format[index].wholeNumberValue, format[index].isASCII {
                    value = (value ?? 0) * 10 + digit
                    index = format.index(after: index)
                }
                return value
            }
            let leading = format[index...].prefix { $0.isASCII && $0.isNumber }
            if !leading.isEmpty, format[leading.endIndex...].first == "$" {
                position = Int(leading)
                index = format.index(after: leading.endIndex)
            }
            while index < format.endIndex, format[index] == "-" || format[index] == "0" {
                if format[index] == "-" { leftAligned = true } else { zeroPadded = true }
                index = format.index(after: index)
            }
            width = digits() ?? 0
            if index < format.endIndex, format[index] == "." {
                index = format.index(after: index)
                precision = digits() ?? 0
            }
            while index < format.endIndex, "lhqjzt".contains(format[index]) { index = format.index(after: index) }
            guard index < format.endIndex, "@sdiufxX%".contains(format[index]) else { return nil }
            conversion = format[index]
            end = format.index(after: index)
        }

        func render(_ argument: any Sendable) -> String {
            switch conversion {
            case "d", "i", "u": return Self.integer(argument).map(String.init) ?? "\(argument)"
            case "x", "X":
                guard let value = Self.integer(argument) else { return "\(argument)" }
                let hex = String(value, radix: 16)
                return conversion == "X" ? hex.uppercased() : hex
            case "f":
                guard let value = Self.number(argument) else { return "\(argument)" }
                return Self.fixed(value, digits: precision ?? 6)
            default: return String(describing: argument)
            }
        }

        func pad(_ text: String) -> String {
            guard text.count < width else { return text }
            let fill = String(repeating: zeroPadded && !leftAligned ? "0" : " ", count: width - text.count)
            if leftAligned { return text + fill }
            if zeroPadded, text.hasPrefix("-") { return "-" + fill + text.dropFirst() }
            return fill + text
        }

        static func integer(_ argument: any Sendable) -> Int? {
            switch argument {
            case let value as Int: value
            case let value as any BinaryInteger: Int(exactly: value)
            default: nil
            }
        }

        static func number(_ argument: any Sendable) -> Double? {
            switch argument {
            case let value as Double: value
            case let value as Float: Double(value)
            case let value as any BinaryInteger: Double(Int(truncatingIfNeeded: value))
            default: nil
            }
        }

        /// `value` with `digits` decimals, rounded half away from zero from its shortest decimal
        /// form (Swift's `description`: `1.2345` → `1.235`, where C's printf, reading the binary
        /// value 1.23449999…, says `1.234`).
        static func fixed(_ value: Double, digits: Int) -> String {
            guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
            let digits = Swift.min(digits, 15)
            let text = Swift.abs(value).description
            // A tiny value (1e-07) is 0 in any precision Sesame prints; a huge one prints as it is.
            guard !text.contains("e") else {
                return Swift.abs(value) < 1 ? "0" + (digits > 0 ? "." + String(repeating: "0", count: digits) : "") : value.description
            }
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            var whole = Array(parts[0])
            var fraction = Array(parts.count > 1 ? parts[1] : "")
            let roundsUp = fraction.count > digits && fraction[digits] >= "5"
            fraction = Array(fraction.prefix(digits)) + Array(repeating: "0", count: Swift.max(0, digits - fraction.count))
            if roundsUp {
                var all = whole + fraction
                var index = all.count - 1
                while index >= 0 {
                    if all[index] == "9" {
                        all[index] = "0"
                        index -= 1
                    } else {
                        all[index] = Character(String(all[index].wholeNumberValue! + 1))
                        break
                    }
                }
                if index < 0 { all.insert("1", at: 0) }
                whole = Array(all.prefix(all.count - digits))
                fraction = Array(all.suffix(digits))
            }
            let body = String(whole) + (digits > 0 ? "." + String(fraction) : "")
            let isZero = body.allSatisfy { $0 == "0" || $0 == "." }
            return (value < 0 && !isZero ? "-" : "") + body
        }
    }

    /// The text with every `target` replaced by `replacement`.
    public func replacingEvery(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var out = ""
        var rest = self[...]
        while let found = rest.firstRange(of: target) {
            out += rest[..<found.lowerBound] + replacement
            rest = rest[found.upperBound...]
        }
        return out + rest
    }

    /// Whether the two are the same text, ignoring case (`Alex@Contoso.com`, `alex@contoso.com`).
    public func equalsIgnoringCase(_ other: some StringProtocol) -> Bool {
        lowercased() == other.lowercased()
    }
}

extension StringProtocol {
    /// The text without the white space (spaces, tabs, line ends) at its ends.
    public func trimmingWhitespace() -> String {
        trimming { $0.isWhitespace }
    }

    /// The text without the characters `drop` picks at its ends.
    public func trimming(_ drop: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !drop($0) }), let last = lastIndex(where: { !drop($0) }) else { return "" }
        return String(self[first...last])
    }
}
