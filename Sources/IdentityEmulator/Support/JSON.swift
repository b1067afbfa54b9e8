import FoundationEssentials

/// A JSON value that keeps object members in the order written, so responses read like the
/// service's own (`token_type` first, `error` first…).
indirect enum JSON: Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    /// The compact serialization (no escaped slashes, as Microsoft writes it).
    var serialized: String { String(decoding: bytes, as: UTF8.self) }

    var data: Data { Data(bytes) }

    /// The UTF-8 text, written byte by byte: every token and Graph page is one of these.
    private var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        write(to: &out)
        return out
    }

    private func write(to out: inout [UInt8]) {
        switch self {
        case .null: out += "null".utf8
        case .bool(let value): out += (value ? "true" : "false").utf8
        case .int(let value): out += String(value).utf8
        case .string(let value): Self.writeString(value, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                item.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(member.0, to: &out)
                out.append(UInt8(ascii: ":"))
                member.1.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A JSON string: `"` and `\` escaped, control characters as `\n`, `\r`, `\t` or `\u00XX`;
    /// everything else as its UTF-8 bytes (no byte of a multi-byte character is below 0x80).
    private static func writeString(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case UInt8(ascii: "\n"): out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case UInt8(ascii: "\r"): out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case UInt8(ascii: "\t"): out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20:
                out += [
                    UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hexDigits[Int(byte >> 4)],
                    hexDigits[Int(byte & 15)],
                ]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Reads a JSON object's members from a request body or a token: strings as `String`,
    /// numbers as `Double`, booleans as `Bool` (anything else is left out).
    static func parseObject(_ data: Data) -> [String: Any]? {
        guard let members = try? JSONDecoder().decode([String: Member].self, from: data) else { return nil }
        return members.compactMapValues(\.value)
    }

    /// One member of an object, as far as the emulator reads them.
    private enum Member: Decodable {
        case string(String)
        case number(Double)
        case bool(Bool)
        case other

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Double.self) {
                self = .number(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else {
                self = .other
            }
        }

        var value: Any? {
            switch self {
            case .string(let value): value
            case .number(let value): value
            case .bool(let value): value
            case .other: nil
            }
        }
    }
}

extension JSON {
    /// An object from members whose nil values are left out.
    static func members(_ pairs: [(String, JSON?)]) -> JSON {
        .object(pairs.compactMap { name, value in value.map { (name, $0) } })
    }
}
