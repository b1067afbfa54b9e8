import FoundationEssentials
import NIOCore
import NIOExtras
import NIOPosix
import NIOSSL

/// A mail server `sesame doctor` signs in to, from a URL: `imaps://host` (993, TLS), `imap://host`
/// (143, STARTTLS), `smtp://host` (587, STARTTLS), `smtps://host` (465, TLS). On a loopback
/// host, `imap://` and `smtp://` talk plain text (a test server); anywhere else a token never
/// goes over an unencrypted connection.
public struct MailServerAddress: Sendable, Hashable, CustomStringConvertible {
    /// The protocol spoken.
    public enum Kind: String, Sendable { case imap, smtp }
    /// How the connection is protected.
    public enum Security: String, Sendable {
        case implicitTLS = "TLS"
        case startTLS = "STARTTLS"
        case none = "none"
    }

    public let kind: Kind
    public let host: String
    public let port: Int
    public let security: Security

    /// The server `url` names; nil for another scheme, or no host.
    public init?(url: URL) {
        guard let host = url.host, !host.isEmpty else { return nil }
        let loopback = ["localhost", "127.0.0.1", "::1"].contains(host.lowercased())
        switch url.scheme?.lowercased() {
        case "imaps": (kind, security, port) = (.imap, .implicitTLS, url.port ?? 993)
        case "imap": (kind, security, port) = (.imap, loopback ? .none : .startTLS, url.port ?? 143)
        case "smtps": (kind, security, port) = (.smtp, .implicitTLS, url.port ?? 465)
        case "smtp", "submission": (kind, security, port) = (.smtp, loopback ? .none : .startTLS, url.port ?? 587)
        default: return nil
        }
        self.host = host
    }

    /// The Exchange Online permission a token needs here.
    public var mailScope: MailScope { kind == .imap ? .imap : .smtp }

    public var description: String { "\(kind.rawValue.uppercased()) \(host):\(port) (\(security.rawValue))" }
}

/// What a mail server said to Sesame's token.
public enum MailSignInOutcome: Sendable, Equatable {
    /// It accepted the token (`a1 OK`, `235`).
    case accepted
    /// It refused it, with its words (never the token).
    case refused(String)
    /// The conversation failed before an answer: the network, TLS, or an unexpected reply.
    case failed(String)
}

/// Signs in to a mail server with SASL XOAUTH2 and signs out again, to tell whether a token opens
/// the mailbox (`sesame doctor --mail`): IMAP `AUTHENTICATE XOAUTH2` or SMTP `AUTH XOAUTH2`, after
/// TLS or STARTTLS (the system's trust store, the host name checked). A refusal's SASL challenge
/// is answered with an empty response, so the server's final word arrives instead of a hang.
public struct MailServerProbe: Sendable {
    private let timeout: TimeAmount

    /// A probe whose conversation ends by `timeout`.
    public init(timeout: Duration = .seconds(15)) {
        self.timeout = .seconds(timeout.components.seconds)
    }

    /// Signs in to `address` as `user` with `token`.
    public func signIn(to address: MailServerAddress, user: String, token: Secret) async -> MailSignInOutcome {
        do {
            let connection = try await MailConnection.open(address, timeout: timeout)
            defer { connection.close() }
            let response = SASLResponse.xoauth2(user: user, token: token)
            switch address.kind {
            case .imap: return try await imap(connection, address: address, response: response)
            case .smtp: return try await smtp(connection, address: address, response: response)
            }
        } catch let error as MailConnection.Failure {
            return .failed(error.sentence)
        } catch {
            return .failed("\(address): \(error)")
        }
    }

    private func imap(_ connection: MailConnection, address: MailServerAddress, response: String) async throws -> MailSignInOutcome {
        let greeting = try await connection.line()
        guard greeting.hasPrefix("* OK") || greeting.hasPrefix("* PREAUTH") else { return .failed("unexpected greeting: \(greeting)") }
        if address.security == .startTLS {
            connection.send("a0 STARTTLS")
            let answer = try await connection.tagged("a0")
            guard answer.hasPrefix("a0 OK") else { return .failed("STARTTLS refused: \(answer)") }
            try await connection.startTLS(host: address.host)
        }
        connection.send("a1 AUTHENTICATE XOAUTH2 \(response)")
        var answer = try await connection.line()
        while answer.hasPrefix("* ") { answer = try await connection.line() }
        if answer.hasPrefix("+") {
            // The server's challenge says why; the empty response asks for its final answer.
            connection.send("")
            answer = try await connection.tagged("a1")
        }
        connection.send("a2 LOGOUT")
        if answer.hasPrefix("a1 OK") { return .accepted }
        return .refused(String(answer.dropFirst(3)))
    }

    private func smtp(_ connection: MailConnection, address: MailServerAddress, response: String) async throws -> MailSignInOutcome {
        guard try await connection.reply().hasPrefix("220") else { return .failed("unexpected greeting") }
        connection.send("EHLO sesame-doctor")
        guard try await connection.reply().hasPrefix("250") else { return .failed("EHLO refused") }
        if address.security == .startTLS {
            connection.send("STARTTLS")
            let answer = try await connection.reply()
            guard answer.hasPrefix("220") else { return .failed("STARTTLS refused: \(answer)") }
            try await connection.startTLS(host: address.host)
            connection.send("EHLO sesame-doctor")
            guard try await connection.reply().hasPrefix("250") else { return .failed("EHLO refused after STARTTLS") }
        }
        // The response after `334`, not on the AUTH line: Dovecot's submission refuses long lines.
        connection.send("AUTH XOAUTH2")
        var answer = try await connection.reply()
        if answer.hasPrefix("334") {
            connection.send(response)
            answer = try await connection.reply()
            if answer.hasPrefix("334") {
                connection.send("")
                answer = try await connection.reply()
            }
        }
        connection.send("QUIT")
        if answer.hasPrefix("235") { return .accepted }
        return .refused(answer)
    }
}

/// One line-oriented connection (CRLF lines), plain or TLS, with STARTTLS; used by one task.
private final class MailConnection {
    struct Failure: Error {
        let sentence: String
    }

    private let channel: any Channel
    private var lines: AsyncThrowingStream<String, any Error>.AsyncIterator
    private let address: MailServerAddress

    private init(channel: any Channel, lines: AsyncThrowingStream<String, any Error>, address: MailServerAddress) {
        self.channel = channel
        self.lines = lines.makeAsyncIterator()
        self.address = address
    }

    static func open(_ address: MailServerAddress, timeout: TimeAmount) async throws -> MailConnection {
        let (stream, continuation) = AsyncThrowingStream<String, any Error>.makeStream()
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(timeout)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers(
                            ByteToMessageHandler(LineBasedFrameDecoder()), LineCollector(continuation))
                    }
                }
                .connect(host: address.host, port: address.port).get()
        } catch {
            throw Failure(sentence: "\(address): cannot connect (\(error))")
        }
        channel.eventLoop.scheduleTask(in: timeout) {
            continuation.finish(throwing: Failure(sentence: "\(address): the server did not answer in time"))
            channel.close(promise: nil)
        }
        let connection = MailConnection(channel: channel, lines: stream, address: address)
        if address.security == .implicitTLS { try await connection.startTLS(host: address.host) }
        return connection
    }

    /// Wraps the connection in TLS now (at once for implicit TLS, after STARTTLS's go-ahead).
    func startTLS(host: String) async throws {
        do {
            let context = try NIOSSLContext(configuration: .makeClientConfiguration())
            let serverHostname = (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
            try await channel.eventLoop.submit { [channel] in
                try channel.pipeline.syncOperations.addHandler(
                    try NIOSSLClientHandler(context: context, serverHostname: serverHostname), position: .first)
            }.get()
        } catch {
            throw Failure(sentence: "\(address): TLS failed (\(error))")
        }
    }

    func send(_ line: String) {
        channel.writeAndFlush(ByteBuffer(string: line + "\r\n"), promise: nil)
    }

    /// The next line.
    func line() async throws -> String {
        do {
            guard let line = try await lines.next(isolation: nil) else {
                throw Failure(sentence: "\(address): the server closed the connection")
            }
            return line
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(sentence: "\(address): \(error)")
        }
    }

    /// IMAP: the line tagged `tag`, after any untagged ones.
    func tagged(_ tag: String) async throws -> String {
        while true {
            let next = try await line()
            if next.hasPrefix(tag + " ") { return next }
        }
    }

    /// SMTP: a reply's last line (`250-…` lines are continued).
    func reply() async throws -> String {
        while true {
            let next = try await line()
            if next.count < 4 || next[next.index(next.startIndex, offsetBy: 3)] != "-" { return next }
        }
    }

    func close() { channel.close(promise: nil) }
}

/// Passes each line on to the stream; the connection's end finishes it.
private final class LineCollector: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    private let continuation: AsyncThrowingStream<String, any Error>.Continuation

    init(_ continuation: AsyncThrowingStream<String, any Error>.Continuation) { self.continuation = continuation }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        let text = buffer.readString(length: buffer.readableBytes) ?? ""
        continuation.yield(text.hasSuffix("\r") ? String(text.dropLast()) : text)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        continuation.finish(throwing: error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        continuation.finish()
        context.fireChannelInactive()
    }
}
