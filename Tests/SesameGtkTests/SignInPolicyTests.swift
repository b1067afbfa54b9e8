import Foundation
import Hummingbird
import IdentityEmulator
import SesameGIO
import SesameSamples
import SesameService
import SesameTestSupport
import SesameWindowModel
import XCTest

@testable import SesameCore
@testable import SesameGtk

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The sign-in view's `decide-policy` handler in a real WebKitWebView: it catches the redirect
/// however it arrives (a server 302, a JavaScript navigation), ignores it so it never loads, hides
/// the view and hands the URL over — and lets look-alikes through.
///
/// XCTest on Linux calls test methods as nonisolated functions on the main thread; each test
/// enters the main actor with `MainActor.assumeIsolated`.
final class SignInPolicyTests: GUITestCase {
    /// A local site: `/redirect?to=URL` answers 302 to URL, `/script?to=URL` navigates there from
    /// JavaScript, `/callback` counts hits (it must never be loaded).
    final class TestSite: @unchecked Sendable {
        let base: URL
        private let lock = NSLock()
        private var _callbackHits = 0
        var callbackHits: Int { lock.withLock { _callbackHits } }
        private var task: Task<Void, any Error>?

        init() throws {
            let router = Router()
            let hits = Counter()
            router.get("/redirect") { request, _ -> Response in
                Response(status: .found, headers: [.location: Self.target("to", of: request)])
            }
            router.get("/script") { request, _ -> Response in
                let html =
                    "<!DOCTYPE html><html><body><p>Redirecting…</p><script>setTimeout(function(){ window.location.href = "
                    + "\(Self.jsString(Self.target("to", of: request))); }, 50);</script></body></html>"
                return Response(status: .ok, headers: [.contentType: "text/html"], body: .init(byteBuffer: ByteBuffer(string: html)))
            }
            // A page of the flow that navigates to `first`, then (the page still there) to `then`.
            router.get("/twice") { request, _ -> Response in
                let html =
                    "<!DOCTYPE html><html><body><p>Redirecting twice…</p><script>"
                    + "setTimeout(function(){ window.location.href = \(Self.jsString(Self.target("first", of: request))); }, 50);"
                    + "setTimeout(function(){ window.location.href = \(Self.jsString(Self.target("then", of: request))); }, 800);"
                    + "</script></body></html>"
                return Response(status: .ok, headers: [.contentType: "text/html"], body: .init(byteBuffer: ByteBuffer(string: html)))
            }
            router.get("/callback") { _, _ -> Response in
                hits.increment()
                return Response(
                    status: .ok, headers: [.contentType: "text/html"], body: .init(byteBuffer: ByteBuffer(string: "<p>loaded</p>")))
            }
            router.get("/download") { _, _ -> Response in
                Response(
                    status: .ok,
                    headers: [.contentType: "application/octet-stream", .contentDisposition: "attachment; filename=\"x.bin\""],
                    body: .init(byteBuffer: ByteBuffer(string: "not for your disk")))
            }
            router.get("/forbidden") { _, _ -> Response in
                Response(
                    status: .forbidden, headers: [.contentType: "text/html"],
                    body: .init(byteBuffer: ByteBuffer(string: "<title>403</title><p>Error 403: disallowed_useragent</p>")))
            }
            router.get("/page") { _, _ -> Response in
                Response(status: .ok, headers: [.contentType: "text/html"], body: .init(byteBuffer: ByteBuffer(string: "<p>a page</p>")))
            }
            let ready = DispatchSemaphore(value: 0)
            let port = Counter()
            let app = Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { channel in
                    port.set(channel.localAddress?.port ?? 0)
                    ready.signal()
                })
            task = Task { try await app.runService(gracefulShutdownSignals: []) }
            ready.wait()
            base = URL(string: "http://127.0.0.1:\(port.value)")!
            self.hits = hits
        }

        private let hits: Counter
        var callbackCount: Int { hits.value }

        deinit { task?.cancel() }

        /// Fetches a page of the site from the test itself (not through the view) and waits.
        func get(_ path: String) throws {
            final class Outcome: @unchecked Sendable { var error: (any Error)? }
            let outcome = Outcome()
            let done = DispatchSemaphore(value: 0)
            URLSession.shared.dataTask(with: base.appending(path: path)) { _, _, error in
                outcome.error = error
                done.signal()
            }.resume()
            guard done.wait(timeout: .now() + 15) == .success else { throw URLError(.timedOut) }
            if let error = outcome.error { throw error }
        }

        /// The address a query parameter names, with `{state}` replaced by the `state` the sign-in
        /// put on the request (the authorization URL is the site's page with the request's
        /// parameters): so a test's redirect answers the sign-in that asked.
        static func target(_ name: String, of request: Request) -> String {
            let target = request.uri.queryParameters[Substring(name)].map(String.init) ?? "/"
            let state = request.uri.queryParameters["state"].map(String.init) ?? ""
            return target.replacingOccurrences(of: "{state}", with: state)
        }

        static func jsString(_ text: String) -> String {
            "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        }
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var _value = 0
        var value: Int { lock.withLock { _value } }
        func increment() { lock.withLock { _value += 1 } }
        func set(_ value: Int) { lock.withLock { _value = value } }
    }

    /// One site for the whole class (started on first use).
    nonisolated(unsafe) static var shared: TestSite?
    static var site: TestSite {
        if let site = Self.shared { return site }
        let site = try! TestSite()
        Self.shared = site
        return site
    }

    static func url(_ path: String, to target: String) -> URL {
        var components = URLComponents(url: site.base.appending(path: path), resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "to", value: target)]
        return components.url!
    }

    /// The page title the last run ended on.
    nonisolated(unsafe) static var lastTitle: String?

    /// The window's sign-in pane as the store's user agent, remembering the sessions it showed.
    final class RecordingAgent: SignInUserAgent {
        let pane: SignInPane
        nonisolated(unsafe) var sessions: [SignInSession] = []
        nonisolated(unsafe) var dismissed = 0
        init(pane: SignInPane) { self.pane = pane }
        func present(_ session: SignInSession) async throws {
            await MainActor.run { sessions.append(session) }
            try await pane.present(session)
        }
        func dismiss(_ session: SignInSession) async {
            await pane.dismiss(session)
            await MainActor.run { dismissed += 1 }
        }
    }

    /// Starts a sign-in whose authorization URL is `start` and whose redirect URI is `redirect`,
    /// in the window's real sign-in pane, and spins the loop until the session caught its
    /// redirect and the store dismissed the pane (the only thing that hides it), or until `settled` says the view got where it was going without one (a page
    /// loaded, sign-in failed); `timeout` only bounds a step that never happens.
    @MainActor
    static func run(
        start: URL, redirect: URL, timeout: TimeInterval = 15, settled: @escaping (FlowTrace, WebView) -> Bool = { _, _ in false }
    ) throws -> (intercepted: URL?, shown: Bool, trace: FlowTrace) {
        try runShowing(start: start, redirect: redirect, timeout: timeout, settled: settled).outcome
    }

    /// As ``run(start:redirect:timeout:settled:)``, and whether "Continue in your browser" was
    /// offered prominently at the end.
    @MainActor
    static func runShowing(
        start: URL, redirect: URL, timeout: TimeInterval = 15, settled: @escaping (FlowTrace, WebView) -> Bool = { _, _ in false }
    ) throws -> (outcome: (intercepted: URL?, shown: Bool, trace: FlowTrace), suggestsBrowser: Bool) {
        let trace = try FlowTrace(file: nil)
        let pane = SignInPane(trace: trace, webDataDirectory: nil, automation: false)
        // As the window does, at once: it leaves sign-in (after a redirect, once the data is in).
        pane.onHide = { [weak pane] afterRedirect in if afterRedirect { pane?.left() } }
        let window = Window(application: nil, title: "policy", width: 800, height: 600)
        window.setContent(pane.root)
        window.showAll()
        defer { window.destroy() }

        let configuration = AccountConfiguration(
            clientID: "6731de76-14a6-49ae-97bc-6eba6914391e", scopes: ["openid"], authorizationURL: start,
            tokenURL: start, redirectURL: redirect, storageGroup: "tests")
        let store = AccountStore(storage: FileTokenStorage(directory: Repository.temporaryDirectory("sesame-policy")))
        let agent = RecordingAgent(pane: pane)
        let signIn = Task {
            await store.setConfiguration(configuration, forAccountType: "test")
            _ = try? await store.signIn(accountType: "test", using: agent)
        }
        defer { signIn.cancel() }
        XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { pane.view != nil }, "sign-in never showed")
        let view = try XCTUnwrap(pane.view)
        XCTAssertTrue(
            MainLoopBridge.spin(timeout: timeout) {
                (agent.sessions.first?.caughtRedirect != nil && agent.dismissed > 0) || settled(trace, view.webView)
            },
            "neither intercepted nor settled after \(timeout) s; the view shows \(view.webView.uri ?? "nothing")")
        lastTitle = view.webView.title
        return ((agent.sessions.first?.caughtRedirect, view.root.isVisible, trace), pane.suggestsBrowser)
    }

    /// A page that refuses the embedded browser (403, as Google's `disallowed_useragent`) makes
    /// "Continue in your browser" the suggested way on.
    func testAPageThatRefusesThisBrowserSuggestsTheSystemBrowser() throws {
        try MainActor.assumeIsolated {
            let nativeClient = "https://login.microsoftonline.com/common/oauth2/nativeclient"
            let ((intercepted, shown, trace), suggestsBrowser) = try Self.runShowing(
                start: Self.url("/forbidden", to: "/"), redirect: URL(string: nativeClient)!
            ) { trace, _ in trace.events.contains { $0.name == "page-loaded" } }
            XCTAssertNil(intercepted)
            XCTAssertTrue(shown)
            XCTAssertTrue(
                trace.events.contains { $0.name == "page-refused-this-browser" }, trace.events.map(\.jsonLine).joined(separator: "\n"))
            XCTAssertTrue(suggestsBrowser, "Continue in your browser is not offered prominently after a 403")
        }
    }

    func testServerRedirectToNativeClientIsInterceptedAndNeverLoaded() throws {
        try MainActor.assumeIsolated {
            let nativeClient = "https://login.microsoftonline.com/common/oauth2/nativeclient"
            let ((intercepted, shown, trace), suggestsBrowser) = try Self.runShowing(
                start: Self.url("/redirect", to: nativeClient + "?code=abc123&state={state}"), redirect: URL(string: nativeClient)!)
            XCTAssertFalse(suggestsBrowser, "a sign-in that works does not push the browser")
            let caught = try XCTUnwrap(intercepted, "the 302 to nativeclient was not intercepted")
            XCTAssertTrue(caught.absoluteString.hasPrefix(nativeClient + "?code=abc123&state="), caught.absoluteString)
            XCTAssertFalse(shown, "the view must hide when the redirect is intercepted")
            XCTAssertTrue(trace.events.contains { $0.name == "redirect-intercepted" })
            let intercept = try XCTUnwrap(
                trace.events.first { $0.name == "navigation" && $0.fields.contains { $0 == ("action", "intercept") } })
            XCTAssertTrue(intercept.fields.contains { $0 == ("kind", "redirect") })
            XCTAssertFalse(intercept.jsonLine.contains("abc123"), "trace must not carry the code")
        }
    }

    /// A page of the flow (a federated provider's, say) that navigates to the redirect URI with
    /// another `state` does not end the sign-in: the answer is neither loaded nor taken, the view
    /// stays, and the sign-in's own answer after it is.
    func testARedirectWithAnotherStateDoesNotEndTheSignIn() throws {
        try MainActor.assumeIsolated {
            let nativeClient = "https://login.microsoftonline.com/common/oauth2/nativeclient"
            var components = URLComponents(url: Self.site.base.appending(path: "twice"), resolvingAgainstBaseURL: false)!
            components.queryItems = [
                URLQueryItem(name: "first", value: nativeClient + "?code=planted&state=forged"),
                URLQueryItem(name: "then", value: nativeClient + "?code=own&state={state}"),
            ]
            var shownWhenIgnored: Bool?
            let (intercepted, _, trace) = try Self.run(start: components.url!, redirect: URL(string: nativeClient)!) { trace, view in
                if shownWhenIgnored == nil, trace.events.contains(where: { $0.name == "redirect-ignored" }) {
                    shownWhenIgnored = view.uri?.hasPrefix(Self.site.base.absoluteString) == true
                }
                return false
            }
            XCTAssertEqual(shownWhenIgnored, true, "the view left the page when the foreign answer came")
            let ignored = try XCTUnwrap(trace.events.first { $0.name == "redirect-ignored" }, "the foreign answer was not traced")
            XCTAssertTrue(ignored.fields.contains { $0 == ("reason", "wrong-state") })
            let caught = try XCTUnwrap(intercepted, "the sign-in's own answer was not taken")
            XCTAssertTrue(caught.absoluteString.contains("code=own"), "the foreign answer was taken")
            XCTAssertFalse(trace.events.map(\.jsonLine).joined().contains("planted"), "a code reached the trace")
        }
    }

    func testJavaScriptNavigationToOutOfBandURNIsIntercepted() throws {
        try MainActor.assumeIsolated {
            let urn = "urn:ietf:wg:oauth:2.0:oob"
            let (intercepted, shown, _) = try Self.run(
                start: Self.url("/script", to: urn + "?code=js456&state={state}"), redirect: URL(string: urn)!)
            let caught = try XCTUnwrap(intercepted, "the JavaScript navigation to urn:ietf:wg:oauth:2.0:oob was not intercepted")
            XCTAssertTrue(caught.absoluteString.hasPrefix(urn + "?code=js456&state="), caught.absoluteString)
            XCTAssertFalse(shown)
        }
    }

    func testRedirectOnALoadableHostIsNeverLoaded() throws {
        try MainActor.assumeIsolated {
            let callback = Self.site.base.appending(path: "callback").absoluteString
            let (intercepted, _, _) = try Self.run(
                start: Self.url("/redirect", to: callback + "?code=c789&state={state}"), redirect: URL(string: callback)!)
            XCTAssertNotNil(intercepted)
            // Had the view gone on to load the callback, the site would have answered it before any
            // later request: one more round trip to the site is the barrier.
            try Self.site.get("page")
            XCTAssertEqual(Self.site.callbackCount, 0, "the redirect URI's page was loaded")
        }
    }

    func testLookAlikesAreNotIntercepted() throws {
        try MainActor.assumeIsolated {
            let nativeClient = "https://login.microsoftonline.com/common/oauth2/nativeclient"
            let lookAlikes = [
                Self.site.base.appending(path: "page").absoluteString
                    + "?x=https://login.microsoftonline.com/common/oauth2/nativeclient?code=1",
                Self.site.base.appending(path: "page").absoluteString + "?redirect=urn:ietf:wg:oauth:2.0:oob?code=1",
                Self.site.base.appending(path: "common/oauth2/nativeclient").absoluteString + "?code=1",
            ]
            for lookAlike in lookAlikes {
                // A look-alike loads like any page: its page-loaded event settles the run.
                let (intercepted, _, trace) = try Self.run(
                    start: Self.url("/redirect", to: lookAlike), redirect: URL(string: nativeClient)!
                ) { trace, _ in
                    trace.events.contains { event in event.name == "page-loaded" && !event.jsonLine.contains("/redirect") }
                }
                XCTAssertNil(intercepted, "\(lookAlike) was intercepted")
                XCTAssertFalse(trace.events.contains { $0.name == "redirect-intercepted" }, lookAlike)
            }
        }
    }

    func testTheViewLoadsOnlyWhatSignInNeeds() throws {
        try MainActor.assumeIsolated {
            let redirect = URL(string: "https://login.microsoftonline.com/common/oauth2/nativeclient")!
            func refused(_ name: String) -> @MainActor (FlowTrace, WebView) -> Bool {
                { trace, _ in trace.events.contains { $0.name == name } }
            }
            // Other schemes, from a script or a server redirect: never loaded. WebKit itself stops
            // file: and a redirect to another scheme, and runs javascript: in the page; what reaches
            // the policy (data:, ftp:) is refused there.
            for (path, target, refusedHere) in [
                ("/script", "data:text/html,<p>planted</p>", true), ("/script", "ftp://example.invalid/x", true),
                ("/script", "file:///etc/passwd", false), ("/redirect", "file:///etc/passwd", false),
                ("/redirect", "ftp://example.invalid/x", false), ("/script", "javascript:void(0)//", false),
            ] {
                final class Quiet { var since: Date? }
                let quiet = Quiet()
                // Settled: refused here, or the start page's script had a second to navigate.
                let (intercepted, _, trace) = try Self.run(start: Self.url(path, to: target), redirect: redirect) { trace, view in
                    if trace.events.contains(where: { $0.name == "navigation-refused" }) { return true }
                    guard view.uri?.hasPrefix(Self.site.base.absoluteString) == true || view.uri?.isEmpty != false else { return false }
                    quiet.since = quiet.since ?? Date()
                    return Date().timeIntervalSince(quiet.since!) > 1.5
                }
                XCTAssertNil(intercepted)
                let scheme = String(target.prefix { $0 != ":" }) + ":"
                XCTAssertFalse(
                    trace.events.contains { $0.name == "page-loaded" && $0.fields.contains { $0.0 == "url" && $0.1.hasPrefix(scheme) } },
                    target)
                if refusedHere {
                    let refusal = trace.events.first { $0.name == "navigation-refused" }
                    XCTAssertTrue(refusal?.fields.contains { $0 == ("reason", "scheme") } == true, "\(path) → \(target) was not refused")
                }
            }
            // Unencrypted pages off this computer: refused with a page that says why.
            let (_, _, plain) = try Self.run(
                start: Self.url("/redirect", to: "http://login.example.invalid/authorize"), redirect: redirect,
                settled: { trace, view in
                    trace.events.contains { $0.name == "navigation-refused" } && view.title == L("This page is not encrypted")
                })
            XCTAssertTrue(
                plain.events.contains { $0.name == "navigation-refused" && $0.fields.contains { $0 == ("reason", "unencrypted") } })
            XCTAssertEqual(Self.lastTitle, L("This page is not encrypted"))
            // A download: not saved, not shown.
            let (_, _, download) = try Self.run(
                start: Self.site.base.appending(path: "download"), redirect: redirect, settled: refused("download-refused"))
            XCTAssertTrue(download.events.contains { $0.name == "download-refused" })
        }
    }

    func testALoadNobodyCancelledIsTriedOnceMoreBeforeTheUserSeesAFailure() {
        // WebKit sometimes ends a refused TLS handshake with GIO's "Operation was cancelled"
        // instead of its TLS signal (it failed CI once): the view loads the page once more, and
        // shows a failure only if that happens twice.
        let cancelled = GLibError(domain: "g-io-error-quark", code: GLibError.ioCancelled, message: "Operation was cancelled")
        XCTAssertEqual(SignInView.failure(of: cancelled), .cancelled)
        var state = SignInViewState()
        _ = state.begin(at: URL(string: "https://login.example/authorize")!)
        let page = URL(string: "https://login.example/login")!
        XCTAssertEqual(state.loadFailed(page, .cancelled), [.retry(page)])
        XCTAssertEqual(state.loadFailed(page, .cancelled), [.showUnreachable(page)])
        // Our own ignore of the redirect, and a page replaced by a newer one, are no failures.
        XCTAssertEqual(SignInView.failure(of: GLibError(domain: "WebKitPolicyError", code: 102, message: "")), .interrupted)
        XCTAssertEqual(SignInView.failure(of: GLibError(domain: "WebKitNetworkError", code: 302, message: "")), .interrupted)
        // A refused connection is shown at once.
        let refused = GLibError(domain: "g-io-error-quark", code: 39, message: "Could not connect: Connection refused")
        XCTAssertEqual(SignInView.failure(of: refused), .unreachable)
        // Told in Sesame's words, as every failed exchange is; GLib's own text is the detail.
        let url = URL(string: "http://127.0.0.1:9/authorize")!
        XCTAssertEqual(
            UserMessage.text(for: HTTPTransportError(url: url, reason: refused.message, kind: .init(loading: refused))),
            "127.0.0.1:9 refused the connection: nothing answers there. Check the address, or try again later.")
        let unknown = GLibError(
            domain: "g-resolver-error-quark", code: 0, message: "Error resolving “login.example”: Name or service not known")
        XCTAssertEqual(HTTPTransportError.Kind(loading: unknown), .noSuchHost)
        XCTAssertEqual(HTTPTransportError.Kind(loading: GLibError(domain: "WebKitNetworkError", code: 399, message: "")), .unreachable)
    }

    func testAnUntrustedCertificateStopsSignInWithAReadablePageAndIsNeverBypassed() throws {
        // An emulator serving HTTPS with its own local CA, which this web view does not trust.
        let state = Repository.temporaryDirectory("sesame-tls")
        let emulator = try RunningEmulator.startBlocking(users: 10) { configuration in
            configuration.tls = true
            configuration.stateDirectory = state
        }
        defer {
            emulator.stop()
            try? FileManager.default.removeItem(at: state)
        }
        let base = emulator.base
        try MainActor.assumeIsolated {
            let nativeClient = "https://login.microsoftonline.com/common/oauth2/nativeclient"
            let ((intercepted, shown, trace), suggestsBrowser) = try Self.runShowing(
                start: base.appending(path: "common/oauth2/v2.0/authorize"), redirect: URL(string: nativeClient)!
            ) { trace, view in
                // Settled once Sesame's own page, loaded in place of the refused one, has its title
                // (WebKit sets it a moment after the load ends).
                trace.events.contains { $0.name == "sign-in-failed" } && !(view.title ?? "").isEmpty
            }
            XCTAssertTrue(suggestsBrowser, "Continue in your browser is not offered prominently")
            XCTAssertNil(intercepted)
            XCTAssertTrue(shown, "the view stays to show why")
            let failure = try XCTUnwrap(trace.events.first { $0.name == "sign-in-failed" }, "no sign-in-failed event")
            XCTAssertTrue(failure.jsonLine.contains("TLS"), failure.jsonLine)
            XCTAssertTrue(failure.jsonLine.contains("does not trust"), failure.jsonLine)
            // What shows is Sesame's explanation, not the untrusted server's page.
            XCTAssertEqual(Self.lastTitle, "This connection is not secure", trace.events.map(\.jsonLine).joined(separator: "\n"))
        }
    }
}
