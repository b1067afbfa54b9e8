import Foundation
import SesameCoreTestSupport
import SesameTestSupport
import Synchronization
import Testing

@testable import SesameCore

/// The system browser as the user agent (RFC 8252): the request's redirect URI is a loopback
/// port of a listener made for the sign-in, and real HTTP requests to it carry the answer.
@Suite("System browser sign-in")
struct SystemBrowserTests {
    /// What a test saw, shared with the closures that saw it.
    final class Seen<Value: Sendable>: Sendable {
        let value: Mutex<Value>
        init(_ initial: Value) { value = Mutex(initial) }
        var current: Value { value.withLock { $0 } }
        func set(_ new: Value) { value.withLock { $0 = new } }
    }

    struct Visit: Sendable {
        var redirectURI: String
        var foreign: Int
        var foreignText: String
        var other: Int
        var answer: Int
        var answerText: String
    }

    /// Whether anything accepts TCP connections on 127.0.0.1:`port` (a plain connect(2): an HTTP
    /// client would retry a refused connection until its deadline).
    static func isListening(_ port: Int?) -> Bool {
        guard let port else { return false }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// The socket listening on 127.0.0.1:`port` now (its inode, from /proc/net/tcp), if any: read
    /// while the sign-in's listener is up, it names that listener's socket.
    static func listeningSocket(_ port: Int?) -> String? {
        guard let port, let table = FileManager.default.contents(atPath: "/proc/net/tcp") else { return nil }
        let wanted = "0100007F:" + String(format: "%04X", port)
        for line in String(decoding: table, as: UTF8.self).split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            if fields.count > 9, fields[1] == wanted, fields[3] == "0A" { return String(fields[9]) }
        }
        return nil
    }

    /// Whether this process still holds the socket `inode` open. Unlike a connect(2) to its port
    /// afterwards, which another test's listener may have been given meanwhile, this asks about
    /// the listener's own socket.
    static func holds(_ inode: String?) -> Bool {
        guard let inode else { return false }
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.contains {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == "socket:[\(inode)]"
        }
    }

    /// A GET as a browser sends it, over a socket of its own (HTTP/1.1, `Connection: close`),
    /// read to the end: status and body.
    static func get(_ url: URL) async throws -> HTTPResponse {
        try await Task.detached {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(url.port ?? 80).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { throw URLError(.cannotConnectToHost) }
            let target = url.path.isEmpty ? "/" : url.path
            let request = "GET \(target)\(url.query.map { "?" + $0 } ?? "") HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
            _ = request.withCString { send(fd, $0, strlen($0), 0) }
            var received = Data()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = recv(fd, &buffer, buffer.count, 0)
                guard count > 0 else { break }
                received.append(contentsOf: buffer[0..<count])
            }
            let text = String(decoding: received, as: UTF8.self)
            let status = Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0
            let body = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
            return HTTPResponse(status: status, body: Data(body.utf8))
        }.value
    }

    @Test(
        "the answer arrives on 127.0.0.1 at a picked port; a foreign state is refused and the listener keeps waiting; the port closes after"
    )
    func signsIn() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await fixture.configure()
        let heard = Seen<[LoopbackPage]>([])
        let seen = Seen<Visit?>(nil)
        let socket = Seen<String?>(nil)
        let agent = SystemBrowserUserAgent(
            open: { url in
                let redirect = fixture.provider.redirect(for: url)
                socket.set(Self.listeningSocket(redirect.port))
                Task.detached {
                    var components = URLComponents(url: redirect, resolvingAgainstBaseURL: false)!
                    components.queryItems = components.queryItems!.map {
                        $0.name == "state" ? URLQueryItem(name: "state", value: "forged") : $0
                    }
                    let foreign = try await Self.get(components.url!)
                    let other = try await Self.get(redirect.deletingLastPathComponent().appending(path: "favicon.ico"))
                    let answer = try await Self.get(redirect)
                    let redirectURI = URLComponents(url: url, resolvingAgainstBaseURL: false)!.queryItems!.first {
                        $0.name == "redirect_uri"
                    }!
                    .value!
                    seen.set(
                        Visit(
                            redirectURI: redirectURI, foreign: foreign.status, foreignText: String(decoding: foreign.body, as: UTF8.self),
                            other: other.status, answer: answer.status, answerText: String(decoding: answer.body, as: UTF8.self)))
                }
            },
            onRequest: { page in heard.value.withLock { $0.append(page) } })
        let account = try await fixture.store.signIn(accountType: fixture.accountType, using: agent)
        #expect(account.username == "alex@contoso.onmicrosoft.com")
        // The sign-in may end before the browser has read the page the answer got.
        let result = try #require(await Eventually.value(within: .seconds(300), every: .milliseconds(50)) { seen.current })
        let redirectURI = try #require(URL(string: result.redirectURI))
        #expect(redirectURI.scheme == "http" && redirectURI.host == "127.0.0.1" && redirectURI.path == "/", "\(redirectURI)")
        #expect((redirectURI.port ?? 0) > 1024)
        #expect(result.foreign == 400)
        #expect(result.foreignText.contains("does not belong to the sign-in Sesame started"))
        #expect(result.other == 404)
        #expect(result.answer == 200)
        #expect(result.answerText.contains("You can close this tab"))
        #expect(heard.current == [.foreignAnswer, .notFound, .received])
        #expect(socket.current != nil, "no listener on \(redirectURI)")
        #expect(!Self.holds(socket.current), "the listener still listens after the sign-in")
    }

    @Test("after the answer, another request is told the sign-in is over; before a sign-in, nobody waits")
    func lateAndEarlyRequests() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        var configuration = fixture.provider.configuration
        let listener = try await LoopbackRedirectListener.start()
        configuration.redirectURL = listener.redirectURI
        let request = AuthorizationRequest(configuration: configuration)
        let session = SignInSession(accountType: "t", configuration: configuration, request: request)
        let answer = "/?code=abc&state=\(request.state.revealed)"
        #expect(listener.answer(answer) == .notWaiting)
        listener.attach(session)
        #expect(listener.answer("/elsewhere?state=\(request.state.revealed)") == .notFound)
        #expect(listener.answer("/?code=abc") == .foreignAnswer, "no state at all")
        #expect(!session.isFinished)
        #expect(listener.answer(answer) == .received)
        #expect(session.isFinished)
        #expect(listener.answer(answer) == .alreadyAnswered)
        #expect(Self.isListening(listener.redirectURI.port))
        let socket = Self.listeningSocket(listener.redirectURI.port)
        #expect(socket != nil)
        #expect(Self.holds(socket), "the open listener's socket is not seen as held")
        await listener.close()
        #expect(!Self.holds(socket))
    }

    @Test("a browser that never answers: the sign-in ends as cancelled after the timeout, and the port closes")
    func timesOut() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await fixture.configure()
        let redirect = Seen<URL?>(nil)
        let socket = Seen<String?>(nil)
        let agent = SystemBrowserUserAgent(timeout: .milliseconds(300)) { url in
            redirect.set(fixture.provider.redirect(for: url))
            socket.set(Self.listeningSocket(redirect.current?.port))
        }
        do {
            _ = try await fixture.store.signIn(accountType: fixture.accountType, using: agent)
            Issue.record("signed in without an answer")
        } catch {
            #expect(error.code == .cancelled)
        }
        #expect(redirect.current != nil)
        #expect(socket.current != nil)
        #expect(!Self.holds(socket.current), "the listener still listens after the timeout")
    }

    @Test("the user cancels while the browser is open: cancelled, and the port closes")
    func cancelled() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await fixture.configure()
        let opened = AsyncStream<URL>.makeStream()
        let agent = SystemBrowserUserAgent { url in opened.continuation.yield(url) }
        let signIn = Task { try await fixture.store.signIn(accountType: fixture.accountType, using: agent) }
        var iterator = opened.stream.makeAsyncIterator()
        let url = try #require(await iterator.next())
        let redirectURI = try #require(
            URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "redirect_uri" }?.value)
        #expect(Self.isListening(URL(string: redirectURI)?.port))
        let socket = Self.listeningSocket(URL(string: redirectURI)?.port)
        #expect(socket != nil)
        signIn.cancel()
        do {
            _ = try await signIn.value
            Issue.record("a cancelled sign-in signed in")
        } catch let error as AccountStoreError {
            #expect(error.code == .cancelled)
        }
        #expect(!Self.holds(socket))
    }

    @Test("no browser to open: the sign-in says so (userAgentUnavailable) and nothing keeps listening")
    func noBrowser() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await fixture.configure()
        struct NoBrowser: Error {}
        let asked = Seen<URL?>(nil)
        let socket = Seen<String?>(nil)
        let agent = SystemBrowserUserAgent { url in
            asked.set(url)
            let redirectURI = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "redirect_uri" }?
                .value
            socket.set(Self.listeningSocket(redirectURI.flatMap(URL.init(string:))?.port))
            throw NoBrowser()
        }
        do {
            _ = try await fixture.store.signIn(accountType: fixture.accountType, using: agent)
            Issue.record("signed in without a browser")
        } catch {
            #expect(error.code == .userAgentUnavailable)
        }
        #expect(asked.current != nil)
        #expect(socket.current != nil)
        #expect(!Self.holds(socket.current), "a listener outlived the sign-in")
    }
}
