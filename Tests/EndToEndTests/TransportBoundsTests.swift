import Foundation
import Hummingbird
import NIOCore
import SesameCore
import SesameTestSupport
import Synchronization
import Testing

/// The real transport against a server that misbehaves on purpose, over real sockets: every
/// exchange is bounded in time and size, and a redirect never carries a request elsewhere.
@Suite("The transport's bounds")
struct TransportBoundsTests {
    /// A local server: `/redirect` sends a 307 to `/collect` on the same server, `/collect`
    /// records what reached it, `/trickle` sends its headers then a byte every 200 ms for a
    /// minute, `/huge` announces and streams 64 MiB.
    final class Misbehaving: Sendable {
        /// What the server saw: the bodies that reached `/collect`, and its port.
        final class Seen: Sendable {
            let collected = Mutex<[String]>([])
            let port = Mutex<Int?>(nil)
        }
        let seen = Seen()
        let base: URL
        private let task: Task<Void, any Error>

        init() async throws {
            let seen = seen
            let router = Router()
            router.post("redirect") { _, _ -> Response in
                let port = seen.port.withLock { $0 } ?? 0
                return Response(status: .temporaryRedirect, headers: [.location: "http://127.0.0.1:\(port)/collect"])
            }
            router.post("collect") { request, _ -> String in
                let body = try await request.body.collect(upTo: 1 << 20)
                seen.collected.withLock { $0.append(String(buffer: body)) }
                return "{}"
            }
            router.get("trickle") { _, _ -> Response in
                Response(
                    status: .ok, headers: [.contentType: "application/json"],
                    body: ResponseBody { writer in
                        for _ in 0..<300 {
                            try await writer.write(ByteBuffer(string: " "))
                            // The server's pace in real time (a byte every 200 ms for a minute):
                            // what the client's deadline is measured against; nothing waits on it.
                            try await Task.sleep(for: .milliseconds(200))
                        }
                        try await writer.finish(nil)
                    })
            }
            router.get("huge") { _, _ -> Response in
                let size = 64 << 20
                return Response(
                    status: .ok, headers: [.contentLength: String(size)],
                    body: ResponseBody(contentLength: size) { writer in
                        let chunk = ByteBuffer(repeating: 0x20, count: 1 << 20)
                        for _ in 0..<64 { try await writer.write(chunk) }
                        try await writer.finish(nil)
                    })
            }
            // The port, when the server listens; nothing, when it ended without listening. Waited
            // for as the event it is: in a loaded run (every suite at once on two task threads)
            // the server's task can wait minutes for a thread, and no budget fits every machine.
            let (listening, announce) = AsyncStream<Int>.makeStream()
            let app = Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { channel in
                    let port = channel.localAddress?.port
                    seen.port.withLock { $0 = port }
                    if let port { announce.yield(port) }
                    announce.finish()
                })
            task = Task {
                defer { announce.finish() }
                try await app.runService()
            }
            var ports = listening.makeAsyncIterator()
            guard let port = await ports.next() else {
                throw TestSupportError("the misbehaving server ended without listening: \(await task.result)")
            }
            base = URL(string: "http://127.0.0.1:\(port)")!
        }

        func stop() { task.cancel() }
    }

    @Test("a token request answered with a 307 is not re-sent there: its form (a refresh token) reaches no one else")
    func noRedirects() async throws {
        let server = try await Misbehaving()
        defer { server.stop() }
        let request = SesameCore.HTTPRequest(
            method: "POST", url: server.base.appending(path: "redirect"), headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Data("grant_type=refresh_token&refresh_token=RT-SECRET".utf8))
        let response = try await AsyncHTTPClientTransport().send(request, progress: nil)
        // A client that follows redirects does so before it answers: an answer of 307 is the proof,
        // and the redirect's target (this server) has been asked nothing by then.
        #expect(response.status == 307)
        #expect(server.seen.collected.withLock { $0 }.isEmpty, "the form was re-sent to the redirect's target")
    }

    @Test("a body that trickles a byte every 200 ms ends at the exchange's deadline, not 60 s later")
    func trickle() async throws {
        let server = try await Misbehaving()
        defer { server.stop() }
        // Ended by the exchange's own deadline (the trickle would last a minute): the error says so.
        await #expect {
            _ = try await AsyncHTTPClientTransport(timeout: .seconds(2)).send(
                SesameCore.HTTPRequest(method: "GET", url: server.base.appending(path: "trickle")), progress: nil)
        } throws: { error in
            (error as? HTTPTransportError)?.kind == .timedOut
        }
    }

    @Test("an answer larger than the cap is refused with a sentence that says so, before it is read whole")
    func tooLarge() async throws {
        let server = try await Misbehaving()
        defer { server.stop() }
        let error = await #expect(throws: HTTPTransportError.self) {
            _ = try await AsyncHTTPClientTransport(maximumBodySize: 1 << 20).send(
                SesameCore.HTTPRequest(method: "GET", url: server.base.appending(path: "huge")), progress: nil)
        }
        #expect(error?.description.contains("larger than 1 MiB") == true, "\(String(describing: error))")
    }
}
