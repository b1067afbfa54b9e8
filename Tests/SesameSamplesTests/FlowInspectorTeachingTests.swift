import Foundation
import SesameCore
import SesameCoreTestSupport
import SesameService
import SesameTestSupport
import SesameWindowModel
import Testing

/// The inspector reads a token endpoint's tokens aloud: selecting one shows its claims in words,
/// its times as the local time of day — and never the token, its signature or a secret in it.
@MainActor
@Suite("Tokens read aloud in the flow inspector")
struct TokenReadingTests {
    static func segment(_ object: [String: Any]) throws -> String {
        try JSONSerialization.data(withJSONObject: object).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func token(header: [String: Any], claims: [String: Any]) throws -> (token: String, signature: String) {
        let signature = Data((0..<256).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return (try segment(header) + "." + segment(claims) + "." + signature, signature)
    }

    @Test("an ID token's and an access token's claims in words; nothing of the tokens, signatures, nonce or refresh token")
    func readAloud() async throws {
        let issued = Int(Date().timeIntervalSince1970)
        let id = try Self.token(
            header: ["alg": "RS256", "typ": "JWT", "kid": "key-1"],
            claims: [
                "aud": "6731de76-14a6-49ae-97bc-6eba6914391e", "iss": "https://login.microsoftonline.com/tenant/v2.0", "iat": issued,
                "exp": issued + 3600, "name": "Alex Wilber", "preferred_username": "alex@contoso.onmicrosoft.com",
                "nonce": "nonce-that-is-a-secret-4f1c", "c_hash": "c-hash-of-the-code-9a8b", "sid": "session-id-opaque-77",
            ])
        let access = try Self.token(
            header: ["alg": "RS256", "typ": "JWT", "kid": "key-1", "nonce": "graph-header-nonce-5d2e"],
            claims: [
                "aud": "00000003-0000-0000-c000-000000000000", "scp": "User.Read User.ReadBasic.All", "iat": issued,
                "exp": issued + 3600, "amr": ["pwd", "mfa"], "uti": "unique-token-id-opaque-31",
            ])
        let refresh = "0.refresh-token-that-is-a-secret-ee01"
        let body = try JSONSerialization.data(withJSONObject: [
            "token_type": "Bearer", "expires_in": 3600, "scope": "User.Read User.ReadBasic.All", "id_token": id.token,
            "access_token": access.token, "refresh_token": refresh,
        ])
        let trace = try FlowTrace(file: nil)
        let transport = TracingTransport(base: FakeTransport { _ in HTTPResponse(status: 200, body: body) }, trace: trace)
        _ = try await transport.send(
            HTTPRequest(method: "POST", url: URL(string: "https://login.example/tenant/oauth2/v2.0/token")!), progress: nil)
        #expect(await Eventually.holds { trace.events.filter { $0.name == "token-read" }.count == 2 })

        let diagram = FlowDiagram(trace.events)
        let rows = diagram.steps.indices.filter {
            ["ID token read: who signed in", "access token read: what it allows"].contains(diagram.steps[$0].label)
        }
        #expect(rows.count == 2)
        let idText = diagram.details(of: rows[0])
        let accessText = diagram.details(of: rows[1])
        #expect(idText.contains("Sesame checks its signature, issuer, audience and nonce before it uses it."))
        #expect(idText.contains("aud · who the token is for (its audience): 6731de76-14a6-49ae-97bc-6eba6914391e"))
        #expect(idText.contains("preferred_username · the user’s sign-in name: alex@contoso.onmicrosoft.com"))
        #expect(
            idText.contains("header.kid · which of the service’s keys signed it: key-1")
        )
        #expect(idText.contains(", 60 minutes after it was issued"), "\(idText)")
        #expect(accessText.contains("scp · what the app may do for the user (its permissions): User.Read User.ReadBasic.All"))
        #expect(accessText.contains("amr · how the user proved who they are: pwd mfa"))

        // Nothing of the tokens themselves, nor a claim that is a secret or opaque, in the trace.
        let everything =
            trace.events.flatMap { event in [event.name] + event.fields.flatMap { [$0.0, $0.1] } }.joined(separator: "\n")
            + idText + accessText
        let claims: [String] = [
            refresh, "nonce-that-is-a-secret-4f1c", "c-hash-of-the-code-9a8b", "session-id-opaque-77", "graph-header-nonce-5d2e",
            "unique-token-id-opaque-31", id.signature, access.signature,
        ]
        let parts: [String] = (id.token.split(separator: ".") + access.token.split(separator: ".")).map(String.init)
        let secrets = claims + parts
        for secret in secrets {
            for start in stride(from: 0, to: max(1, secret.count - 11), by: 6) {
                let piece = String(secret.dropFirst(start).prefix(12))
                #expect(!everything.contains(piece), "the trace holds a piece of a secret: \(piece)")
            }
        }
    }

    @Test("an opaque access token is said to be one; an error answer or a body that is no JSON reads nothing")
    func opaqueAndHostile() {
        let opaque = TokenReading.events(ofTokenResponse: Data(#"{"access_token":"EwBwA8l6BAAU-not-a-jwt","token_type":"Bearer"}"#.utf8))
        #expect(opaque.count == 1)
        #expect(opaque.first?.contains { $0 == ("format", "opaque") } == true)
        #expect(TokenReading.events(ofTokenResponse: Data(#"{"error":"invalid_grant"}"#.utf8)).isEmpty)
        #expect(TokenReading.events(ofTokenResponse: Data("not json".utf8)).isEmpty)
        // A claim with control characters and a huge value is shown cleaned and cut.
        let header = #"{"alg":"RS256"}"#
        let claims = "{\"name\":\"Alex\\u001b[31m\",\"aud\":\"" + String(repeating: "a", count: 5000) + "\"}"
        func b64(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_")
        }
        let body = Data("{\"id_token\":\"\(b64(header)).\(b64(claims)).c2ln\"}".utf8)
        let fields = TokenReading.events(ofTokenResponse: body).first ?? []
        #expect(fields.first { $0.0 == "name" }?.1 == "Alex[31m")
        #expect((fields.first { $0.0 == "aud" }?.1.count ?? 0) <= TokenReading.longestShownValue + 1)
    }
}

/// Each kind of step says what it is and why, with its source; the redirect names the rule the
/// sign-in view applied and the URL parts it compared.
@MainActor
@Suite("Each step of the flow explained")
struct FlowStepExplanationTests {
    @Test("every step kind of a sign-in, a token and an API call has its sentence and its source")
    func everyStepExplained() throws {
        let trace = try FlowDiagramTests.signInAndSearch()
        let diagram = FlowDiagram(trace.events)
        #expect(!diagram.steps.isEmpty)
        for index in diagram.steps.indices {
            let details = diagram.details(of: index)
            #expect(details.contains("Source: "), "no explanation for \(diagram.steps[index].label): \(details)")
        }
        let redirect = try #require(diagram.steps.indices.first { diagram.steps[$0].isHighlighted })
        let text = diagram.details(of: redirect)
        #expect(text.contains("compared this URL’s scheme, host, port and path with the redirect URI"), "\(text)")
        #expect(text.contains("RFC 6749 §4.1.2"))
        let authorize = try #require(diagram.steps.indices.first { diagram.steps[$0].label.hasPrefix("GET …/authorize") })
        #expect(diagram.details(of: authorize).contains("code_challenge (PKCE)"))
    }
}

/// A reader of the tutorial finds their place: each step names the tutorial's own step.
@MainActor
@Suite("The flow mapped onto the seeds' tutorials")
struct TutorialStepTests {
    @Test("the Directory's sign-in and search: the NXOAuth2 tutorial's steps, from the web view to the table")
    func directory() throws {
        let events =
            [FlowTrace.Event(time: 0.05, name: "sign-in-started", fields: [("accountType", "myGraphService"), ("sample", "directory")])]
            + (try FlowDiagramTests.signInAndSearch().events)
        let diagram = FlowDiagram(events)
        func step(_ label: (String) -> Bool) throws -> String {
            try diagram.details(of: #require(diagram.steps.indices.first { label(diagram.steps[$0].label) }))
        }
        #expect(
            try step { $0.hasPrefix("GET …/authorize") }.contains("In the NXOAuth2 and Graph tutorial: “Create a WebView for sign-in”"))
        #expect(try step { $0.hasPrefix("POST …/login") }.contains("“Override the WebView methods to handle authentication”"))
        #expect(try step { $0 == "POST …/token" }.contains("“Write code to handle the result of the OAuth2 request”"))
        #expect(
            try step { $0.hasPrefix("GET …/users") }.contains(
                "“Provide a way to call the Graph API when someone types in the search field”"))
        #expect(try step { $0.contains("rows on screen") }.contains("“Update the table view when data is received”"))
    }

    @Test("the Me console's Graph call is the MSAL tutorial's; a B2C policy on the authorize URL is the task list's")
    func meAndTasks() {
        let me = FlowDiagram([
            FlowTrace.Event(time: 0.1, name: "sign-in-started", fields: [("sample", "me")]),
            FlowTrace.Event(
                time: 0.3, name: "api-call", fields: [("method", "GET"), ("url", "https://graph.microsoft.com/v1.0/me"), ("status", "200")]),
        ])
        #expect(
            me.steps.indices.contains {
                me.details(of: $0).contains("In the MSAL tutorial: “Call the Microsoft Graph API using the token you just obtained”")
            })
        let tasks = FlowDiagram([
            FlowTrace.Event(
                time: 0.1, name: "navigation",
                fields: [
                    ("url", "https://contoso.b2clogin.com/contoso/oauth2/v2.0/authorize?p=<redacted>"), ("kind", "authorize"),
                    ("action", "show"),
                ])
        ])
        #expect(tasks.details(of: 0).contains("In the Azure AD B2C task list tutorial: "), "\(tasks.details(of: 0))")
    }
}

/// A saved flow read back: the same events, steps and explanations; anything else refused with the line.
@MainActor
@Suite("A saved flow, replayed")
struct FlowReplayTests {
    @Test("saved as JSON lines and read back, a sign-in and search draws the same steps with the same details")
    func roundTrip() throws {
        let trace = try FlowDiagramTests.signInAndSearch()
        trace.record("token-read", [("token", "id_token"), ("format", "jwt"), ("aud", "6731de76"), ("name", "Zoë \"Q\" O'Brien\\x")])
        let saved = trace.events.map { $0.jsonLine + "\n" }.joined()
        let replayed = try FlowReplay.events(from: saved, file: "flow.jsonl")
        #expect(replayed.map(\.name) == trace.events.map(\.name))
        #expect(replayed.map { $0.fields.map { "\($0.0)=\($0.1)" } } == trace.events.map { $0.fields.map { "\($0.0)=\($0.1)" } })
        let original = FlowDiagram(trace.events)
        let again = FlowDiagram(replayed)
        #expect(again.steps.map(\.label) == original.steps.map(\.label))
        for index in original.steps.indices { #expect(again.details(of: index) == original.details(of: index)) }
    }

    @Test(
        "a file that is not a saved flow is refused, naming the line",
        arguments: [
            ("{\"t\":0.1,\"event\":\"window-shown\"}\nnot json\n", "flow.jsonl, line 2: not a flow event"),
            ("{\"event\":\"window-shown\",\"t\":0.1}\n", "line 1: not a flow event"),
            ("{\"t\":\"soon\",\"event\":\"x\"}\n", "line 1: not a flow event"),
            ("{\"t\":0.1,\"event\":\"x\",\"a\":{\"nested\":1}}\n", "line 1: not a flow event"),
            ("\n\n", "holds no flow events"),
        ])
    func refused(text: String, says: String) {
        #expect(throws: FlowReplay.Failure.self) { try FlowReplay.events(from: text, file: "flow.jsonl") }
        do { _ = try FlowReplay.events(from: text, file: "flow.jsonl") } catch { #expect(error.description.contains(says), "\(error)") }
    }

    /// A flow mailed to a Windows machine and saved again there (Notepad, a mail program) ends its
    /// lines with CR LF, and may start with a byte order mark: it replays as the file it was.
    @Test(
        "saved with CRLF line ends or a byte order mark first, a flow reads as the same steps with the same details",
        arguments: [("\r\n", ""), ("\r\n", "\u{FEFF}"), ("\n", "\u{FEFF}")])
    func windowsLineEnds(lineEnd: String, start: String) throws {
        let trace = try FlowDiagramTests.signInAndSearch()
        let saved = start + trace.events.map { $0.jsonLine + lineEnd }.joined() + lineEnd
        let replayed = try FlowReplay.events(from: saved, file: "flow.jsonl")
        #expect(replayed.map(\.jsonLine) == trace.events.map(\.jsonLine))
        let original = FlowDiagram(trace.events)
        let again = FlowDiagram(replayed)
        #expect(again.steps.map(\.label) == original.steps.map(\.label))
        for index in original.steps.indices { #expect(again.details(of: index) == original.details(of: index)) }
        // A line that is no event is still named by its number, CR LF counted as one line end.
        let broken = start + trace.events.prefix(2).map { $0.jsonLine + lineEnd }.joined() + "my notes" + lineEnd
        do {
            _ = try FlowReplay.events(from: broken, file: "flow.jsonl")
            Issue.record("a line of notes replayed")
        } catch { #expect(error.description.contains("flow.jsonl, line 3: not a flow event"), "\(error)") }
    }

    /// The file a person names (`sesame --replay latest.jsonl`) may be a symbolic link to the flow,
    /// as any tool's argument may: it is followed, as `cat` and `less` follow it.
    @Test("a flow reached through a symbolic link, or a link to a link, replays as the file itself")
    func symbolicLink() throws {
        let folder = Repository.temporaryDirectory("sesame-replay-link")
        defer { try? FileManager.default.removeItem(at: folder) }
        let trace = try FlowDiagramTests.signInAndSearch()
        try Data(trace.events.map { $0.jsonLine + "\n" }.joined().utf8).write(to: folder.appending(path: "flow.jsonl"))
        let link = folder.appending(path: "latest.jsonl")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "flow.jsonl")
        let linkToLink = folder.appending(path: "shown.jsonl")
        try FileManager.default.createSymbolicLink(atPath: linkToLink.path, withDestinationPath: link.path)
        for name in [link, linkToLink] {
            let replayed = try FlowReplay.events(fromFile: name.path)
            #expect(replayed.map(\.jsonLine) == trace.events.map(\.jsonLine), "\(name.lastPathComponent)")
            #expect(FlowDiagram(replayed).steps.map(\.label) == FlowDiagram(trace.events).steps.map(\.label))
        }
    }

    /// Whatever a name leads to, only a regular file of at most 16 MiB is read: a FIFO would wait for
    /// a writer, a device (`/dev/zero`) never ends. The sentence says which it was.
    @Test("a file over 16 MiB, a folder, a device, a FIFO (named or through a link), a missing file: refused, each saying why")
    func refusedFiles() throws {
        let folder = Repository.temporaryDirectory("sesame-replay-refused")
        defer { try? FileManager.default.removeItem(at: folder) }
        let large = folder.appending(path: "large.jsonl")
        try Data("{\"t\":0.1,\"event\":\"window-shown\"}\n".utf8).write(to: large)
        let handle = try FileHandle(forWritingTo: large)
        try handle.truncate(atOffset: UInt64(FlowReplay.largestFile) + 1)
        try handle.close()
        let fifo = folder.appending(path: "fifo.jsonl")
        #expect(try ProcessRunner.run(URL(filePath: "/usr/bin/mkfifo"), [fifo.path]).status == 0)
        func link(_ name: String, to target: String) throws -> String {
            let path = folder.appending(path: name).path
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
            return path
        }
        let refusals: [(String, String)] = [
            (large.path, "large.jsonl is larger than 16 MiB"),
            (try link("large-link.jsonl", to: large.path), "large-link.jsonl is larger than 16 MiB"),
            (folder.path, "cannot be read: it is not a regular file"),
            ("/dev/zero", "/dev/zero cannot be read: it is not a regular file"),
            (fifo.path, "fifo.jsonl cannot be read: it is not a regular file"),
            (try link("to-fifo.jsonl", to: fifo.path), "to-fifo.jsonl cannot be read: it is not a regular file"),
            (try link("to-device.jsonl", to: "/dev/zero"), "to-device.jsonl cannot be read: it is not a regular file"),
            (folder.appending(path: "gone.jsonl").path, "gone.jsonl cannot be read: No such file or directory"),
            (try link("dangling.jsonl", to: "gone.jsonl"), "dangling.jsonl cannot be read: No such file or directory"),
        ]
        for (path, says) in refusals {
            do {
                _ = try FlowReplay.events(fromFile: path)
                Issue.record("\(path) replayed")
            } catch { #expect(error.description.contains(says), "\(error)") }
        }
    }
}
