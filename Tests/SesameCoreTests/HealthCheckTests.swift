import Foundation
import SesameCoreTestSupport
import Testing

@testable import SesameCore

/// `sesame doctor`'s checks without a process or a network: a fake provider behind a fake
/// transport, a fixed proxy route, and a certificate inspector that says what the test wants.
@Suite("Health check")
struct HealthCheckTests {
    static let issuer = "https://id.example.org"
    static let discovery = URL(string: "https://id.example.org/.well-known/openid-configuration")!

    /// Answers every certificate question the same way, and counts the questions.
    final class FakeInspector: CertificateInspector, @unchecked Sendable {
        let answer: CertificateInspection
        private let lock = NSLock()
        private var asked: [(String, Int, ProxyRoute)] = []
        init(_ answer: CertificateInspection) { self.answer = answer }
        var questions: [(String, Int, ProxyRoute)] { lock.withLock { asked } }
        func inspect(host: String, port: Int, route: ProxyRoute) async -> CertificateInspection {
            lock.withLock { asked.append((host, port, route)) }
            return answer
        }
    }

    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    /// A provider at id.example.org whose answers carry a `Date` `skew` seconds off `now`.
    static func provider(now: Date, skew: TimeInterval = 0, tokenEndpoint: String = "https://id.example.org/token") -> FakeTransport {
        FakeTransport { request in
            let date = ["Content-Type": "application/json", "Date": httpDate(now.addingTimeInterval(skew))] as HTTPHeaders
            switch request.url.path {
            case "/.well-known/openid-configuration":
                return json(
                    [
                        "issuer": issuer, "jwks_uri": "https://keys.example.org/jwks",
                        "authorization_endpoint": "https://id.example.org/authorize", "token_endpoint": tokenEndpoint,
                    ], headers: date)
            case "/jwks": return json(["keys": [["kty": "RSA", "kid": "k1", "n": "AQAB", "e": "AQAB"]]], headers: date)
            // The sign-in page, for the app registration's check.
            case "/authorize": return HTTPResponse(status: 200, headers: date, body: Data("<html><title>Sign in</title></html>".utf8))
            default: return HTTPResponse(status: 404, headers: date)
            }
        }
    }

    /// An OpenID provider's settings with a secret: discovery names the endpoints.
    static let openIDFile = try! SettingsFile.parse(
        Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
              <key>clientID</key><string>sesame-desktop</string>
              <key>clientSecret</key><string>not-a-real-secret-4711</string>
              <key>discoveryURL</key><string>\(discovery.absoluteString)</string>
            </dict></plist>
            """.utf8), file: "openid.plist")

    static let proxy = ProxyRoute.http(ProxyServer(host: "proxy.example", port: 3128, username: "alice", password: Secret("pw-4711")))

    func outcome(_ diagnosis: Diagnosis, _ subject: Diagnosis.Subject) -> Diagnosis.Outcome? {
        diagnosis.findings.first { $0.subject == subject }?.outcome
    }

    @Test("a healthy provider: every finding OK, each host's route, the issuer, discovered endpoints, Basic authentication")
    func healthy() async throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let inspector = FakeInspector(.trusted(issuer: CertificateIssuer(commonName: "Example CA", organization: "Example")))
        let check = HealthCheck(
            transport: Self.provider(now: now, skew: 30), proxyResolver: FixedProxyResolver(Self.proxy), certificates: inspector,
            now: { now })
        let diagnosis = await check.diagnose(Self.openIDFile)
        #expect(diagnosis.isHealthy, "\(diagnosis.findings)")
        #expect(diagnosis.accountType == "openid" && diagnosis.shape == .openID && diagnosis.settingsFile == "openid.plist")
        guard case .ok(.route(let route, let roles)) = outcome(diagnosis, .proxy(host: "id.example.org")) else {
            Issue.record("no route for id.example.org: \(diagnosis.findings)")
            return
        }
        #expect(route == Self.proxy)
        #expect(roles == [.authorization, .token, .discovery])
        #expect("\(route)" == "http://•••@proxy.example:3128")
        guard case .ok(.route(_, let keyRoles)) = outcome(diagnosis, .proxy(host: "keys.example.org")) else {
            Issue.record("no route for keys.example.org")
            return
        }
        #expect(keyRoles == [.signingKeys])
        // One handshake per identity host, through its route.
        #expect(inspector.questions.map(\.0) == ["id.example.org", "keys.example.org"])
        #expect(inspector.questions.allSatisfy { $0.1 == 443 && $0.2 == Self.proxy })
        guard case .ok(.endpoint(let token, .discovery)) = outcome(diagnosis, .endpoint(.token)) else {
            Issue.record("the token endpoint is not discovery's")
            return
        }
        #expect(token.absoluteString == "https://id.example.org/token")
        guard case .ok(.clientAuthentication(.clientSecretBasic)) = outcome(diagnosis, .clientAuthentication) else {
            Issue.record("not Basic, as discovery's silence says")
            return
        }
        guard case .ok(.clockAgrees(let offset)) = outcome(diagnosis, .clock) else {
            Issue.record("the clock")
            return
        }
        #expect(offset == 30)
        guard case .ok(.fetched(_, _, let summary)) = outcome(diagnosis, .discovery(Self.discovery)) else {
            Issue.record("discovery")
            return
        }
        #expect(summary == "issuer https://id.example.org")
    }

    @Test("a service whose Date is ten minutes ahead: this computer's clock is ten minutes behind")
    func clockSkew() async throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let check = HealthCheck(
            transport: Self.provider(now: now, skew: 600), proxyResolver: FixedProxyResolver(.direct),
            certificates: FakeInspector(.trusted(issuer: CertificateIssuer(commonName: "CA", organization: nil))), now: { now })
        let diagnosis = await check.diagnose(Self.openIDFile)
        #expect(!diagnosis.isHealthy)
        guard case .problem(.clockSkew(let offset)) = outcome(diagnosis, .clock) else {
            Issue.record("no skew: \(diagnosis.findings)")
            return
        }
        #expect(offset == 600)
    }

    @Test("discovery unreachable: the transport's failure, the rest not checked, no handshake with a host that cannot be reached")
    func unreachable() async throws {
        let failure = HTTPTransportError(url: Self.discovery, reason: "no such host", kind: .noSuchHost)
        let inspector = FakeInspector(.trusted(issuer: CertificateIssuer(commonName: "CA", organization: nil)))
        let check = HealthCheck(
            transport: FakeTransport { _ in throw failure }, proxyResolver: FixedProxyResolver(.direct), certificates: inspector)
        let diagnosis = await check.diagnose(Self.openIDFile)
        #expect(!diagnosis.isHealthy)
        guard case .problem(.transport(let seen)) = outcome(diagnosis, .discovery(Self.discovery)) else {
            Issue.record("discovery: \(diagnosis.findings)")
            return
        }
        #expect(seen.kind == .noSuchHost)
        #expect(inspector.questions.isEmpty)
        guard case .notChecked(.unreachable) = outcome(diagnosis, .certificate(host: "id.example.org")),
            case .notChecked(.discoveryFailed) = outcome(diagnosis, .endpoint(.token)),
            case .notChecked(.discoveryFailed) = outcome(diagnosis, .clientAuthentication),
            case .notChecked(.discoveryFailed) = outcome(diagnosis, .clock)
        else {
            Issue.record("\(diagnosis.findings)")
            return
        }
    }

    @Test("a discovered token endpoint on plain http elsewhere is the store's own refusal")
    func insecureDiscoveredEndpoint() async throws {
        let now = Date()
        let check = HealthCheck(
            transport: Self.provider(now: now, tokenEndpoint: "http://collector.example/token"), proxyResolver: FixedProxyResolver(.direct),
            certificates: FakeInspector(.trusted(issuer: CertificateIssuer(commonName: "CA", organization: nil))), now: { now })
        let diagnosis = await check.diagnose(Self.openIDFile)
        guard case .problem(.configuration(let error)) = outcome(diagnosis, .endpoint(.token)) else {
            Issue.record("\(diagnosis.findings)")
            return
        }
        #expect(error.message.contains("token_endpoint") && error.message.contains("not an https address"))
    }

    @Test("an untrusted certificate is a problem that names its issuer; a settings warning is one too")
    func untrustedAndWarnings() async throws {
        let now = Date()
        let failure = HTTPTransportError(url: Self.discovery, reason: "untrusted", kind: .untrustedCertificate)
        let issuer = CertificateIssuer(commonName: "Contoso Inspection CA", organization: "Contoso\u{1B}[31m")
        let file = try SettingsFile.parse(
            Data(
                """
                <plist version="1.0"><dict>
                  <key>clientID</key><string>sesame-desktop</string>
                  <key>discoveryURL</key><string>\(Self.discovery.absoluteString)</string>
                  <key>discoveryUrl</key><string>\(Self.discovery.absoluteString)</string>
                </dict></plist>
                """.utf8), file: "openid.plist")
        let check = HealthCheck(
            transport: Self.provider(now: now), proxyResolver: FixedProxyResolver(.direct),
            certificates: FakeInspector(.untrusted(failure, issuer: issuer)), now: { now })
        let diagnosis = await check.diagnose(file)
        guard case .problem(.untrustedCertificate(_, let seen?)) = outcome(diagnosis, .certificate(host: "id.example.org")) else {
            Issue.record("\(diagnosis.findings)")
            return
        }
        // What the server put in its certificate reaches a terminal without its control characters.
        #expect("\(seen)" == "CN=Contoso Inspection CA, O=Contoso[31m")
        guard case .problem(.settingsWarnings(let warnings)) = outcome(diagnosis, .settings) else {
            Issue.record("no settings warning")
            return
        }
        #expect(warnings.map(\.suggestion) == ["discoveryURL"])
    }

    @Test("HTTP's Date header: IMF-fixdate only, every field in range")
    func httpDates() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        for bad in [
            "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 31 Feb 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 25:49:37 GMT", "", String(repeating: "9", count: 100_000),
        ] {
            #expect(HTTPDate.parse(bad) == nil, "\(bad.prefix(40))")
        }
    }
}
