import Dispatch
import FoundationEssentials
import SesameCore
import SesameGIO

/// The desktop's proxy for each request (``ProxySettings``: GIO's default resolver, WebKit's),
/// so Sesame's own requests and its view never disagree. No secret of a proxy URI reaches a log:
/// ``ProxyRoute`` prints its credentials masked.
public struct DesktopProxyResolver: ProxyResolver {
    /// A resolver over GIO's default.
    public init() {}

    /// The first route GIO lists that Sesame can take (`direct://`, `http://`, `socks5://`);
    /// ``ProxyRoute/direct`` when GIO fails to decide (a PAC file that does not load: GIO's
    /// resolvers answer `direct://` then too).
    public func route(for url: URL) async -> ProxyRoute {
        let uri = url.absoluteString
        // GIO's lookup blocks: it runs on a thread of its own, never on the cooperative pool or
        // the main loop.
        let proxies = await withCheckedContinuation { (continuation: CheckedContinuation<[String], Never>) in
            Self.lookups.async { continuation.resume(returning: ProxySettings.proxies(for: uri)) }
        }
        return proxies.lazy.compactMap(ProxyRoute.init(proxyURI:)).first ?? .direct
    }

    /// Where GIO is asked, blocking: libdispatch's overcommitting pool.
    private static let lookups = DispatchQueue(label: "sesame.proxy-lookups", attributes: .concurrent)

    /// The proxy URIs for `uri`, best first (``ProxySettings/proxies(for:)``).
    public static func lookup(_ uri: String) -> [String] { ProxySettings.proxies(for: uri) }
}
