import AsyncHTTPClient
import FoundationEssentials
import NIOCore
import NIOExtras
import NIOHTTP1
import NIOPosix
import NIOSSL
import SesameSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What went wrong when an exchange got no answer, from SwiftNIO's and AsyncHTTPClient's errors:
/// the one place that reads them, so every caller gets an ``HTTPTransportError`` of a kind a
/// user's sentence can be made from ("connection refused", "no such host", "the proxy at H asks
/// for a sign-in") instead of a type name.
enum ConnectionFailure {
    static func classify(_ error: any Error, url: URL, route: ProxyRoute) -> HTTPTransportError {
        let proxy = route.server?.address
        let (kind, reason) = describe(error, proxy: proxy)
        return HTTPTransportError(url: url, reason: reason, kind: kind, proxy: proxy)
    }

    private static func describe(_ error: any Error, proxy: String?) -> (HTTPTransportError.Kind, String) {
        switch error {
        case let error as HTTPClientError:
            switch error {
            case .deadlineExceeded, .readTimeout: return (.timedOut, "the server did not answer in time")
            case .connectTimeout:
                return proxy.map { (.proxyUnreachable, "the proxy at \($0) could not be reached in time") }
                    ?? (.timedOut, "the server could not be reached in time")
            case .remoteConnectionClosed: return (.brokenAnswer, "the server closed the connection")
            case .proxyAuthenticationRequired: return (.proxyAuthenticationRequired, "the proxy asks for a sign-in (HTTP 407)")
            case .invalidProxyResponse: return (.proxyRefused, "the proxy refused to open a connection to the server")
            case .cancelled: return (.unreachable, "the request was cancelled")
            default: return (.unreachable, "\(error)")
            }
        // `sesame doctor`'s own tunnel (swift-nio-extras' CONNECT handler), in the same words as
        // AsyncHTTPClient's.
        case let error as NIOHTTP1ProxyConnectHandler.Error:
            let proxy = proxy ?? "(unknown)"
            if error == .proxyAuthenticationRequired() { return (.proxyAuthenticationRequired, "the proxy asks for a sign-in (HTTP 407)") }
            if error == .httpProxyHandshakeTimeout() { return (.proxyUnreachable, "the proxy at \(proxy) did not answer in time") }
            return (.proxyRefused, "the proxy refused to open a connection to the server")
        case is HTTPParserError:
            return (.brokenAnswer, "the answer was cut off or malformed (the connection broke mid-answer)")
        case let error as NIOSSLError:
            switch error {
            case .handshakeFailed(let cause) where "\(cause)".contains("CERTIFICATE_VERIFY_FAILED"):
                return (.untrustedCertificate, "its certificate is not signed by a certificate authority this computer trusts")
            case .unableToValidateCertificate, .noCertificateToValidate:
                return (.untrustedCertificate, "its certificate is not signed by a certificate authority this computer trusts")
            default: return (.tlsFailed, "the secure connection could not be set up")
            }
        case let error as NIOSSLExtraError where error == .failedToValidateHostname:
            return (.untrustedCertificate, "its certificate is for another host")
        case let error as NIOConnectionError:
            if let first = error.connectionErrors.first { return describe(first.error, proxy: proxy) }
            return unreachable(.noSuchHost, "no such host", proxy: proxy)
        case is SocketAddressError:
            return unreachable(.noSuchHost, "no such host", proxy: proxy)
        case let error as IOError:
            switch error.errnoCode {
            case ECONNREFUSED: return unreachable(.connectionRefused, "connection refused", proxy: proxy)
            case ENETUNREACH, EHOSTUNREACH, ENETDOWN: return unreachable(.networkUnreachable, "the network is unreachable", proxy: proxy)
            case ETIMEDOUT: return (.timedOut, "the connection timed out")
            case ECONNRESET, EPIPE: return (.brokenAnswer, "the connection was reset")
            default: return unreachable(.unreachable, "the connection failed (\(Posix.message(for: error.errnoCode)))", proxy: proxy)
            }
        case ChannelError.connectTimeout:
            return (.timedOut, "the server could not be reached in time")
        case let error as ChannelError where error == .ioOnClosedChannel || error == .eof:
            return (.brokenAnswer, "the server closed the connection")
        default:
            return (.unreachable, "the exchange failed (\(type(of: error)))")
        }
    }

    /// A connection that could not be made: the proxy's, when there is one (Sesame connects to
    /// nothing else then), else the server's.
    private static func unreachable(_ kind: HTTPTransportError.Kind, _ reason: String, proxy: String?) -> (HTTPTransportError.Kind, String)
    {
        guard let proxy else { return (kind, reason) }
        return (.proxyUnreachable, "the proxy at \(proxy) could not be reached: \(reason)")
    }
}

/// The process's clients, one per proxy route, each bounded the same way and kept for the
/// process's life (AsyncHTTPClient's pools are per client, and a client must be shut down before
/// it goes; there are as many as the desktop names proxies, seldom more than two).
final class ClientPool: Sendable {
    static let shared = ClientPool()

    private let clients = Mutex<[ProxyRoute: HTTPClient]>([:])

    func client(for route: ProxyRoute) -> HTTPClient {
        clients.withLock { clients in
            if let client = clients[route] { return client }
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: Self.configuration(for: route))
            clients[route] = client
            return client
        }
    }

    /// No redirects followed, connections given 10 s and not retried, the route's proxy.
    static func configuration(for route: ProxyRoute) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(30))
        // A refused connection is an answer: retrying it until the connect timeout turned
        // "connection refused" into a 20 s wait.
        configuration.connectionPool.retryConnectionEstablishment = false
        switch route {
        case .direct: break
        case .http(let server):
            let authorization = server.username.map { user in
                HTTPClient.Authorization.basic(username: user, password: server.password?.revealed ?? "")
            }
            configuration.proxy = .server(host: server.host, port: server.port, authorization: authorization)
        case .socks(let server):
            configuration.proxy = .socksServer(host: server.host, port: server.port)
        }
        return configuration
    }
}
