import CGio

/// The desktop's proxy settings, as GIO's default `GProxyResolver` reads them — the resolver
/// WebKit's network process asks for the sign-in pages. GIO picks the source: GNOME's settings
/// (`org.gnome.system.proxy`, manual or automatic with a PAC file) on a GNOME desktop, else
/// libproxy (`http_proxy`, `https_proxy`, `no_proxy`, a PAC file), in a sandbox the portal.
public enum ProxySettings {
    /// The proxy URIs GIO's default resolver lists for `uri`, best first (`direct://`,
    /// `http://host:port`, `socks5://…`); `direct://` when it fails to decide. It blocks (a PAC
    /// file is fetched and run) and is thread-safe: call it on a thread of its own.
    public static func proxies(for uri: String) -> [String] {
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
