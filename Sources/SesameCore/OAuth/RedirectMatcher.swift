import FoundationEssentials

/// Decides whether a URL the web view is about to load is the redirect URI, by comparing
/// parsed parts — scheme, host, port and path — never by substring search.
///
/// The seeds searched the whole URL for `urn:ietf:wg:oauth:2.0:oob?code=`, so
/// `https://evil.example/?x=urn:ietf:wg:oauth:2.0:oob?code=1` was intercepted and handed to
/// the token endpoint. Here the scheme and host compare case-insensitively (as URLs define
/// them), the port after defaults are filled in, and the path exactly (Entra's redirect
/// matching is case-sensitive in the path). Query and fragment are not compared: that is
/// where the result rides.
public struct RedirectMatcher: Sendable, Hashable {
    /// The registered redirect URI.
    public let redirectURI: URL
    private let key: Key

    private struct Key: Hashable {
        var scheme: String
        var host: String
        var port: Int?
        var path: String
    }

    /// A matcher for one registered redirect URI.
    public init(redirectURI: URL) {
        self.redirectURI = redirectURI
        self.key = Self.key(for: redirectURI) ?? Key(scheme: "", host: "", port: nil, path: "\u{0}")
    }

    /// Whether `url` is a navigation to the redirect URI.
    public func matches(_ url: URL) -> Bool {
        guard let candidate = Self.key(for: url) else { return false }
        return candidate == key
    }

    /// Whether the text of a URL (as a web view reports it) is a navigation to the redirect URI.
    public func matches(_ urlString: String) -> Bool {
        URL(string: urlString).map(matches) ?? false
    }

    private static func key(for url: URL) -> Key? {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased()
        else { return nil }
        // A URN (`urn:ietf:wg:oauth:2.0:oob`) has no authority: its "path" is the whole name.
        guard components.percentEncodedHost != nil || scheme == "urn" else { return nil }
        let host = (components.percentEncodedHost ?? "").lowercased()
        guard components.percentEncodedUser == nil, components.percentEncodedPassword == nil else { return nil }
        let port = components.port ?? defaultPort(scheme)
        var path = components.percentEncodedPath
        if scheme == "urn" { path = path.lowercased() }
        // Entra answers a redirect URI registered without a path at `…/` (trailing slash).
        if path.isEmpty, scheme != "urn" { path = "/" }
        return Key(scheme: scheme, host: host, port: port, path: path)
    }

    private static func defaultPort(_ scheme: String) -> Int? {
        switch scheme {
        case "https": 443
        case "http": 80
        default: nil
        }
    }
}
