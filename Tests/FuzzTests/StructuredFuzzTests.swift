import Foundation
import Testing

@testable import IdentityEmulator
@testable import SesameCore

/// A seeded structured fuzzer over everything Sesame reads from outside: each target starts from
/// its committed corpus (`Corpus/<target>/`) and feeds the parser mutations of it — bytes
/// flipped, cut, repeated and spliced, and tokens that break parsers (`1e300`, quotes, braces,
/// NUL, `%`, huge runs) — for `FUZZ_SECONDS` each (2 in `make test`, more in `make fuzz`), from
/// `FUZZ_SEED`. A trap ends the test process; the input that caused it is in
/// `.build/fuzz/<target>.current`, to add to the corpus once fixed.
@Suite("Structured fuzzing", .serialized)
struct StructuredFuzzTests {
    static let root = URL(filePath: #filePath).deletingLastPathComponent()
    static let seconds = Double(ProcessInfo.processInfo.environment["FUZZ_SECONDS"] ?? "") ?? 2
    static let seed = UInt64(ProcessInfo.processInfo.environment["FUZZ_SEED"] ?? "") ?? 1

    static let redirect = URL(string: "https://login.microsoftonline.com/common/oauth2/nativeclient")!

    @Test("redirect matching and classification", arguments: ["redirect"])
    func redirects(target: String) async throws {
        let matcher = RedirectMatcher(redirectURI: Self.redirect)
        let classifier = NavigationClassifier(configuration: Self.configuration)
        try await Self.fuzz(target) { data in
            let text = String(decoding: data, as: UTF8.self)
            _ = matcher.matches(text)
            if let url = URL(string: text) {
                _ = matcher.matches(url)
                _ = classifier.classify(url)
                _ = url.redactingQuery
            }
        }
    }

    @Test("authorization responses (the redirect's query)", arguments: ["authorization-response"])
    func authorizationResponses(target: String) async throws {
        try await Self.fuzz(target) { data in
            if let url = URL(string: String(decoding: data, as: UTF8.self)) { _ = AuthorizationResponse(redirectURL: url) }
        }
    }

    @Test("token and error responses", arguments: ["token-response", "error-response"])
    func tokenResponses(target: String) async throws {
        try await Self.fuzz(target) { data in
            _ = try? JSONDecoder().decode(TokenResponse.self, from: data)
            _ = try? JSONDecoder().decode(OAuthErrorResponse.self, from: data)
            _ = try? JSONDecoder().decode([String: JSONValue].self, from: data)
        }
    }

    @Test("JWTs and id_token claims, before any signature check", arguments: ["jwt"])
    func jwts(target: String) async throws {
        try await Self.fuzz(target) { data in
            guard let token = try? JSONWebToken(compact: Secret(String(decoding: data, as: UTF8.self))) else { return }
            _ = try? IDTokenClaims(token.claims)
        }
    }

    @Test("settings files", arguments: ["settings"])
    func settings(target: String) async throws {
        try await Self.fuzz(target) { (data: Data) throws -> Void in
            // The warnings' suggestions and sentences too: the keys are the input's.
            do {
                let file = try SettingsFile.parse(data, file: "fuzz.plist")
                _ = file.warnings.prefix(64).map { ($0.sentence, $0.suggestion) }
            } catch let error as SettingsError {
                _ = error.description
            }
        }
    }

    @Test("Graph pages and errors, task lists", arguments: ["graph-page", "tasks"])
    func apis(target: String) async throws {
        try await Self.fuzz(target) { data in
            _ = try? JSONDecoder().decode(SesameCore.GraphUserListBody.self, from: data)
            _ = SesameCore.GraphError(response: SesameCore.HTTPResponse(status: 400, body: data))
            _ = try? JSONDecoder().decode([SesameCore.TaskItem].self, from: data)
        }
    }

    @Test("the token cache file", arguments: ["cache"])
    func cache(target: String) async throws {
        try await Self.fuzz(target) { data in
            guard let cache = try? TokenCache(json: data) else { return }
            _ = try? cache.jsonData()
        }
    }

    @Test("the emulator's $filter parser", arguments: ["filter"])
    func filters(target: String) async throws {
        try await Self.fuzz(target) { (data: Data) throws -> Void in
            let parsed: UserFilter? = try? UserFilter.parse(String(decoding: data, as: UTF8.self))
            _ = parsed
        }
    }

    @Test("a federated provider's answer at /login.srf: the XML reader and the signature check", arguments: ["wresult"])
    func wresults(target: String) async throws {
        let key = try SigningKey.create(now: Date())
        try await Self.fuzz(target) { data in
            let text = String(decoding: data, as: UTF8.self)
            _ = try? XMLTree(parsing: text)
            guard let response = try? WSFederationResponse(reading: text) else { return }
            _ = try? response.verify(with: key)
        }
    }

    @Test("WebAuthn: attestation objects, authenticator data, COSE keys, client data and the browser's answers", arguments: ["webauthn"])
    func webauthn(target: String) async throws {
        let policy = WebAuthnPolicy(rpID: "localhost", allowedOrigins: ["https://localhost:8443"])
        try await Self.fuzz(target) { data in
            let bytes = [UInt8](data)
            _ = try? CBORDecoder.decode(bytes)
            _ = try? COSEKey(cbor: bytes).isValidSignature(bytes, for: bytes)
            _ = try? AuthenticatorData(bytes)
            _ = try? CollectedClientData(bytes)
            // The statement checks too: packed signatures and x5c certificates come from outside.
            if let object = try? AttestationObject(bytes) {
                _ = try? object.verify(clientDataHash: [UInt8](repeating: 0, count: 32), policy: policy, now: Date())
            }
            _ = try? RegistrationResponseJSON.parse(data)
            _ = try? AuthenticationResponseJSON.parse(data)
        }
    }

    // MARK: The fuzzer

    static var configuration: AccountConfiguration {
        AccountConfiguration(
            clientID: "6731de76-14a6-49ae-97bc-6eba6914391e", scopes: ["openid"],
            authorizationURL: URL(string: "https://login.microsoftonline.com/common/oauth2/v2.0/authorize")!,
            tokenURL: URL(string: "https://login.microsoftonline.com/common/oauth2/v2.0/token")!, redirectURL: redirect,
            storageGroup: "fuzz")
    }

    /// Runs `body` on the corpus of `target`, then on mutations of it until the time is up.
    /// The loop yields to other tasks every few milliseconds: it shares the cooperative thread
    /// pool (two threads on two cores) with the rest of `make test`, and a fuzz target that held
    /// one for seconds starved servers other tests were starting.
    static func fuzz(_ target: String, _ body: (Data) throws -> Void) async throws {
        let folder = root.appending(path: "Corpus/\(target)")
        let corpus = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().map {
            try Data(contentsOf: folder.appending(path: $0))
        }
        #expect(!corpus.isEmpty, "no corpus for \(target)")
        let crashes = root.appending(path: "../../.build/fuzz").standardized
        try FileManager.default.createDirectory(at: crashes, withIntermediateDirectories: true)
        let current = crashes.appending(path: "\(target).current")
        var random = SeededGenerator(seed: seed ^ UInt64(truncatingIfNeeded: target.hashValue & 0))
        let deadline = Date().addingTimeInterval(seconds)
        var runs = 0
        for input in corpus { try body(input) }
        while Date() < deadline || runs < 100 {
            var input = corpus[Int(random.next() % UInt64(corpus.count))]
            for _ in 0...(random.next() % 4) { input = mutate(input, corpus: corpus, random: &random) }
            try input.write(to: current)
            try body(input)
            runs += 1
            if runs % 32 == 0 { await Task.yield() }
        }
        try? FileManager.default.removeItem(at: current)
        #expect(runs >= 100)
    }

    static let tokens: [String] = [
        "1e300", "-1e300", "9223372036854775807", "-1", "0", "\"", "'", "''", "{", "}", "[", "]", "\\u0000", "\u{0}", "%", "%00", "=", "&",
        "?", "#", "..", "//", ":", "null", "true", "\"\"", "eyJ", ".", "<!DOCTYPE plist>", "<dict>", "</dict>", "<key>", "<integer>",
        "<ds:Signature>", "</saml:Assertion>", "&#x110000;", "<![CDATA[",
        "(", ")", " or ", " and ", "startswith(", ",", "é", "王", "🙂", String(repeating: "a", count: 5000),
        String(repeating: "[", count: 300),
    ]

    static func mutate(_ data: Data, corpus: [Data], random: inout SeededGenerator) -> Data {
        var bytes = [UInt8](data)
        let position = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count + 1))
        switch random.next() % 7 {
        case 0 where !bytes.isEmpty:
            bytes[min(position, bytes.count - 1)] ^= UInt8(1 << (random.next() % 8))
        case 1:
            bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: position)
        case 2 where !bytes.isEmpty:
            let length = Int(random.next() % UInt64(min(bytes.count - min(position, bytes.count - 1), 64) + 1))
            bytes.removeSubrange(min(position, bytes.count - 1)..<min(bytes.count, position + length))
        case 3 where !bytes.isEmpty:
            let start = min(position, bytes.count - 1)
            let chunk = bytes[start..<min(bytes.count, start + Int(random.next() % 32) + 1)]
            bytes.insert(contentsOf: chunk, at: start)
        case 4:
            let other = [UInt8](corpus[Int(random.next() % UInt64(corpus.count))])
            let cut = other.isEmpty ? 0 : Int(random.next() % UInt64(other.count))
            bytes = Array(bytes.prefix(position)) + Array(other.suffix(from: cut))
        default:
            bytes.insert(contentsOf: Array(tokens[Int(random.next() % UInt64(tokens.count))].utf8), at: position)
        }
        return Data(bytes.prefix(256 * 1024))
    }
}
