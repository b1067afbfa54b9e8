import Foundation

/// `application/x-www-form-urlencoded` and URL-query encoding with a strict character set:
/// everything but RFC 3986's unreserved characters is percent-encoded, so a quote in an
/// OData filter or a `+` in a token can never change a request's meaning.
public enum FormEncoding {
    private static let unreserved: CharacterSet = {
        var set = CharacterSet()
        set.insert(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return set
    }()

    /// Percent-encodes one name or value.
    public static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// Encodes pairs in order as `name=value&…`. A leading `$` in a name (OData's `$filter`)
    /// is kept as is: it is legal in a query and Graph documents it unescaped.
    public static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { name, value in
            let escapedName = name.hasPrefix("$") ? "$" + escape(String(name.dropFirst())) : escape(name)
            return "\(escapedName)=\(escape(value))"
        }
        .joined(separator: "&")
    }

    /// Decodes `name=value&…` (either a query or a form body; `+` means a space).
    public static func decode(_ text: String) -> [(String, String)] {
        text.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func unescape(_ part: Substring) -> String {
                let spaced = part.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            return (unescape(parts[0]), parts.count > 1 ? unescape(parts[1]) : "")
        }
    }

    /// `url` with `pairs` appended to whatever query it already has (B2C's `?p=` survives).
    public static func url(_ url: URL, appending pairs: [(String, String)]) -> URL {
        guard !pairs.isEmpty else { return url }
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        let extra = encode(pairs)
        if let existing = components.percentEncodedQuery, !existing.isEmpty {
            components.percentEncodedQuery = existing + "&" + extra
        } else {
            components.percentEncodedQuery = extra
        }
        return components.url!
    }
}
