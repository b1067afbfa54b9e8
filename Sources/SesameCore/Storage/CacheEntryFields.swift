import FoundationEssentials

/// The fields of one cache entry while it is read: typed getters that remove what they read,
/// so whatever is left over is kept verbatim (a newer MSAL's fields survive a round trip).
struct CacheEntryFields {
    private(set) var remaining: [String: JSONValue]

    init(_ fields: [String: JSONValue]) { remaining = fields }

    mutating func string(_ name: String) -> String? {
        guard let value = remaining.removeValue(forKey: name) else { return nil }
        switch value {
        case .string(let text): return text
        case .number: return value.integerValue.map(String.init)
        default: return nil
        }
    }

    mutating func required(_ name: String, in section: String) throws -> String {
        guard let text = string(name) else {
            throw DecodingError.keyNotFound(
                AnyCodingKey(name), .init(codingPath: [AnyCodingKey(section)], debugDescription: "\(section) entry has no \(name)"))
        }
        return text
    }

    /// MSAL writes times as strings of epoch seconds; older writers used numbers.
    mutating func seconds(_ name: String) -> Int? {
        remaining.removeValue(forKey: name)?.integerValue
    }
}

/// Builds an entry's JSON object: the modelled fields over the kept extras.
struct CacheEntryWriter {
    private(set) var object: [String: JSONValue]

    init(extras: [String: JSONValue]) { object = extras }

    mutating func set(_ name: String, _ value: String?) {
        if let value { object[name] = .string(value) }
    }

    mutating func set(_ name: String, seconds: Int?) {
        if let seconds { object[name] = .string(String(seconds)) }
    }
}
