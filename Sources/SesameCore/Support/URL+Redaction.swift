import FoundationEssentials

extension URL {
    /// The URL with every query and fragment value replaced by `<redacted>`, names kept:
    /// `…/authorize?client_id=<redacted>&state=<redacted>`; a part without a name (`#SECRET`)
    /// is redacted whole, and user info dropped. Safe for logs and traces.
    public var redactingQuery: String {
        guard var components = URLComponents(url: self, resolvingAgainstBaseURL: false) else { return "<unparseable URL>" }
        components.user = nil
        components.password = nil
        func redact(_ encoded: String?) -> String? {
            guard let encoded, !encoded.isEmpty else { return encoded }
            return encoded.split(separator: "&", omittingEmptySubsequences: false).map { pair in
                let name = pair.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
                // A part without a name (`#SECRET`, `?TOKEN`) is all value.
                return pair.contains("=") ? "\(name)=<redacted>" : pair.isEmpty ? "" : "<redacted>"
            }.joined(separator: "&")
        }
        let query = redact(components.percentEncodedQuery)
        let fragment = redact(components.percentEncodedFragment)
        components.percentEncodedQuery = nil
        components.percentEncodedFragment = nil
        var text = components.string ?? "<unparseable URL>"
        if let query { text += "?" + query }
        if let fragment { text += "#" + fragment }
        return text
    }
}
