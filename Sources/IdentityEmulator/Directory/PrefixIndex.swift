/// Sorted, case-folded keys per indexed property, so a `startswith` or `eq` over 100,000 users is
/// two binary searches and a walk over the matches, not a scan.
struct PrefixIndex: Sendable {
    private struct Entry: Sendable {
        var key: [UInt8]
        var ordinal: Int32
    }

    private var entries: [UserProperty: [Entry]] = [:]

    /// Keys compare as UTF-8 bytes after lower-casing: Graph matches users case-insensitively.
    static func fold(_ text: String) -> [UInt8] { Array(text.lowercased().utf8) }

    init(users: [DirectoryUser]) {
        for property in UserProperty.indexed {
            var list: [Entry] = []
            list.reserveCapacity(users.count)
            for (ordinal, user) in users.enumerated() {
                if let text = property.text(of: user) { list.append(Entry(key: Self.fold(text), ordinal: Int32(ordinal))) }
            }
            list.sort { Self.precedes($0, $1) }
            entries[property] = list
        }
    }

    static func isIndexed(_ property: UserProperty) -> Bool { UserProperty.indexed.contains(property) }

    mutating func insert(_ user: DirectoryUser, ordinal: Int) {
        for property in UserProperty.indexed {
            guard let text = property.text(of: user) else { continue }
            let entry = Entry(key: Self.fold(text), ordinal: Int32(ordinal))
            var list = entries[property, default: []]
            list.insert(entry, at: Self.lowerBound(in: list) { Self.precedes($0, entry) })
            entries[property] = list
        }
    }

    /// Ordinals of users whose property starts with `prefix` (case-insensitive), ascending.
    func ordinals(of property: UserProperty, startingWith prefix: String) -> [Int] {
        guard let list = entries[property] else { return [] }
        let key = Self.fold(prefix)
        var index = Self.lowerBound(in: list) { $0.key.lexicographicallyPrecedes(key) }
        var found: [Int] = []
        while index < list.count, list[index].key.starts(with: key) {
            found.append(Int(list[index].ordinal))
            index += 1
        }
        return found.sorted()
    }

    /// Ordinals of users whose property equals `value` (case-insensitive), ascending.
    func ordinals(of property: UserProperty, equalTo value: String) -> [Int] {
        guard let list = entries[property] else { return [] }
        let key = Self.fold(value)
        var index = Self.lowerBound(in: list) { $0.key.lexicographicallyPrecedes(key) }
        var found: [Int] = []
        while index < list.count, list[index].key == key {
            found.append(Int(list[index].ordinal))
            index += 1
        }
        return found.sorted()
    }

    private static func precedes(_ a: Entry, _ b: Entry) -> Bool {
        a.key == b.key ? a.ordinal < b.ordinal : a.key.lexicographicallyPrecedes(b.key)
    }

    private static func lowerBound(in list: [Entry], where isBefore: (Entry) -> Bool) -> Int {
        var low = 0
        var high = list.count
        while low < high {
            let middle = (low + high) / 2
            if isBefore(list[middle]) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
