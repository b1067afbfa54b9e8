import FoundationEssentials
import SesameSystem

/// How a request reaches its server: straight, or through a proxy. The desktop decides (GIO's
/// proxy resolver: GNOME's settings, a PAC file, `https_proxy`/`no_proxy`), the transport follows.
public enum ProxyRoute: Sendable, Hashable, CustomStringConvertible {
    /// Straight to the server.
    case direct
    /// Through an HTTP proxy: a `CONNECT` tunnel for every request, HTTPS and plain HTTP alike.
    case http(ProxyServer)
    /// Through a SOCKS5 proxy.
    case socks(ProxyServer)

    /// The proxy, if any.
    public var server: ProxyServer? {
        switch self {
        case .direct: nil
        case .http(let server), .socks(let server): server
        }
    }

    /// The route as a log, a trace or `sesame doctor` may show it: credentials never.
    public var description: String {
        switch self {
        case .direct: "direct"
        case .http(let server): "http://\(server)"
        case .socks(let server): "socks5://\(server)"
        }
    }

    /// The route for one proxy URI as GIO's `GProxyResolver` and `https_proxy` spell them:
    /// `direct://`, `http://[user:password@]host[:port]` (also `https://`, which GIO uses for a
    /// proxy reached by `CONNECT`), `socks5://…`, `socks://…`. `nil` for a scheme Sesame cannot use
    /// (`socks4://`, `ftp://`) or a URI without a host.
    public init?(proxyURI: String) {
        let trimmed = proxyURI.trimmingWhitespace()
        if trimmed == "direct://" || trimmed == "direct" {
            self = .direct
            return
        }
        guard trimmed.count <= 2048, let components = URLComponents(string: trimmed), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else { return nil }
        let defaultPort: Int
        switch scheme {
        case "http", "https": defaultPort = 8080
        case "socks", "socks5", "socks5h": defaultPort = 1080
        default: return nil
        }
        let port = components.port ?? defaultPort
        guard (1...65_535).contains(port) else { return nil }
        let user = components.percentEncodedUser.flatMap { FormEncoding.unescape($0) }
        let password = components.percentEncodedPassword.flatMap { FormEncoding.unescape($0) }
        let server = ProxyServer(
            host: host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host, port: port,
            username: user.flatMap { $0.isEmpty ? nil : $0 }, password: password.map(Secret.init))
        self = scheme.hasPrefix("socks") ? .socks(server) : .http(server)
    }
}

/// A proxy server, with the credentials its URI carried (Basic authentication).
public struct ProxyServer: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The proxy's host name or address.
    public var host: String
    /// Its port.
    public var port: Int
    /// The user name of `http://user:password@host` (shown masked, as it names a person).
    public var username: String?
    /// The password of `http://user:password@host`.
    public var password: Secret?

    /// A proxy; see each property.
    public init(host: String, port: Int, username: String? = nil, password: Secret? = nil) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
    }

    /// `host:port` for the sentence a user reads ("the proxy at H asks for a sign-in").
    public var address: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// `host:port`, with `•••@` before it when the URI carried credentials.
    public var description: String { (username != nil || password != nil ? "•••@" : "") + address }

    /// What `dump` and debuggers show: the description, not the user name.
    public var customMirror: Mirror { Mirror(self, children: ["proxy": description], displayStyle: .struct) }
}

/// Chooses the route of each request: the desktop's proxy settings, or a fixed one.
public protocol ProxyResolver: Sendable {
    /// The route for a request to `url`. Never throws: a resolver that cannot decide (a PAC file
    /// that does not load) answers what the desktop does then, usually ``ProxyRoute/direct``.
    func route(for url: URL) async -> ProxyRoute
}

/// One route for every request: no proxy (the default of a library user's transport), or the
/// proxy an app was told to use.
public struct FixedProxyResolver: ProxyResolver {
    /// The route every request takes.
    public let route: ProxyRoute

    /// A resolver that always answers `route`.
    public init(_ route: ProxyRoute) { self.route = route }

    public func route(for url: URL) async -> ProxyRoute { route }
}
