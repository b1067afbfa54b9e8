import Foundation
import Hummingbird
import SesameGIO
import SesameService
import SesameTestSupport
import XCTest

@testable import SesameCore
@testable import SesameGtk

/// This computer's single sign-on credential (`x-ms-RefreshTokenCredential`) in the window's real
/// sign-in pane: the first request of the sign-in page carries it to the origin it was made for,
/// and no redirect takes it anywhere else — to another host, another port, a federated domain's
/// provider — whether the service answers 302, 307 or 308 (WebKit sends a request's own headers
/// again with each redirect). Two logging servers on loopback record every request's headers.
final class DeviceCredentialRedirectTests: GUITestCase {
    /// One request a server received: on which port, for which host and path, with what credential.
    struct Received: Sendable, CustomStringConvertible {
        let port: Int
        let host: String
        let path: String
        let credential: String?
        var description: String { "\(host) (port \(port)) \(path)\(credential == nil ? "" : " WITH the credential")" }
    }

    /// Everything both servers received, in order.
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var _requests: [Received] = []
        var requests: [Received] { lock.withLock { _requests } }
        func append(_ request: Received) { lock.withLock { _requests.append(request) } }
    }

    /// A server on 127.0.0.1 that logs every request: `/authorize` and `/hop` answer `status`
    /// (302, 307, 308) to `to`, any other path a page titled "landed".
    final class LoggingServer: @unchecked Sendable {
        let port: Int
        private var task: Task<Void, any Error>?

        init(log: Log) {
            let router = Router()
            let ready = DispatchSemaphore(value: 0)
            final class Port: @unchecked Sendable { var value = 0 }
            let bound = Port()
            router.middlewares.add(Recorder(log: log, port: { bound.value }))
            for path in ["/authorize", "/hop"] {
                router.get(RouterPath(path)) { request, _ -> Response in
                    let status = request.uri.queryParameters["status"].flatMap { Int(String($0)) } ?? 302
                    let target = request.uri.queryParameters["to"].map(String.init) ?? "/landing"
                    return Response(status: .init(code: status), headers: [.location: target])
                }
            }
            for path in ["/", "**"] {
                router.get(RouterPath(path)) { _, _ -> Response in
                    Response(
                        status: .ok, headers: [.contentType: "text/html"],
                        body: .init(byteBuffer: ByteBuffer(string: "<!DOCTYPE html><title>landed</title><p>landed</p>")))
                }
            }
            let app = Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { channel in
                    bound.value = channel.localAddress?.port ?? 0
                    ready.signal()
                })
            task = Task { try await app.runService(gracefulShutdownSignals: []) }
            ready.wait()
            port = bound.value
        }

        deinit { task?.cancel() }
    }

    /// Records each request before it is answered.
    struct Recorder: RouterMiddleware {
        typealias Context = BasicRequestContext
        let log: Log
        let port: @Sendable () -> Int
        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
            log.append(
                Received(
                    port: port(), host: request.head.authority ?? "", path: request.uri.path,
                    credential: request.headers.first { $0.name.canonicalName == "x-ms-refreshtokencredential" }?.value))
            return try await next(request, context)
        }
    }

    static let credential = "eyJhbGciOiJIUzI1NiIsImN0eCI6IlRFU1QifQ.the-device-credential.c2lnbmF0dXJl"

    /// Both servers for the whole class: the registered origin and somewhere else.
    nonisolated(unsafe) static var servers: (log: Log, origin: LoggingServer, elsewhere: LoggingServer)?
    static var log: Log { setUp().log }
    static var origin: Int { setUp().origin.port }
    static var elsewhere: Int { setUp().elsewhere.port }
    @discardableResult
    static func setUp() -> (log: Log, origin: LoggingServer, elsewhere: LoggingServer) {
        if let servers { return servers }
        let log = Log()
        let made = (log, LoggingServer(log: log), LoggingServer(log: log))
        servers = made
        return made
    }

    /// A sign-in whose authorization page is `start` (on the registered origin), in the window's
    /// real sign-in pane with this computer's credential for it; runs until the view shows a page
    /// at `landing` (a path), and returns what the servers received meanwhile.
    @MainActor
    static func signIn(start: URL, landing: String) throws -> (requests: [Received], trace: FlowTrace) {
        let before = log.requests.count
        let trace = try FlowTrace(file: nil)
        let pane = SignInPane(trace: trace, webDataDirectory: nil, automation: false)
        // The pane asks the device identity for the page's credential: only for its own origin.
        let registered = URL(string: "http://127.0.0.1:\(origin)")!
        pane.deviceCredentials = { url in url.host == registered.host && url.port == registered.port ? Secret(credential) : nil }
        let window = Window(application: nil, title: "credential", width: 800, height: 600)
        window.setContent(pane.root)
        window.showAll()
        defer { window.destroy() }
        let configuration = AccountConfiguration(
            clientID: "6731de76-14a6-49ae-97bc-6eba6914391e", scopes: ["openid"], authorizationURL: start,
            tokenURL: start, redirectURL: URL(string: "https://login.microsoftonline.com/common/oauth2/nativeclient")!,
            storageGroup: "credential")
        let store = AccountStore(storage: FileTokenStorage(directory: Repository.temporaryDirectory("sesame-credential")))
        let signIn = Task {
            await store.setConfiguration(configuration, forAccountType: "test")
            _ = try? await store.signIn(accountType: "test", using: pane)
        }
        defer { signIn.cancel() }
        XCTAssertTrue(
            MainLoopBridge.spin(timeout: 15) {
                guard let shown = pane.view?.webView.uri.flatMap(URL.init(string:)), shown.path.hasPrefix(landing) else { return false }
                return trace.events.contains { $0.name == "page-loaded" && $0.fields.contains { $0 == ("url", FlowTrace.redacted(shown)) } }
            }, "the view never showed \(landing); it shows \(pane.view?.webView.uri ?? "nothing")")
        XCTAssertTrue(trace.events.contains { $0.name == "device-credential-sent" }, "the pane sent no credential")
        // The view's requests (the store's discovery of the service's metadata is not one of them).
        return (log.requests.dropFirst(before).filter { !$0.path.contains("/.well-known/") }, trace)
    }

    /// `/authorize` on the registered origin answering `status` to `target`.
    static func authorize(_ status: Int, to target: String, extra: [URLQueryItem] = []) -> URL {
        var components = URLComponents(string: "http://127.0.0.1:\(origin)/authorize")!
        components.queryItems = [URLQueryItem(name: "status", value: "\(status)"), URLQueryItem(name: "to", value: target)] + extra
        return components.url!
    }

    /// The registered origin had the credential with the page's first request (single sign-on
    /// still works); nothing after a hop off it had it.
    static func check(_ requests: [Received], leavingAt index: Int, _ what: String) {
        let listed = requests.map(\.description).joined(separator: "\n")
        XCTAssertEqual(requests.first?.path, "/authorize", "\(what):\n\(listed)")
        XCTAssertEqual(requests.first?.credential, credential, "\(what): the registered origin did not get the credential:\n\(listed)")
        XCTAssertGreaterThan(requests.count, index, "\(what): nothing arrived off the origin:\n\(listed)")
        for request in requests.dropFirst(index) {
            XCTAssertNil(request.credential, "\(what): the credential went to \(request):\n\(listed)")
        }
    }

    func testARedirectToAnotherHostOrPortNeverCarriesTheCredential() throws {
        try MainActor.assumeIsolated {
            for status in [302, 307, 308] {
                for target in ["http://localhost:\(Self.origin)/landing", "http://127.0.0.1:\(Self.elsewhere)/landing"] {
                    let (requests, trace) = try Self.signIn(start: Self.authorize(status, to: target), landing: "/landing")
                    Self.check(requests, leavingAt: 1, "\(status) to \(target)")
                    XCTAssertTrue(trace.events.contains { $0.name == "device-credential-kept" }, "\(status) to \(target): not traced")
                }
            }
        }
    }

    /// A hop on the registered origin keeps the credential's load; the hop after it, off the
    /// origin, does not take the credential along.
    func testAHopOnTheOriginThenOffItDoesNotCarryTheCredentialOff() throws {
        try MainActor.assumeIsolated {
            let off = "http://127.0.0.1:\(Self.elsewhere)/landing"
            let hop = "/hop?status=307&to=" + (off.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? off)
            let (requests, _) = try Self.signIn(start: Self.authorize(302, to: hop), landing: "/landing")
            XCTAssertEqual(requests.dropFirst().first?.path, "/hop", requests.map(\.description).joined(separator: "\n"))
            Self.check(requests, leavingAt: 2, "302 on the origin, then 307 off it")
        }
    }

    /// Entra sends a federated domain's user (`domain_hint`) straight to the domain's own
    /// provider (AD FS) on another host: the provider never sees the credential.
    func testAFederatedDomainsHopDoesNotCarryTheCredential() throws {
        try MainActor.assumeIsolated {
            let federation = "http://localhost:\(Self.elsewhere)/adfs/ls/?wa=wsignin1.0&wtrealm=urn:federation:MicrosoftOnline"
            let (requests, trace) = try Self.signIn(
                start: Self.authorize(302, to: federation, extra: [URLQueryItem(name: "domain_hint", value: "fabrikam.example")]),
                landing: "/adfs/ls")
            Self.check(requests, leavingAt: 1, "a federated domain's hop")
            XCTAssertTrue(requests.contains { $0.path == "/adfs/ls/" && $0.port == Self.elsewhere })
            XCTAssertFalse(trace.events.map(\.jsonLine).joined().contains(Self.credential), "the credential reached the trace")
        }
    }

    /// A redirect that stays on the registered origin (another path) is followed as before.
    func testARedirectOnTheOriginIsFollowed() throws {
        try MainActor.assumeIsolated {
            let (requests, _) = try Self.signIn(start: Self.authorize(302, to: "/landing"), landing: "/landing")
            XCTAssertEqual(requests.first?.credential, Self.credential)
            XCTAssertEqual(requests.map(\.path), ["/authorize", "/landing"], requests.map(\.description).joined(separator: "\n"))
        }
    }

    /// The window's sign-in view as the store's user agent, with this computer's credential.
    final class ViewAgent: SignInUserAgent {
        let view: SignInView
        init(view: SignInView) { self.view = view }
        func present(_ session: SignInSession) async throws {
            await MainActor.run { view.begin(session, deviceCredential: Secret(DeviceCredentialRedirectTests.credential)) }
        }
        func dismiss(_ session: SignInSession) async { await MainActor.run { view.end() } }
    }

    /// Another scheme: the registered origin over HTTPS (the emulator, its own authority's
    /// certificate trusted by this view for its host) answers 302 to plain http on loopback (its
    /// sign-out's `post_logout_redirect_uri`, another port too): that page never sees the credential.
    func testARedirectFromHTTPSToPlainHTTPDoesNotCarryTheCredential() throws {
        let state = Repository.temporaryDirectory("sesame-credential-tls")
        let emulator = try RunningEmulator.startBlocking(users: 10) { configuration in
            configuration.tls = true
            configuration.stateDirectory = state
        }
        defer {
            emulator.stop()
            try? FileManager.default.removeItem(at: state)
        }
        try MainActor.assumeIsolated {
            let before = Self.log.requests.count
            let host = try XCTUnwrap(emulator.base.host)
            let context = WebContext(dataDirectory: nil, automation: false)
            XCTAssertTrue(context.trust(certificateFile: state.appending(path: "server-certificate.pem"), forHost: host))
            let trace = try FlowTrace(file: nil)
            let view = SignInView(dataDirectory: nil, trace: trace, context: context)
            let window = Window(application: nil, title: "credential", width: 800, height: 600)
            window.setContent(view.root)
            window.showAll()
            defer { window.destroy() }
            let plain = "http://127.0.0.1:\(Self.elsewhere)/"
            var start = URLComponents(url: emulator.base.appending(path: "common/oauth2/v2.0/logout"), resolvingAgainstBaseURL: false)!
            start.queryItems = [URLQueryItem(name: "post_logout_redirect_uri", value: plain)]
            XCTAssertEqual(start.url?.scheme, "https")
            let configuration = AccountConfiguration(
                clientID: "6731de76-14a6-49ae-97bc-6eba6914391e", scopes: ["openid"], authorizationURL: start.url!,
                tokenURL: start.url!, redirectURL: URL(string: "https://login.microsoftonline.com/common/oauth2/nativeclient")!,
                storageGroup: "credential")
            let store = AccountStore(storage: FileTokenStorage(directory: Repository.temporaryDirectory("sesame-credential")))
            let agent = ViewAgent(view: view)
            let signIn = Task {
                await store.setConfiguration(configuration, forAccountType: "test")
                _ = try? await store.signIn(accountType: "test", using: agent)
            }
            defer { signIn.cancel() }
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 15) {
                    guard let shown = view.webView.uri.flatMap(URL.init(string:)), shown.port == Self.elsewhere else { return false }
                    return trace.events.contains {
                        $0.name == "page-loaded" && $0.fields.contains { $0 == ("url", FlowTrace.redacted(shown)) }
                    }
                }, "the view never showed \(plain); it shows \(view.webView.uri ?? "nothing"): \(trace.events.map(\.jsonLine))")
            let requests = Self.log.requests.dropFirst(before)
            let listed = requests.map(\.description).joined(separator: "\n")
            XCTAssertTrue(requests.contains { $0.port == Self.elsewhere && $0.path == "/" }, listed)
            for request in requests { XCTAssertNil(request.credential, "the credential went to \(request):\n\(listed)") }
            XCTAssertTrue(trace.events.contains { $0.name == "device-credential-kept" }, "not traced")
        }
    }
}
