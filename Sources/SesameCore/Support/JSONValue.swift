import FoundationEssentials
import SesameSystem

/// Any JSON value. Wire models keep the fields they do not know in one of these, so that a
/// response read and written back loses nothing (and a newer MSAL's cache fields survive us).
public enum JSONValue: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            if value.rounded() == value, abs(value) < 9e15 {
                try container.encode(Int64(value))
            } else {
                try container.encode(value)
            }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// A whole number, whether JSON spelled it as a number or as a string: Entra's v2 endpoint
    /// sends `expires_in` as `3599`, B2C and Entra's v1 endpoint as `"3599"`. Only JSON's safe
    /// integers (±(2⁵³ − 1), exact in a double) count: anything larger — `1e300`, `"9223372036854775807"`
    /// — is `nil`, so that no sum of seconds or dates built from it can overflow.
    public var integerValue: Int? {
        let integer: Int? =
            switch self {
            case .number(let value): Int(exactly: value)
            case .string(let value): Int(value.trimmingWhitespace())
            default: nil
            }
        guard let integer, abs(integer) <= Self.maximumSafeInteger else { return nil }
        return integer
    }

    /// 2⁵³ − 1, JavaScript's `Number.MAX_SAFE_INTEGER`.
    public static let maximumSafeInteger = 9_007_199_254_740_991

    /// The strings of an array, or a single string as a one-element array (B2C's `emails`).
    public var stringArray: [String]? {
        switch self {
        case .array(let values): return values.compactMap(\.stringValue)
        case .string(let value): return [value]
        default: return nil
        }
    }
}

/// A coding key for any field name, for reading objects whose extra fields are kept.
struct AnyCodingKey: CodingKey, Hashable {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { self.stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { return nil }
}
