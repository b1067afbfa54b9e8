/// A parsed OData `$filter` over users: `startswith`, `endswith`, `eq`, `ne`, `not`, `and`, `or`
/// and parentheses, with `''` for a quote inside a string literal.
indirect enum UserFilter: Sendable, Equatable {
    case startsWith(UserProperty, String)
    case endsWith(UserProperty, String)
    case equals(UserProperty, String?)
    case notEquals(UserProperty, String?)
    case not(UserFilter)
    case and(UserFilter, UserFilter)
    case or(UserFilter, UserFilter)

    /// Whether Graph needs `ConsistencyLevel: eventual` and `$count=true` for this filter, and the
    /// operator to name if they are missing.
    var advancedOperator: String? {
        switch self {
        case .startsWith, .equals: nil
        case .endsWith: "endsWith"
        case .notEquals: "ne"
        case .not: "not"
        case .and(let a, let b), .or(let a, let b): a.advancedOperator ?? b.advancedOperator
        }
    }

    // MARK: Parsing

    static func parse(_ text: String) throws(GraphError) -> UserFilter {
        var parser = Parser(text: text)
        let filter = try parser.parseOr()
        parser.skipSpaces()
        guard parser.atEnd else { throw parser.syntaxError() }
        return filter
    }

    private struct Parser {
        let text: String
        let characters: [Character]
        var position = 0

        init(text: String) {
            self.text = text
            characters = Array(text)
        }

        var atEnd: Bool { position >= characters.count }

        func syntaxError() -> GraphError {
            .badRequest("Invalid filter clause: Syntax error at position \(position) in '\(text)'.")
        }

        mutating func skipSpaces() { while !atEnd, characters[position].isWhitespace { position += 1 } }

        mutating func word() -> String {
            skipSpaces()
            let start = position
            while !atEnd,
                characters[position].isLetter || characters[position].isNumber || characters[position] == "_" || characters[position] == "/"
                    || characters[position] == "."
            {
                position += 1
            }
            return String(characters[start..<position])
        }

        mutating func peekWord() -> String {
            let saved = position
            let value = word()
            position = saved
            return value
        }

        mutating func expect(_ character: Character) throws(GraphError) {
            skipSpaces()
            guard !atEnd, characters[position] == character else { throw syntaxError() }
            position += 1
        }

        mutating func parseOr() throws(GraphError) -> UserFilter {
            var left = try parseAnd()
            while peekWord().lowercased() == "or" {
                _ = word()
                left = .or(left, try parseAnd())
            }
            return left
        }

        mutating func parseAnd() throws(GraphError) -> UserFilter {
            var left = try parseUnary()
            while peekWord().lowercased() == "and" {
                _ = word()
                left = .and(left, try parseUnary())
            }
            return left
        }

        mutating func parseUnary() throws(GraphError) -> UserFilter {
            skipSpaces()
            if !atEnd, characters[position] == "(" {
                position += 1
                let inner = try parseOr()
                try expect(")")
                return inner
            }
            let name = word()
            guard !name.isEmpty else { throw syntaxError() }
            let lower = name.lowercased()
            if lower == "not" { return .not(try parseUnary()) }
            skipSpaces()
            if !atEnd, characters[position] == "(" {
                position += 1
                let propertyName = word()
                guard let property = UserProperty(wireName: propertyName) else { throw .unknownProperty(propertyName) }
                try expect(",")
                guard let value = try literal() else { throw syntaxError() }
                try expect(")")
                switch lower {
                case "startswith":
                    // Graph refuses long prefixes, with a message that blames the property.
                    guard value.count <= 120 else { throw .unsupportedFilter(property.rawValue) }
                    return .startsWith(property, value)
                case "endswith": return .endsWith(property, value)
                case "contains": throw .unsupportedQuery("Unsupported property filter clause operator 'Contains'.")
                default: throw .badRequest("Invalid filter clause: An unknown function with name '\(name)' was found.")
                }
            }
            guard let property = UserProperty(wireName: name) else { throw .unknownProperty(name) }
            let operation = word().lowercased()
            let value = try literal()
            switch operation {
            case "eq": return .equals(property, value)
            case "ne": return .notEquals(property, value)
            case "gt", "ge", "lt", "le": throw .unsupportedFilter(property.rawValue)
            default: throw syntaxError()
            }
        }

        /// `'text'` (with `''` for `'`), `null`, or a bare GUID / number / boolean.
        mutating func literal() throws(GraphError) -> String? {
            skipSpaces()
            guard !atEnd else { throw syntaxError() }
            if characters[position] == "'" {
                position += 1
                var value = ""
                while true {
                    guard !atEnd else { throw syntaxError() }
                    let character = characters[position]
                    position += 1
                    if character == "'" {
                        if !atEnd, characters[position] == "'" {
                            value.append("'")
                            position += 1
                        } else {
                            return value
                        }
                    } else {
                        value.append(character)
                    }
                }
            }
            let start = position
            while !atEnd, characters[position].isLetter || characters[position].isNumber || characters[position] == "-" { position += 1 }
            let bare = String(characters[start..<position])
            guard !bare.isEmpty else { throw syntaxError() }
            return bare == "null" ? nil : bare
        }
    }

    // MARK: Evaluating

    /// The ordinals of matching users, ascending. `startswith` and `eq` on indexed properties use
    /// the prefix index; the rest scan.
    func evaluate(users: [DirectoryUser], index: PrefixIndex) -> [Int] {
        switch self {
        case .startsWith(let property, let prefix) where PrefixIndex.isIndexed(property):
            return index.ordinals(of: property, startingWith: prefix)
        case .equals(let property, let value?) where PrefixIndex.isIndexed(property):
            return index.ordinals(of: property, equalTo: value)
        case .equals(.id, let value?):
            return users.indices.filter { users[$0].id.equalsIgnoringCase(value) }
        case .and(let a, let b):
            return Self.intersect(a.evaluate(users: users, index: index), b.evaluate(users: users, index: index))
        case .or(let a, let b):
            return Self.union(a.evaluate(users: users, index: index), b.evaluate(users: users, index: index))
        case .not(let inner):
            let excluded = Set(inner.evaluate(users: users, index: index))
            return users.indices.filter { !excluded.contains($0) }
        default:
            return users.indices.filter { matches(users[$0]) }
        }
    }

    /// The filter applied to one user (case-insensitive, as Graph compares directory strings).
    func matches(_ user: DirectoryUser) -> Bool {
        switch self {
        case .startsWith(let property, let prefix):
            return property.text(of: user)?.lowercased().hasPrefix(prefix.lowercased()) ?? false
        case .endsWith(let property, let suffix):
            return property.text(of: user)?.lowercased().hasSuffix(suffix.lowercased()) ?? false
        case .equals(let property, let value):
            return property.text(of: user)?.lowercased() == value?.lowercased()
        case .notEquals(let property, let value):
            return property.text(of: user)?.lowercased() != value?.lowercased()
        case .not(let inner): return !inner.matches(user)
        case .and(let a, let b): return a.matches(user) && b.matches(user)
        case .or(let a, let b): return a.matches(user) || b.matches(user)
        }
    }

    static func union(_ a: [Int], _ b: [Int]) -> [Int] {
        var result: [Int] = []
        result.reserveCapacity(a.count + b.count)
        var i = 0
        var j = 0
        while i < a.count || j < b.count {
            if j >= b.count || (i < a.count && a[i] < b[j]) {
                result.append(a[i])
                i += 1
            } else if i >= a.count || b[j] < a[i] {
                result.append(b[j])
                j += 1
            } else {
                result.append(a[i])
                i += 1
                j += 1
            }
        }
        return result
    }

    static func intersect(_ a: [Int], _ b: [Int]) -> [Int] {
        var result: [Int] = []
        var i = 0
        var j = 0
        while i < a.count, j < b.count {
            if a[i] < b[j] {
                i += 1
            } else if b[j] < a[i] {
                j += 1
            } else {
                result.append(a[i])
                i += 1
                j += 1
            }
        }
        return result
    }
}
