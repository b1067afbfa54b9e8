import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import SesameTestSupport
import Testing

@testable import IdentityEmulator

/// The real executable on a free port: its command-line contract, TLS, the wire, and Microsoft's
/// own MSAL library against it.
@Suite("identity-emulator on the wire", .serialized)
struct WireTests {
    @Test("the first line names the base URL; with --tls the second names the CA, and HTTPS verifies against it")
    func commandLineContractAndTLS() async throws {
        let state = Repository.temporaryDirectory("identity-emulator")
        defer { try? FileManager.default.removeItem(at: state) }
        let emulator = try EmulatorProcess(["--port", "0", "--tls", "--state-dir", state.path, "--users", "50"])
        defer { emulator.stop() }
        let first = try #require(emulator.readLine())
        #expect(
            first.range(of: #"^identity-emulator listening on https://127\.0\.0\.1:\d+$"#, options: .regularExpression) != nil, "\(first)")
        let second = try #require(emulator.readLine())
        #expect(second == "ca-certificate \(state.appending(path: "ca-certificate.pem").path)")
        let base = String(first.split(separator: " ").last!)

        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(state.appending(path: "ca-certificate.pem").path)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        do {
            let response = try await client.execute(
                HTTPClientRequest(url: "\(base)/common/v2.0/.well-known/openid-configuration"), timeout: .seconds(10))
            #expect(response.status.code == 200)
            let body = String(buffer: try await response.body.collect(upTo: 1 << 20))
            #expect(body.contains(#""issuer":"\#(base)/{tenantid}/v2.0""#))
        } catch {
            Issue.record("HTTPS with the emulator's CA failed: \(error)")
        }
        try await client.shutdown()

        // Without the CA, a client refuses the server: TLS is real, not bypassed.
        let strict = HTTPClient(eventLoopGroupProvider: .singleton)
        await #expect(throws: (any Error).self) {
            _ = try await strict.execute(
                HTTPClientRequest(url: "\(base)/common/v2.0/.well-known/openid-configuration"), timeout: .seconds(10))
        }
        try await strict.shutdown()
    }

    @Test("the /.emulator/ controls answer programs, not web pages: another Origin, a cross-site fetch or a rebound name is refused")
    func controlsRefuseWebPages() async throws {
        let emulator = try EmulatorProcess(["--port", "0", "--users", "10"])
        defer { emulator.stop() }
        let base = String(try #require(emulator.readLine()).split(separator: " ").last!)
        let port = try #require(URL(string: base)?.port)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        func post(_ path: String, _ headers: [(String, String)]) async throws -> (Int, String) {
            var request = HTTPClientRequest(url: base + path)
            request.method = .POST
            for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
            let response = try await client.execute(request, timeout: .seconds(10))
            return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 1 << 16)))
        }
        let path = "/.emulator/users/alex@contoso.onmicrosoft.com/revokeSignInSessions"
        do {
            try await Self.controlRequests(post, path: path, port: port)
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    private static func controlRequests(
        _ post: (String, [(String, String)]) async throws -> (Int, String), path: String, port: Int
    ) async throws {
        // A web page's form post carries its Origin; a browser's fetch says cross-site.
        let (fromPage, said) = try await post(path, [("Origin", "https://evil.example")])
        #expect(fromPage == 403)
        #expect(said.contains("web pages"))
        #expect(try await post(path, [("Origin", "null")]).0 == 403)
        #expect(try await post(path, [("Sec-Fetch-Site", "cross-site")]).0 == 403)
        // A page whose own name was rebound to 127.0.0.1: same "origin", another host name.
        #expect(try await post(path, [("Host", "evil.example:\(port)"), ("Origin", "http://evil.example:\(port)")]).0 == 403)
        // The harness's own requests, and the emulator's own pages, go through.
        #expect(try await post(path, []).0 == 200)
        #expect(try await post(path, [("Origin", "http://127.0.0.1:\(port)"), ("Sec-Fetch-Site", "same-origin")]).0 == 200)
    }

    @Test("a bad --client is refused with a message that says what to write")
    func badClientOption() throws {
        let emulator = try EmulatorProcess(["--client", "just-an-id"])
        emulator.waitUntilExit()
        #expect(emulator.terminationStatus != 0)
        #expect(emulator.standardError.contains("--client needs ID=REDIRECT_URI"))
    }

    @Test("megan's SMS code is printed on stdout as `mfa-code <user> <code>`, and a reason phrase crosses the wire")
    func mfaCodeLine() async throws {
        let emulator = try EmulatorProcess(["--port", "0", "--users", "20"])
        defer { emulator.stop() }
        let base = String(try #require(emulator.readLine()).split(separator: " ").last!)
        let client = HTTPClient.shared
        let authorize =
            "\(base)/contoso.onmicrosoft.com/oauth2/v2.0/authorize?client_id=\(Clients.directory)&response_type=code"
            + "&redirect_uri=\(FormFields.encode(Clients.nativeClient))&scope=openid"
        let page = String(
            buffer: try await client.execute(HTTPClientRequest(url: authorize), timeout: .seconds(10)).body.collect(upTo: 1 << 20))
        let ctx = try #require(
            page.range(of: #"name="ctx" value="[^"]*""#, options: .regularExpression).map { page[$0].split(separator: "\"")[3] })
        for form in ["step=username&loginfmt=megan%40contoso.onmicrosoft.com", "step=password&passwd=Passw0rd%21"] {
            var request = HTTPClientRequest(url: "\(base)/contoso.onmicrosoft.com/login")
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: "ctx=\(ctx)&\(form)"))
            _ = try await client.execute(request, timeout: .seconds(10)).body.collect(upTo: 1 << 20)
        }
        let line = try #require(emulator.readLine())
        #expect(line.range(of: #"^mfa-code megan@contoso\.onmicrosoft\.com \d{6}$"#, options: .regularExpression) != nil, "\(line)")

        var tasks = HTTPClientRequest(url: "\(base)/api/tasks")
        tasks.headers.add(name: "Authorization", value: "Bearer not-a-token")
        let refused = try await client.execute(tasks, timeout: .seconds(10))
        #expect(refused.status.code == 401)
    }

    @Test("pat signs in through Fabrikam's AD FS over sockets and TLS: https://localhost:PORT/adfs/ls/, then 127.0.0.1's /login.srf")
    func federatedSignInOverSockets() async throws {
        let state = Repository.temporaryDirectory("identity-emulator")
        defer { try? FileManager.default.removeItem(at: state) }
        let emulator = try EmulatorProcess(["--port", "0", "--tls", "--state-dir", state.path, "--users", "20"])
        defer { emulator.stop() }
        let base = String(try #require(emulator.readLine()).split(separator: " ").last!)
        let ca = String(try #require(emulator.readLine()).dropFirst("ca-certificate ".count))
        let port = try #require(URL(string: base)?.port)

        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(ca)
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls, redirectConfiguration: .disallow))
        let browser = HeadlessBrowser.sockets(base: try #require(URL(string: base)), codes: OneTimeCodes(), client: client)
        let authorize =
            "\(base)/contoso.onmicrosoft.com/oauth2/v2.0/authorize?client_id=\(Clients.directory)&response_type=code"
            + "&redirect_uri=\(FormFields.encode(Clients.nativeClient))&scope=openid+profile+User.Read"
            + "&code_challenge=\(ProofKey.challenge)&code_challenge_method=S256"
        let tokens: HeadlessBrowser.Page
        do {
            let redirect = try await browser.signIn("pat@fabrikam.example", authorize: authorize)
            let code = try #require(redirect.redirectFields["code"], "\(redirect.status) \(redirect.text.prefix(400))")
            tokens = try await browser.post(
                "\(base)/contoso.onmicrosoft.com/oauth2/v2.0/token",
                form: [
                    ("client_id", Clients.directory), ("grant_type", "authorization_code"), ("code", code),
                    ("redirect_uri", Clients.nativeClient), ("code_verifier", ProofKey.verifier),
                ])
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()

        let trace = browser.visited
        #expect(trace.contains { $0.hasPrefix("https://localhost:\(port)/adfs/ls/?wa=wsignin1.0&wtrealm=") }, "\(trace)")
        #expect(trace.contains("\(base)/login.srf"), "\(trace)")
        let (_, claims) = try jwtParts(try #require(tokens.json["id_token"] as? String, "\(tokens.text)"))
        #expect(claims["preferred_username"] as? String == "pat@fabrikam.example")
        // The provider's signing key is kept with the emulator's other state.
        #expect(FileManager.default.fileExists(atPath: state.appending(path: "federation-signing-key.pem").path))
    }

    @Test(
        "Microsoft's MSAL for Python: auth code + PKCE + nonce + client_info, a silent token, a refresh, a device code sign-in")
    func msalPython() async throws {
        let python = try Repository.python()
        let state = Repository.temporaryDirectory("identity-emulator")
        defer { try? FileManager.default.removeItem(at: state) }
        let clientID = "5e1d7f10-3c2b-4b7a-9f0e-0d1c2b3a4f5e"
        let emulator = try EmulatorProcess([
            "--port", "0", "--tls", "--state-dir", state.path, "--users", "50", "--client", "\(clientID)=http://localhost",
            "--device-code-interval", "1",
        ])
        defer { emulator.stop() }
        let base = String(try #require(emulator.readLine()).split(separator: " ").last!)
        let ca = String(try #require(emulator.readLine()).dropFirst("ca-certificate ".count))

        var environment = ProcessInfo.processInfo.environment
        environment["EMULATOR_URL"] = base
        environment["REQUESTS_CA_BUNDLE"] = ca
        let run = try ProcessRunner.run(
            python, [Repository.root.appending(path: "Tests/IdentityEmulatorTests/MSAL/msal_sign_in.py").path, clientID],
            environment: environment)
        #expect(run.status == 0, "MSAL: \(run.stderr)")
        let result = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stderr)")
        #expect(result["signed_in"] as? String == "alex@contoso.onmicrosoft.com")
        #expect(result["home_account_id"] as? String == "4c1b9a54-7f4e-4f2b-9a5f-2a0c6c1d7e01.\(Tenant.contoso.id)")
        #expect(result["silent_source"] as? String == "cache")
        #expect(result["refreshed_source"] as? String == "identity_provider")
        #expect(result["me_status"] as? Int == 200)
        #expect(result["me"] as? String == "Alex Wilber")
        #expect(result["device_code_signed_in"] as? String == "alex@contoso.onmicrosoft.com")
    }
}
