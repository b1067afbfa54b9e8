import Foundation
import Logging
import SesameCore
import SesameCoreTestSupport
import Testing

/// Collects every log line, formatted as a real handler would.
final class LogCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    var text: String { lock.withLock { lines.joined(separator: "\n") } }
    func append(_ line: String) { lock.withLock { lines.append(line) } }

    var logger: Logger {
        var logger = Logger(label: "sesame.redaction") { _ in CollectingHandler(collector: self) }
        logger.logLevel = .trace
        return logger
    }

    struct CollectingHandler: LogHandler {
        let collector: LogCollector
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            collector.append("\(event.level) \(event.message) \(metadata.merging(event.metadata ?? [:]) { $1 })")
        }
    }
}

@Suite("Secrets never reach text")
struct RedactionTests {
    @Test("a Secret prints <redacted> in every form")
    func secretForms() {
        let secret = Secret("eyJ0eXAiOiJKV1QiLCJub25jZSI6ImFiYyJ9.payload.signature")
        var dumped = ""
        dump(secret, to: &dumped)
        for text in [
            "\(secret)", String(describing: secret), String(reflecting: secret), dumped, "\([secret])", "\(Optional(secret) as Any)",
        ] {
            #expect(!text.contains("eyJ0"), "\(text)")
        }
        #expect("\(secret)" == "<redacted>")
        #expect(!secret.masked.contains("eyJ0"))
    }

    @Test("responses, requests and tokens describe themselves without secrets")
    func valueDescriptions() throws {
        let response = try JSONDecoder().decode(
            TokenResponse.self,
            from: Data(
                (#"{"access_token":"AT-SECRET","refresh_token":"RT-SECRET","id_token":"IDT-SECRET","#
                    + #""expires_in":"3600","token_type":"Bearer"}"#).utf8))
        let request = AuthorizationRequest(configuration: FakeIdentityProvider().configuration)
        var texts = ["\(response)", String(reflecting: response), "\(request)", "\(request.proofKey)"]
        var dumped = ""
        dump(response, to: &dumped)
        dump(request, to: &dumped)
        texts.append(dumped)
        for text in texts {
            for secret in [
                "AT-SECRET", "RT-SECRET", "IDT-SECRET", request.state.revealed, request.nonce.revealed, request.proofKey.verifier.revealed,
            ] {
                #expect(!text.contains(secret))
            }
        }
        #expect(
            URL(string: "https://x/cb?code=SECRET&state=S#t=T")!.redactingQuery
                == "https://x/cb?code=<redacted>&state=<redacted>#t=<redacted>")
    }

    @Test("a URL's nameless query or fragment parts and user info are redacted whole")
    func namelessParts() {
        #expect(URL(string: "https://x/cb#SECRET")!.redactingQuery == "https://x/cb#<redacted>")
        #expect(URL(string: "https://x/cb?SECRET&a=1&&")!.redactingQuery == "https://x/cb?<redacted>&a=<redacted>&&")
        #expect(URL(string: "https://user:PASS@x/cb")!.redactingQuery == "https://x/cb")
    }

    @Test("a request describes itself, in every form, without its body, its header values or its query values")
    func requestForms() {
        let request = HTTPRequest(
            method: "POST", url: URL(string: "https://login.example/token?x=QUERY-SECRET")!,
            headers: ["Authorization": "Bearer AT-SECRET", "Content-Type": "application/x-www-form-urlencoded"],
            body: Data("grant_type=refresh_token&refresh_token=RT-SECRET".utf8))
        var dumped = ""
        dump(request, to: &dumped)
        for text in ["\(request)", String(reflecting: request), dumped, "\([request])"] {
            for secret in ["QUERY-SECRET", "AT-SECRET", "RT-SECRET"] { #expect(!text.contains(secret), "\(text)") }
        }
        #expect("\(request)".hasPrefix("POST https://login.example/token?x=<redacted> headers: Authorization, Content-Type body: "))
    }

    @Test("a value holding a Secret cannot be encoded to JSON by accident (Secret is Decodable only)")
    func secretsAreNotEncodable() {
        #expect(!(Secret("RT-SECRET") as Any is any Encodable))
        #expect(!(RefreshTokenRequest.self as Any is any Encodable.Type))
    }

    @Test("a whole sign-in, refresh, refusal and API call logs no code, token, state, nonce or verifier")
    func logsStayClean() async throws {
        let collector = LogCollector()
        let fixture = StoreFixture(logger: collector.logger)
        defer { fixture.remove() }
        await fixture.configure()
        let agent = FakeUserAgent(provider: fixture.provider)
        let account = try await fixture.store.signIn(accountType: fixture.accountType, using: agent)
        let redirect = agent.answers[0].0
        let session = agent.presented[0]
        fixture.clock.advance(by: 7200)
        let token = try await fixture.store.accessToken(for: account)
        let client = AuthorizedHTTPClient(store: fixture.store, transport: fixture.provider.transport, logger: collector.logger)
        _ = try await client.perform(
            ResourceRequest(url: URL(string: "https://login.microsoftonline.com/x?secret=\(token.secret.revealed)")!), as: account)
        fixture.clock.advance(by: 7200)
        fixture.provider.refreshError = ["error": "invalid_grant", "error_description": "AADSTS700082: expired"]
        _ = try? await fixture.store.accessToken(for: account)
        // A forged redirect with a code in it is ignored (the user then closes the sign-in), and
        // nothing of it reaches the log.
        _ = try? await fixture.store.signIn(
            accountType: fixture.accountType,
            using: FakeUserAgent { _, _ in
                [
                    .navigate(
                        URL(string: "https://login.microsoftonline.com/common/oauth2/nativeclient?code=FORGED-CODE&state=FORGED-STATE")!),
                    .close,
                ]
            })

        let log = collector.text
        #expect(log.contains("signed in"))
        #expect(log.contains("refreshing"))
        let items = Dictionary(
            FormEncoding.decode(URLComponents(url: redirect, resolvingAgainstBaseURL: false)!.percentEncodedQuery!),
            uniquingKeysWith: { $1 })
        let pendingQuery = Dictionary(
            FormEncoding.decode(URLComponents(url: session.authorizationURL, resolvingAgainstBaseURL: false)!.percentEncodedQuery!),
            uniquingKeysWith: { $1 })
        let cache = try fixture.storedCache()
        var secrets = [
            items["code"]!, pendingQuery["state"]!, pendingQuery["nonce"]!, token.secret.revealed, "FORGED-CODE", "FORGED-STATE",
        ]
        secrets += cache.refreshTokens.values.map(\.secret.revealed) + cache.idTokens.values.map(\.secret.revealed)
        for request in fixture.provider.transport.requests {
            if let verifier = request.form["code_verifier"] { secrets.append(verifier) }
            if let refresh = request.form["refresh_token"] { secrets.append(refresh) }
        }
        for secret in secrets {
            #expect(!log.contains(secret), "a secret reached the log")
        }
    }
}

@Suite("Sign-in sessions")
struct SignInSessionTests {
    @Test("a session prints without its state, nonce or challenge; once cancelled, its redirect is not redeemed")
    func session() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await fixture.configure()
        let provider = fixture.provider
        let agent = FakeUserAgent { session, _ in
            let query = Dictionary(
                FormEncoding.decode(URLComponents(url: session.authorizationURL, resolvingAgainstBaseURL: false)!.percentEncodedQuery!),
                uniquingKeysWith: { $1 })
            var dumped = ""
            dump(session, to: &dumped)
            for text in ["\(session)", String(reflecting: session), dumped] {
                #expect(!text.contains(query["state"]!) && !text.contains(query["nonce"]!) && !text.contains(query["code_challenge"]!))
            }
            return [.close, .navigate(provider.redirect(for: session.authorizationURL))]
        }
        await #expect { try await fixture.store.signIn(accountType: fixture.accountType, using: agent) } throws: { error in
            (error as? AccountStoreError)?.code == .cancelled
        }
        #expect(fixture.provider.transport.requests.isEmpty)
    }
}
