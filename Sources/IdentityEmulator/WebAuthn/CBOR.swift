import FoundationEssentials

/// One decoded CBOR data item (RFC 8949), limited to what WebAuthn carries: CTAP2's canonical
/// CBOR has integers, byte and text strings, arrays, maps and the simple values true, false and
/// null; never floats, tags or indefinite lengths.
enum CBORValue: Equatable, Sendable {
    case unsigned(UInt64)
    /// A negative integer, stored as RFC 8949 writes it: the value is `-1 - n`.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBORValue])
    case map([CBORMapEntry])
    case bool(Bool)
    case null

    /// The integer as an `Int`, when it is one and fits.
    var int: Int? {
        switch self {
        case .unsigned(let n): n <= UInt64(Int.max) ? Int(n) : nil
        case .negative(let n): n <= UInt64(Int.max) ? -1 - Int(n) : nil
        default: nil
        }
    }

    var bytes: [UInt8]? {
        if case .bytes(let b) = self { b } else { nil }
    }

    var text: String? {
        if case .text(let t) = self { t } else { nil }
    }

    var array: [CBORValue]? {
        if case .array(let a) = self { a } else { nil }
    }

    var mapEntries: [CBORMapEntry]? {
        if case .map(let m) = self { m } else { nil }
    }

    /// The value under an integer key of a map (COSE keys use integer labels).
    subscript(intKey key: Int) -> CBORValue? {
        mapEntries?.first { $0.key.int == key }?.value
    }

    /// The value under a text key of a map (the attestation object's `fmt`, `attStmt`, `authData`).
    subscript(textKey key: String) -> CBORValue? {
        mapEntries?.first { $0.key.text == key }?.value
    }
}

/// One key and value of a CBOR map, in the order the input wrote them.
struct CBORMapEntry: Equatable, Sendable {
    let key: CBORValue
    let value: CBORValue
}

/// Why a CBOR input was refused. Every malformed input ends as one of these, never as a trap.
enum CBORError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The input ends inside an item.
    case truncated
    /// Bytes follow the one item the input should hold.
    case trailingBytes
    /// Arrays and maps nest deeper than the limit.
    case tooDeep
    /// The input is larger than the limit.
    case tooLarge
    /// The input holds more items than the limit (a small input claiming millions of elements).
    case tooManyItems
    /// An indefinite-length string, array or map: CTAP2 canonical CBOR has none.
    case indefiniteLength
    /// Additional information 28–30, reserved by RFC 8949.
    case reservedAdditionalInformation
    /// A tag (major type 6): WebAuthn carries none.
    case tagRefused
    /// A float or a simple value other than true, false and null.
    case unsupportedSimpleValue
    /// A text string that is not UTF-8.
    case invalidUTF8
    /// A map names the same key twice.
    case duplicateMapKey

    var description: String {
        switch self {
        case .truncated: "the CBOR input ends inside an item"
        case .trailingBytes: "bytes follow the CBOR item"
        case .tooDeep: "the CBOR input nests too deep"
        case .tooLarge: "the CBOR input is too large"
        case .tooManyItems: "the CBOR input holds too many items"
        case .indefiniteLength: "the CBOR input has an indefinite length"
        case .reservedAdditionalInformation: "the CBOR input uses a reserved length form"
        case .tagRefused: "the CBOR input carries a tag"
        case .unsupportedSimpleValue: "the CBOR input carries a float or an unknown simple value"
        case .invalidUTF8: "a CBOR text string is not UTF-8"
        case .duplicateMapKey: "a CBOR map names a key twice"
        }
    }
}

/// A bounded CBOR decoder: depth, size and item count are limited before anything is allocated,
/// and every length is checked against the bytes that remain before it is read.
struct CBORDecoder {
    /// The limits of one decode.
    struct Limits: Sendable {
        var maximumDepth = 16
        var maximumSize = 64 * 1024
        var maximumItems = 4096
        /// WebAuthn's maps are small; the limit keeps the duplicate-key check cheap.
        var maximumMapEntries = 128
    }

    private let bytes: [UInt8]
    private let limits: Limits
    private(set) var offset: Int
    private var items = 0

    private init(bytes: [UInt8], offset: Int, limits: Limits) {
        self.bytes = bytes
        self.offset = offset
        self.limits = limits
    }

    /// Decodes the one item `bytes` holds; trailing bytes are refused.
    static func decode(_ bytes: [UInt8], limits: Limits = Limits()) throws(CBORError) -> CBORValue {
        let (value, end) = try decodePrefix(bytes, from: 0, limits: limits)
        guard end == bytes.count else { throw .trailingBytes }
        return value
    }

    /// Decodes the item that starts at `start` and returns it with the offset just past it (the
    /// credential public key inside authenticator data is followed by its extensions).
    static func decodePrefix(_ bytes: [UInt8], from start: Int, limits: Limits = Limits()) throws(CBORError) -> (CBORValue, Int) {
        guard bytes.count <= limits.maximumSize else { throw .tooLarge }
        guard start >= 0, start <= bytes.count else { throw .truncated }
        var decoder = CBORDecoder(bytes: bytes, offset: start, limits: limits)
        let value = try decoder.item(depth: 0)
        return (value, decoder.offset)
    }

    private var remaining: Int { bytes.count - offset }

    private mutating func byte() throws(CBORError) -> UInt8 {
        guard offset < bytes.count else { throw .truncated }
        defer { offset += 1 }
        return bytes[offset]
    }

    private mutating func take(_ count: UInt64) throws(CBORError) -> ArraySlice<UInt8> {
        guard count <= UInt64(remaining) else { throw .truncated }
        let end = offset + Int(count)
        defer { offset = end }
        return bytes[offset..<end]
    }

    /// The argument of an item head: the value itself, or the length of what follows.
    private mutating func argument(_ additional: UInt8) throws(CBORError) -> UInt64 {
        switch additional {
        case 0..<24: return UInt64(additional)
        case 24...27:
            let width = 1 << Int(additional - 24)
            var value: UInt64 = 0
            for byte in try take(UInt64(width)) { value = value << 8 | UInt64(byte) }
            return value
        case 31: throw .indefiniteLength
        default: throw .reservedAdditionalInformation
        }
    }

    private mutating func count() throws(CBORError) {
        items &+= 1
        guard items <= limits.maximumItems else { throw .tooManyItems }
    }

    private mutating func item(depth: Int) throws(CBORError) -> CBORValue {
        guard depth <= limits.maximumDepth else { throw .tooDeep }
        try count()
        let head = try byte()
        let major = head >> 5
        let additional = head & 0x1f
        switch major {
        case 0:
            return .unsigned(try argument(additional))
        case 1:
            return .negative(try argument(additional))
        case 2:
            return .bytes(Array(try take(try argument(additional))))
        case 3:
            let slice = try take(try argument(additional))
            guard let text = String(validating: slice, as: UTF8.self) else { throw .invalidUTF8 }
            return .text(text)
        case 4:
            let length = try argument(additional)
            // Each element takes at least one byte: a count beyond the rest is a lie.
            guard length <= UInt64(remaining) else { throw .truncated }
            guard length <= UInt64(limits.maximumItems) else { throw .tooManyItems }
            var elements: [CBORValue] = []
            elements.reserveCapacity(Int(length))
            for _ in 0..<Int(length) { elements.append(try item(depth: depth + 1)) }
            return .array(elements)
        case 5:
            let length = try argument(additional)
            guard length <= UInt64(remaining) / 2 else { throw .truncated }
            guard length <= UInt64(limits.maximumMapEntries) else { throw .tooManyItems }
            var entries: [CBORMapEntry] = []
            entries.reserveCapacity(Int(length))
            for _ in 0..<Int(length) {
                let key = try item(depth: depth + 1)
                guard !entries.contains(where: { $0.key == key }) else { throw .duplicateMapKey }
                entries.append(CBORMapEntry(key: key, value: try item(depth: depth + 1)))
            }
            return .map(entries)
        case 6:
            throw .tagRefused
        default:
            switch additional {
            case 20: return .bool(false)
            case 21: return .bool(true)
            case 22: return .null
            case 28...30: throw .reservedAdditionalInformation
            case 31: throw .indefiniteLength
            default: throw .unsupportedSimpleValue
            }
        }
    }
}
