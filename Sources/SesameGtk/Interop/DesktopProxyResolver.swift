import CGtkWebKit
import Foundation
import SesameCore

/// The desktop's proxy for each request, from GIO's default `GProxyResolver` — the resolver
/// WebKit's network process asks for the sign-in pages, so Sesame's own requests and its view
/// never disagree. GIO picks the source: GNOME's settings (`org.gnome.system.proxy`, manual or
/// automatic with a PAC file) on a GNOME desktop, else libproxy (`http_proxy`, `https_proxy`,
/// `no_proxy`, a PAC file), in a sandbox the portal. No secret of a proxy URI reaches a log:
/// ``ProxyRoute`` prints its credentials masked.
public struct DesktopProxyResolver: ProxyResolver {
    /// A resolver over GIO's default.
    public init() {}

    /// The first route GIO lists that Sesame can take (`direct://`, `http://`, `socks5://`);
    /// ``ProxyRoute/direct`` when GIO fails to decide (a PAC file that does not load: GIO's
    /// resolvers answer `direct://` then too).
    public func route(for url: URL) async -> ProxyRoute {
        let uri = url.absoluteString
        // GIO's lookup blocks (a PAC file is fetched and run); it is thread-safe, so it runs on a
        // thread of its own and never on the cooperative pool or the main loop.
        let proxies = await withCheckedContinuation { (continuation: CheckedContinuation<[String], Never>) in
            Thread.detachNewThread { continuation.resume(returning: Self.lookup(uri)) }
        }
        return proxies.lazy.compactMap(ProxyRoute.init(proxyURI:)).first ?? .direct
    }

    /// The proxy URIs GIO's default resolver lists for `uri`, best first.
    public static func lookup(_ uri: String) -> [String] {
        guard let resolver = g_proxy_resolver_get_default() else { return ["direct://"] }
        var error: UnsafeMutablePointer<GError>?
        guard let list = g_proxy_resolver_lookup(resolver, uri, nil, &error) else {
            g_error_free(error)
            return ["direct://"]
        }
        defer { g_strfreev(list) }
        var proxies: [String] = []
        var index = 0
        while let entry = list[index] {
            proxies.append(String(cString: entry))
            index += 1
        }
        return proxies
    }
}
