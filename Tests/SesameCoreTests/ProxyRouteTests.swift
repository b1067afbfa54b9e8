import Foundation
import SesameCore
import Testing

/// The proxy URIs GIO's resolver and `https_proxy` give, read into routes; their secrets never
/// printed.
@Suite("Proxy routes")
struct ProxyRouteTests {
    @Test(
        "GIO's and the environment's spellings",
        arguments: [
            ("direct://", ProxyRoute.direct),
            ("http://proxy.corp:3128", .http(ProxyServer(host: "proxy.corp", port: 3128))),
            ("http://proxy.corp", .http(ProxyServer(host: "proxy.corp", port: 8080))),
            ("https://proxy.corp:443/", .http(ProxyServer(host: "proxy.corp", port: 443))),
            ("HTTP://Proxy.Corp:3128", .http(ProxyServer(host: "proxy.corp", port: 3128))),
            ("http://[::1]:3128", .http(ProxyServer(host: "::1", port: 3128))),
            ("socks5://127.0.0.1:1080", .socks(ProxyServer(host: "127.0.0.1", port: 1080))),
            ("socks://gate", .socks(ProxyServer(host: "gate", port: 1080))),
        ])
    func spellings(uri: String, route: ProxyRoute) {
        var parsed = ProxyRoute(proxyURI: uri)
        if case .http(var server) = parsed {
            server.host = server.host.lowercased()
            parsed = .http(server)
        }
        #expect(parsed == route)
    }

    @Test(
        "what Sesame cannot use is no route",
        arguments: ["socks4://gate:1080", "ftp://proxy:21", "http://", "proxy.corp:3128", "http://h:0", "http://h:70000", ""])
    func unusable(uri: String) {
        #expect(ProxyRoute(proxyURI: uri) == nil)
    }

    @Test("credentials are read, percent-decoded, and never printed")
    func credentials() throws {
        let route = try #require(ProxyRoute(proxyURI: "http://CORP%5Calice:p%40ss%3Aword@proxy.corp:3128"))
        let server = try #require(route.server)
        #expect(server.username == #"CORP\alice"#)
        #expect(server.password?.revealed == "p@ss:word")
        var dumped = ""
        dump(route, to: &dumped)
        for text in ["\(route)", String(describing: route), String(reflecting: route), "\(server)", server.address, dumped] {
            #expect(!text.contains("alice") && !text.contains("p@ss") && !text.contains("word"), "\(text)")
        }
        #expect("\(route)" == "http://•••@proxy.corp:3128")
        #expect(server.address == "proxy.corp:3128")
    }
}
