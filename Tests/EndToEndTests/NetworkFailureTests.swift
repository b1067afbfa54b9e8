import Foundation
import SesameCore
import SesameTestSupport
import Testing

/// Sesame's own HTTP client at work: through a real proxy (Debian's tinyproxy), with the proxy's
/// credentials or without them, and every way a connection fails, each told apart. How fast a
/// refusal is reported is a benchmark's (`make bench`: refused and no such host → the sentence,
/// against curl), not a test's.
@Suite("Proxies and failures that say what happened")
struct NetworkFailureTests {
    /// The failure of one GET of `url`.
    func failure(of url: String, through route: ProxyRoute = .direct) async throws -> HTTPTransportError {
        let transport = AsyncHTTPClientTransport(proxyResolver: FixedProxyResolver(route), timeout: .seconds(30))
        do {
            let response = try await transport.send(SesameCore.HTTPRequest(method: "GET", url: try #require(URL(string: url))))
            Issue.record("expected a failure, got HTTP \(response.status)")
            throw TestSupportError("no failure")
        } catch let error as HTTPTransportError {
            return error
        }
    }

    @Test("nothing listening: “connection refused”, naming the host")
    func refused() async throws {
        let port = try FreePort.pick()
        let error = try await failure(of: "http://127.0.0.1:\(port)/common/oauth2/v2.0/token")
        #expect(error.kind == .connectionRefused)
        #expect(error.host == "127.0.0.1:\(port)")
        #expect(error.description.contains("connection refused"))
    }

    @Test("a name that resolves to nothing: “no such host”")
    func noSuchHost() async throws {
        let error = try await failure(of: "https://login.no-such-tenant.invalid/common/v2.0/.well-known/openid-configuration")
        #expect(error.kind == .noSuchHost)
        #expect(error.host == "login.no-such-tenant.invalid")
    }

    @Test("a server that takes the connection and never answers: “did not answer in time”, by the exchange's deadline")
    func silentServer() async throws {
        // A listening socket nobody accepts from: the kernel completes the handshake, no answer ever comes.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 8) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        #expect(listening)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let transport = AsyncHTTPClientTransport(timeout: .seconds(1))
        do {
            _ = try await transport.send(SesameCore.HTTPRequest(method: "GET", url: try #require(URL(string: "http://127.0.0.1:\(port)/"))))
            Issue.record("a server that never answers answered")
        } catch let error as HTTPTransportError {
            #expect(error.kind == .timedOut, "\(error)")
            #expect(error.host == "127.0.0.1:\(port)")
        }
    }

    @Test("https to a server that does not speak TLS: “a secure connection could not be set up”")
    func notTLS() async throws {
        let emulator = try await RunningEmulator(users: 10)
        defer { emulator.stop() }
        let port = try #require(emulator.base.port)
        let error = try await failure(of: "https://127.0.0.1:\(port)/common/v2.0/.well-known/openid-configuration")
        #expect(error.kind == .tlsFailed, "\(error)")
    }

    @Test("a certificate from a CA this computer does not trust is refused and said so")
    func untrustedCertificate() async throws {
        let state = Repository.temporaryDirectory("untrusted-ca")
        defer { try? FileManager.default.removeItem(at: state) }
        let emulator = try await RunningEmulator(users: 10) {
            $0.tls = true
            $0.stateDirectory = state
        }
        defer { emulator.stop() }
        let error = try await failure(of: "\(emulator.base)/common/v2.0/.well-known/openid-configuration")
        #expect(error.kind == .untrustedCertificate, "\(error)")
    }

    @Test("through an HTTP proxy: the request goes as a CONNECT tunnel, and the answer comes back")
    func throughTheProxy() async throws {
        let emulator = try await RunningEmulator(users: 10)
        defer { emulator.stop() }
        let proxy = try TinyProxy()
        let transport = AsyncHTTPClientTransport(
            proxyResolver: FixedProxyResolver(try #require(ProxyRoute(proxyURI: "http://127.0.0.1:\(proxy.port)"))))
        let url = emulator.base.appending(path: "common/v2.0/.well-known/openid-configuration")
        let response = try await transport.send(SesameCore.HTTPRequest(method: "GET", url: url))
        #expect(response.status == 200)
        let tunnel = "\(emulator.base.host!):\(emulator.base.port!)"
        // tinyproxy's log line can come after the answer on a busy machine: waited for.
        _ = await Eventually.holds { proxy.tunnels.contains(tunnel) }
        #expect(proxy.tunnels.contains(tunnel), "\(proxy.log)")
    }

    @Test("a proxy that asks for a sign-in: the credentials in its URI are sent; without them, a 407 naming the proxy")
    func proxyCredentials() async throws {
        let emulator = try await RunningEmulator(users: 10)
        defer { emulator.stop() }
        let proxy = try TinyProxy(credentials: ("alice", "s3cret-pass"))
        let url = emulator.base.appending(path: "common/v2.0/.well-known/openid-configuration")

        let withCredentials = try #require(ProxyRoute(proxyURI: "http://alice:s3cret-pass@127.0.0.1:\(proxy.port)"))
        #expect(!"\(withCredentials)".contains("s3cret"), "the route prints its password: \(withCredentials)")
        #expect(!"\(withCredentials)".contains("alice"), "the route prints its user: \(withCredentials)")
        let response = try await AsyncHTTPClientTransport(proxyResolver: FixedProxyResolver(withCredentials))
            .send(SesameCore.HTTPRequest(method: "GET", url: url))
        #expect(response.status == 200)

        let error = try await failure(of: url.absoluteString, through: .http(ProxyServer(host: "127.0.0.1", port: proxy.port)))
        #expect(error.kind == .proxyAuthenticationRequired)
        #expect(error.proxy == "127.0.0.1:\(proxy.port)")

        let wrong = try #require(ProxyRoute(proxyURI: "http://alice:not-it@127.0.0.1:\(proxy.port)"))
        let refused = try await failure(of: url.absoluteString, through: wrong)
        // Wrong credentials: squid answers 407 again, tinyproxy 401, which AsyncHTTPClient reports
        // only as "not a 2xx answer to CONNECT": either way the proxy's refusal, never the password.
        #expect([.proxyAuthenticationRequired, .proxyRefused].contains(refused.kind), "\(refused)")
        #expect(refused.proxy == "127.0.0.1:\(proxy.port)")
        #expect(!refused.description.contains("not-it"))
    }

    @Test("a proxy that is not there: “the proxy cannot be reached”")
    func proxyDown() async throws {
        let port = try FreePort.pick()
        let error = try await failure(
            of: "https://login.microsoftonline.com/common/v2.0/.well-known/openid-configuration",
            through: .http(ProxyServer(host: "127.0.0.1", port: port)))
        #expect(error.kind == .proxyUnreachable)
        #expect(error.proxy == "127.0.0.1:\(port)")
        #expect(error.host == "login.microsoftonline.com")
    }

    @Test("a proxy that cannot reach the server: “the proxy refused to connect”, naming both")
    func proxyRefuses() async throws {
        let proxy = try TinyProxy()
        let port = try FreePort.pick()
        let error = try await failure(
            of: "http://127.0.0.1:\(port)/common/oauth2/v2.0/token", through: .http(ProxyServer(host: "127.0.0.1", port: proxy.port)))
        #expect(error.kind == .proxyRefused)
        #expect(error.proxy == "127.0.0.1:\(proxy.port)")
        #expect(error.host == "127.0.0.1:\(port)")
    }

    @Test("the account store keeps what happened: a token request to a refused port is a network error that says “refused”")
    func storeSaysWhich() async throws {
        let port = try FreePort.pick()
        let directory = Repository.temporaryDirectory("refused-store")
        defer { try? FileManager.default.removeItem(at: directory) }
        let settings = try SampleSettings.load(contentsOf: Repository.settings("directory.plist"))
            .pointed(at: try #require(URL(string: "http://127.0.0.1:\(port)")))
        let store = AccountStore(storage: FileTokenStorage(directory: directory), transport: AsyncHTTPClientTransport())
        await store.setConfiguration(settings.accountConfiguration, forAccountType: settings.accountType)
        do {
            _ = try await store.signInWithDeviceCode(accountType: settings.accountType) { _ in }
            Issue.record("the sign-in did not fail")
        } catch {
            #expect(error.code == .network)
            #expect(error.transportFailure?.kind == .connectionRefused, "\(error)")
            #expect(error.description.contains("connection refused"), "\(error)")
        }
    }
}
