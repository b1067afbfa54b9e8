import FoundationEssentials
import NIOCore
import NIOExtras
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS
import SwiftASN1
import X509

/// Reads a server's certificate with a TLS handshake of its own (AsyncHTTPClient does not expose
/// the peer's certificate), over the same route the app's requests take: straight, or through
/// an HTTP proxy's `CONNECT` tunnel (swift-nio-extras' `NIOHTTP1ProxyConnectHandler`, with the
/// proxy's Basic credentials as AsyncHTTPClient sends them). It verifies the chain against the
/// system's trust store and the host name as the transport does; when the chain is not trusted,
/// a second handshake that trusts everything reads who issued it. Neither sends a byte of
/// application data: the connection closes after the handshake.
public struct TLSCertificateInspector: CertificateInspector {
    private let timeout: TimeAmount

    /// An inspector whose connection, tunnel and handshake each end by `timeout`.
    public init(timeout: Duration = .seconds(10)) {
        self.timeout = .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)
    }

    public func inspect(host: String, port: Int, route: ProxyRoute) async -> CertificateInspection {
        if case .socks = route { return .notInspected }
        let url = Self.url(host: host, port: port)
        do {
            return .trusted(issuer: try await issuer(host: host, port: port, route: route, url: url, verify: true))
        } catch {
            let failure = Self.classify(error, url: url, route: route)
            guard failure.kind == .untrustedCertificate else { return .failed(failure) }
            let issuer = try? await self.issuer(host: host, port: port, route: route, url: url, verify: false)
            return .untrusted(failure, issuer: issuer)
        }
    }

    /// The URL errors name: `https://host:port/` (the port kept as given, so that the host in a
    /// sentence reads as the transport's for the same endpoint).
    static func url(host: String, port: Int) -> URL {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return URL(string: "https://\(bracketed):\(port)/") ?? URL(string: "https://invalid.invalid/")!
    }

    private static func classify(_ error: any Error, url: URL, route: ProxyRoute) -> HTTPTransportError {
        if let error = error as? HTTPTransportError { return error }
        return ConnectionFailure.classify(error, url: url, route: route)
    }

    private func issuer(host: String, port: Int, route: ProxyRoute, url: URL, verify: Bool) async throws -> CertificateIssuer {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if !verify { configuration.certificateVerification = .none }
        let context = try NIOSSLContext(configuration: configuration)
        // SNI and the name check take a host name; an address is checked against the peer's.
        let serverHostname = Self.isAddress(host) ? nil : host
        let server = route.server
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(timeout)
            .connect(host: server?.host ?? host, port: server?.port ?? port).get()
        defer { channel.close(promise: nil) }

        let timeout = timeout
        let handshaken = channel.eventLoop.makePromise(of: Void.self)
        try await channel.eventLoop.submit {
            let deadline = channel.eventLoop.scheduleTask(in: timeout) {
                handshaken.fail(HTTPTransportError(url: url, reason: "the server did not answer in time", kind: .timedOut))
            }
            handshaken.futureResult.whenComplete { _ in deadline.cancel() }
            let startTLS: @Sendable () throws -> Void = {
                try channel.pipeline.syncOperations.addHandlers(
                    try NIOSSLClientHandler(context: context, serverHostname: serverHostname), HandshakeWatcher(handshaken))
            }
            guard let server else { return try startTLS() }
            var headers = NIOHTTP1.HTTPHeaders([("Host", "\(Self.bracketed(host)):\(port)")])
            if let user = server.username {
                // As AsyncHTTPClient sends a proxy URI's credentials (ClientPool.configuration).
                let pair = Data("\(user):\(server.password?.revealed ?? "")".utf8).base64EncodedString()
                headers.add(name: "Proxy-Authorization", value: "Basic \(pair)")
            }
            let tunnel = channel.eventLoop.makePromise(of: Void.self)
            // In this order: the CONNECT handler sends its request as soon as it is added.
            try channel.pipeline.syncOperations.addHandler(HTTPRequestEncoder(), name: Self.encoderName)
            try channel.pipeline.syncOperations.addHandler(
                ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes)), name: Self.decoderName)
            try channel.pipeline.syncOperations.addHandler(
                NIOHTTP1ProxyConnectHandler(
                    targetHost: host, targetPort: port, headers: headers, deadline: .now() + timeout, promise: tunnel))
            // The tunnel is open: HTTP's codec leaves before TLS's first byte goes through it.
            tunnel.futureResult
                .flatMap { channel.pipeline.removeHandler(name: Self.encoderName) }
                .flatMap { channel.pipeline.removeHandler(name: Self.decoderName) }
                .flatMapThrowing { try startTLS() }
                .whenFailure { handshaken.fail($0) }
        }.get()
        try await handshaken.futureResult.get()

        guard let certificate = try await channel.nioSSL_peerCertificate().get() else {
            throw HTTPTransportError(url: url, reason: "the server presented no certificate", kind: .tlsFailed)
        }
        let issuer = try Certificate(derEncoded: try certificate.toDERBytes()).issuer
        var commonName: String?
        var organization: String?
        for attribute in issuer.flatMap({ $0 }) {
            if attribute.type == .RDNAttributeType.commonName { commonName = commonName ?? String(attribute.value) }
            if attribute.type == .RDNAttributeType.organizationName { organization = organization ?? String(attribute.value) }
        }
        return CertificateIssuer(commonName: commonName, organization: organization)
    }

    private static let encoderName = "sesame.doctor.connect-encoder"
    private static let decoderName = "sesame.doctor.connect-decoder"

    private static func bracketed(_ host: String) -> String { host.contains(":") ? "[\(host)]" : host }

    private static func isAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }
}

/// Completes a promise when the TLS handshake is done, or fails it with the first error or the
/// connection's end, whichever comes first (a promise completed twice keeps its first result).
private final class HandshakeWatcher: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let promise: EventLoopPromise<Void>

    init(_ promise: EventLoopPromise<Void>) { self.promise = promise }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent { promise.succeed() }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(ChannelError.eof)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Nothing is read after the handshake; whatever arrives is dropped.
    }
}
