import FoundationEssentials
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// Where the system browser brings a sign-in's answer back (RFC 8252 §7.3): an HTTP listener on
/// 127.0.0.1 and a port the system picked, for one sign-in.
///
/// Only the redirect path is answered. A request whose `state` is not the sign-in's is refused
/// and the listener keeps waiting (another program on this machine cannot end the sign-in); the
/// first matching request is the answer and later ones are told the sign-in is over. Each
/// request gets a small page telling the user they can close the tab.
final class LoopbackRedirectListener: Sendable {
    /// `http://127.0.0.1:<port>/`: the `redirect_uri` of the sign-in.
    let redirectURI: URL
    private let channel: any Channel
    private let waiting = Mutex<Waiting>(Waiting())
    private let observer: (@Sendable (LoopbackPage) -> Void)?

    private struct Waiting {
        var session: SignInSession?
        var answered = false
        var closed = false
    }

    private init(channel: any Channel, port: Int, observer: (@Sendable (LoopbackPage) -> Void)?) {
        self.channel = channel
        self.observer = observer
        redirectURI = URL(string: "http://127.0.0.1:\(port)/")!
    }

    /// Starts listening on 127.0.0.1 on a port the system picks; `observer` hears of every
    /// request.
    static func start(observer: (@Sendable (LoopbackPage) -> Void)? = nil) async throws -> LoopbackRedirectListener {
        let holder = Mutex<LoopbackRedirectListener?>(nil)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                // On the channel's event loop, where the handler (not Sendable) lives.
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(
                        RequestHandler { uri in
                            holder.withLock { $0 }?.answer(uri) ?? .notWaiting
                        })
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = channel.localAddress?.port else {
            try? await channel.close()
            throw LoopbackError("the loopback listener has no port")
        }
        let listener = LoopbackRedirectListener(channel: channel, port: port, observer: observer)
        holder.withLock { $0 = listener }
        return listener
    }

    /// The sign-in whose answer this listener waits for.
    func attach(_ session: SignInSession) {
        waiting.withLock { $0.session = session }
    }

    /// Stops listening (the sign-in ended).
    func close() async {
        let first = waiting.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
        if first { try? await channel.close() }
    }

    /// What a request to the listener gets, and whether it answers the sign-in.
    func answer(_ uri: String) -> LoopbackPage {
        let page = decide(uri)
        observer?(page)
        return page
    }

    private func decide(_ uri: String) -> LoopbackPage {
        guard let url = URL(string: uri, relativeTo: redirectURI)?.absoluteURL, url.path == redirectURI.path || url.path.isEmpty else {
            return .notFound
        }
        return waiting.withLock { state -> LoopbackPage in
            guard let session = state.session else { return .notWaiting }
            if state.answered { return .alreadyAnswered }
            let fields = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
            let sentState = fields.first { $0.name == "state" }?.value
            guard let sentState, session.request.state.matches(sentState) else { return .foreignAnswer }
            guard session.resume(with: url) else { return .notFound }
            state.answered = true
            return fields.contains { $0.name == "error" } ? .refused : .received
        }
    }
}

/// What a request to the loopback listener was, and the page it got (English, like the rest of
/// SesameCore's texts).
public enum LoopbackPage: Sendable, Equatable {
    /// The sign-in's answer, with a code.
    case received
    /// The sign-in's answer, with an error.
    case refused
    /// A request after the answer.
    case alreadyAnswered
    /// A request whose `state` is not the sign-in's: refused, and the listener keeps waiting.
    case foreignAnswer
    /// A request before the sign-in was attached.
    case notWaiting
    /// Another path (`/favicon.ico`, …).
    case notFound

    /// The name the flow trace records.
    public var traceName: String {
        switch self {
        case .received: "received"
        case .refused: "error"
        case .alreadyAnswered: "after-the-answer"
        case .foreignAnswer: "wrong-state"
        case .notWaiting: "not-waiting"
        case .notFound: "not-found"
        }
    }

    var status: HTTPResponseStatus {
        switch self {
        case .received, .refused, .alreadyAnswered: .ok
        case .foreignAnswer: .badRequest
        case .notWaiting: .serviceUnavailable
        case .notFound: .notFound
        }
    }

    var title: String {
        switch self {
        case .received: "You can close this tab"
        case .refused: "Sign-in did not finish"
        case .alreadyAnswered: "This sign-in is over"
        case .foreignAnswer: "Not Sesame’s sign-in"
        case .notWaiting: "Sesame is not waiting for a sign-in"
        case .notFound: "Not found"
        }
    }

    var text: String {
        switch self {
        case .received: "Sesame has the answer to its sign-in. Close this tab and go back to Sesame."
        case .refused: "The sign-in was not completed. Go back to Sesame to see why or to try again."
        case .alreadyAnswered: "Sesame already has the answer to this sign-in. You can close this tab."
        case .foreignAnswer: "This answer does not belong to the sign-in Sesame started, so Sesame ignored it."
        case .notWaiting: "Start the sign-in from Sesame."
        case .notFound: "There is nothing here."
        }
    }

    var html: String {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><title>\(title) – Sesame</title>
        <style>body{font-family:Cantarell,"Noto Sans",sans-serif;max-width:34em;margin:15vh auto;padding:0 1em;color:#241f31}\
        h1{font-size:1.6em;font-weight:600}</style></head>
        <body><h1 id="title">\(title)</h1><p id="message">\(text)</p></body></html>
        """
    }
}

struct LoopbackError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One connection's requests: each gets its page, then the connection closes.
private final class RequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let answer: @Sendable (String) -> LoopbackPage
    private var uri: String?

    init(answer: @escaping @Sendable (String) -> LoopbackPage) {
        self.answer = answer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            uri = head.method == .GET ? head.uri : nil
        case .body:
            break
        case .end:
            let page = uri.map(answer) ?? .notFound
            let body = ByteBuffer(string: page.html)
            var headers = NIOHTTP1.HTTPHeaders()
            headers.add(name: "Content-Type", value: "text/html; charset=utf-8")
            headers.add(name: "Content-Length", value: String(body.readableBytes))
            headers.add(name: "Cache-Control", value: "no-store")
            headers.add(name: "Connection", value: "close")
            headers.add(name: "Referrer-Policy", value: "no-referrer")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: page.status, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            let closing = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in closing.value.close(promise: nil) }
        }
    }
}
