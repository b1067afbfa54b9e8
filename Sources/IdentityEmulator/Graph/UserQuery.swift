import FoundationEssentials

/// The OData query options of `GET /v1.0/users`: `$filter`, `$search`, `$select`, `$top`, `$count`
/// and `$skiptoken`, validated as Graph validates them.
struct UserQuery: Sendable {
    var filter: UserFilter?
    /// `$search="property:words"` clauses, joined by `AND` / `OR`.
    var search: [(clauses: [(property: UserProperty, term: String)], any: Bool)]?
    var select: [UserProperty]?
    var top: Int = 100
    var count = false
    var offset = 0

    static let skipTokenPrefix = "RFNwdAIAAQAAA"

    static func parse(_ query: FormFields, eventualConsistency: Bool) throws(GraphError) -> UserQuery {
        var result = UserQuery()
        for (name, _) in query.pairs where name.hasPrefix("$") {
            guard ["$filter", "$search", "$select", "$top", "$count", "$skiptoken", "$orderby"].contains(name.lowercased()) else {
                if name.lowercased() == "$skip" { throw .requestBadRequest("'$skip' is not supported by the service.") }
                throw .badRequest("Query option '\(name)' is not allowed. Make sure that the query option is supported.")
            }
        }
        if let countText = query["$count"] {
            guard countText == "true" || countText == "false" else {
                throw .badRequest("Invalid value '\(countText)' for $count. Use true or false.")
            }
            result.count = countText == "true"
            if result.count, !eventualConsistency { throw .requestBadRequest("$count is not currently supported.") }
        }
        if let text = query["$filter"] {
            let filter = try UserFilter.parse(text)
            if let advanced = filter.advancedOperator, !(eventualConsistency && result.count) { throw .needsAdvancedQuery(advanced) }
            result.filter = filter
        }
        if let text = query["$search"] {
            guard eventualConsistency else {
                throw .unsupportedQuery(
                    "Request with $search query parameter only works through MSGraph with a special request header: "
                        + "'ConsistencyLevel: eventual'"
                )
            }
            result.search = [try parseSearch(text)]
        }
        if let text = query["$select"] {
            result.select = try text.split(separator: ",").map { name throws(GraphError) in
                let trimmed = name.trimmingWhitespace()
                guard let property = UserProperty(wireName: trimmed) else { throw .unknownProperty(trimmed) }
                return property
            }
        }
        if let text = query["$top"] {
            guard let top = Int(text) else { throw .badRequest("Invalid $top value '\(text)'. It must be an integer.") }
            guard (1...999).contains(top) else {
                throw .requestBadRequest("Invalid page size specified: '\(top)'. Must be between 1 and 999 inclusive.")
            }
            result.top = top
        }
        if let orderBy = query["$orderby"] {
            let parts = orderBy.split(separator: " ")
            guard let first = parts.first,
                UserProperty(wireName: first) == .displayName || UserProperty(wireName: first) == .userPrincipalName,
                parts.count == 1 || parts[1].lowercased() == "asc"
            else {
                throw .unsupportedQuery("Sorting not supported for '\(orderBy)'.")
            }
        }
        if let token = query["$skiptoken"] {
            guard token.hasPrefix(skipTokenPrefix),
                let data = Base64URL.decode(token.dropFirst(skipTokenPrefix.count)),
                let offset = Int(String(decoding: data, as: UTF8.self)), offset >= 0
            else {
                throw .badRequest("The $skiptoken value is not valid. Follow @odata.nextLink as it was returned.")
            }
            result.offset = offset
        }
        return result
    }

    static func skipToken(offset: Int) -> String { skipTokenPrefix + Base64URL.encode(Data(String(offset).utf8)) }

    /// `"displayName:meg" OR "mail:meg"`: quoted `property:words` clauses.
    private static func parseSearch(_ text: String) throws(GraphError) -> (clauses: [(property: UserProperty, term: String)], any: Bool) {
        var clauses: [(property: UserProperty, term: String)] = []
        var any = false
        var rest = Substring(text.trimmingWhitespace())
        while !rest.isEmpty {
            guard rest.first == "\"", let close = rest.dropFirst().firstIndex(of: "\"") else {
                throw .badRequest(
                    "Syntax error: character '\(rest.first.map(String.init) ?? "")' is not valid at position "
                        + "\(text.count - rest.count) in '\(text)'."
                )
            }
            let clause = rest[rest.index(after: rest.startIndex)..<close]
            let parts = clause.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let property = UserProperty(wireName: parts[0]) else {
                throw .badRequest("Invalid search clause '\(clause)': use \"property:value\", e.g. \"displayName:meg\".")
            }
            clauses.append((property, String(parts[1]).lowercased()))
            rest = rest[rest.index(after: close)...].drop { $0 == " " }
            if rest.uppercased().hasPrefix("OR ") {
                any = true
                rest = rest.dropFirst(3).drop { $0 == " " }
            } else if rest.uppercased().hasPrefix("AND ") {
                rest = rest.dropFirst(4).drop { $0 == " " }
            }
        }
        return (clauses, any)
    }

    /// Runs the query: matching ordinals, in directory order.
    func run(users: [DirectoryUser], index: PrefixIndex) -> [Int] {
        var ordinals = filter?.evaluate(users: users, index: index) ?? Array(users.indices)
        if let search = search?.first {
            ordinals = ordinals.filter { ordinal in
                let results = search.clauses.map { clause in Self.tokenMatch(clause.property.text(of: users[ordinal]), clause.term) }
                return search.any ? results.contains(true) : !results.contains(false)
            }
        }
        return ordinals
    }

    /// `$search` matches any word of the value that starts with the term (Graph tokenizes).
    private static func tokenMatch(_ value: String?, _ term: String) -> Bool {
        guard let value = value?.lowercased() else { return false }
        if value.hasPrefix(term) { return true }
        return value.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).contains { $0.hasPrefix(term) }
    }
}
