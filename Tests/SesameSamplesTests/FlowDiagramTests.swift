import Foundation
import SesameSamples
import SesameService
import SesameWindowModel
import Testing

@MainActor
@Suite("The flow as a sequence diagram")
struct FlowDiagramTests {
    /// The events of a sign-in and a search, as the window records them.
    static func signInAndSearch() throws -> FlowTrace {
        let trace = try FlowTrace(file: nil)
        // A tenth of a second between events (more when a request took longer), as in a real
        // flow: a request is drawn when it left, its answer's time less its latency.
        var now = ContinuousClock.now
        func record(_ name: String, _ fields: [(String, String)] = [], after gap: Duration = .milliseconds(100)) {
            now += gap
            trace.record(name, fields, at: now)
        }
        let authorize = "https://127.0.0.1:8443/contoso.onmicrosoft.com/oauth2/v2.0/authorize?client_id=<redacted>&state=<redacted>"
        record("window-shown")
        record("navigation", [("url", authorize), ("kind", "authorize"), ("action", "show")])
        record("page-loaded", [("url", authorize)])
        record(
            "navigation",
            [("method", "POST"), ("url", "https://127.0.0.1:8443/contoso.onmicrosoft.com/login"), ("kind", "login"), ("action", "show")])
        record(
            "navigation",
            [
                ("url", "https://login.microsoftonline.com/common/oauth2/nativeclient?code=<redacted>"), ("kind", "redirect"),
                ("action", "intercept"),
            ])
        record("redirect-intercepted", [("accountType", "AzureAD")])
        record(
            "token-request",
            [("method", "POST"), ("url", "https://127.0.0.1:8443/contoso/oauth2/v2.0/token"), ("status", "200"), ("ms", "41")])
        record(
            "discovery",
            [
                ("method", "GET"), ("url", "https://127.0.0.1:8443/contoso/v2.0/.well-known/openid-configuration"), ("status", "200"),
                ("ms", "3"),
            ])
        record("token-acquired", [("accountType", "AzureAD")])
        record(
            "api-call",
            [("method", "GET"), ("url", "https://127.0.0.1:8443/v1.0/users?$filter=<redacted>"), ("status", "503"), ("ms", "12")])
        record(
            "api-call",
            [("method", "GET"), ("url", "https://127.0.0.1:8443/v1.0/users?$top=<redacted>"), ("error", "timed out"), ("ms", "9000")],
            after: .seconds(9.1))
        record("list-rendered", [("view", "directory"), ("rows", "50")])
        record("token-silent", [("accountType", "AzureAD")])
        record("list-rendered", [("view", "directory"), ("rows", "1")])
        record("automation-session")
        return trace
    }

    @Test("each navigation, the intercepted redirect, the token exchange, discovery and each API call is a row between the right lanes")
    func lanes() throws {
        let diagram = FlowDiagram(try Self.signInAndSearch().events)
        let rows = diagram.steps.map { "\($0.from)→\($0.to) \($0.label)" }
        #expect(
            rows == [
                "app→app window shown",
                "signInView→identityService GET …/authorize?…",
                "identityService→signInView page shown",
                "signInView→identityService POST …/login",
                "identityService→signInView redirect to the app: intercepted",
                "signInView→app authorization code → app",
                "app→identityService POST …/token",
                "identityService→app 200 · 41 ms",
                "app→identityService GET …/openid-configuration",
                "identityService→app 200 · 3 ms",
                "app→app signed in: tokens cached",
                "app→apis GET …/users?…",
                "apis→app 503 · 12 ms",
                "app→apis GET …/users?…",
                "apis→app no answer · 9000 ms",
                "app→app 50 rows on screen",
                "app→app token without interaction (silent)",
                "app→app 1 row on screen",
            ])
        #expect(diagram.steps.filter(\.isHighlighted).map(\.label) == ["redirect to the app: intercepted", "authorization code → app"])
        #expect(diagram.steps.filter(\.isFailure).map(\.label) == ["503 · 12 ms", "no answer · 9000 ms"])
        #expect(diagram.steps.filter { $0.style == .response }.count == 6)
        // A request is drawn when it left: its answer's time less the latency.
        let token = try #require(diagram.steps.firstIndex { $0.label == "POST …/token" })
        #expect(abs(diagram.steps[token + 1].time - diagram.steps[token].time - 0.041) < 0.000_001)
    }

    @Test("a selected row shows its time and redacted details; a request and its answer show the same event")
    func details() throws {
        let trace = try Self.signInAndSearch()
        let diagram = FlowDiagram(trace.events)
        let token = try #require(diagram.steps.firstIndex { $0.label == "POST …/token" })
        let text = diagram.details(of: token)
        #expect(text.hasPrefix(String(format: "%.3f s  token-request", trace.events[6].time)))
        #expect(text.contains("status: 200") && text.contains("ms: 41"))
        #expect(diagram.details(of: token + 1) == text)
        let intercepted = try #require(diagram.steps.firstIndex { $0.label == "redirect to the app: intercepted" })
        #expect(diagram.details(of: intercepted).contains("code=<redacted>"))
        #expect(diagram.details(of: diagram.steps.count) == "")
    }

    @Test("a federated sign-in hops to the organisation's own host and back: a fifth lane, drawn once it is used")
    func federation() throws {
        let trace = try FlowTrace(file: nil)
        let entra = "http://127.0.0.1:8400/contoso.onmicrosoft.com"
        let adfs = "http://localhost:8400/adfs/ls/?wa=<redacted>&wctx=<redacted>"
        trace.record("discovery", [("method", "GET"), ("url", "\(entra)/v2.0/.well-known/openid-configuration"), ("status", "200")])
        var diagram = FlowDiagram(trace.events)
        #expect(diagram.lanes == [.app, .signInView, .identityService, .apis])
        for (method, url, kind) in [
            ("GET", "\(entra)/oauth2/v2.0/authorize?client_id=<redacted>", "authorize"), ("POST", "\(entra)/login", "login"),
            ("GET", adfs, "other"), ("POST", adfs, "other"), ("POST", "http://127.0.0.1:8400/login.srf", "other"),
        ] {
            trace.record("navigation", [("method", method), ("url", url), ("kind", kind), ("action", "show")])
            trace.record("page-loaded", [("url", url)])
        }
        for event in trace.events.dropFirst() { diagram.append(event) }
        #expect(diagram.lanes == [.app, .signInView, .identityService, .organization, .apis])
        #expect(
            diagram.steps.map { "\($0.from)→\($0.to) \($0.label)" }.dropFirst(2) == [
                "signInView→identityService GET …/authorize?…", "identityService→signInView page shown",
                "signInView→identityService POST …/login", "identityService→signInView page shown",
                "signInView→organization GET …/ls?…", "organization→signInView page shown",
                "signInView→organization POST …/ls?…", "organization→signInView page shown",
                "signInView→identityService POST /login.srf", "identityService→signInView page shown",
            ])
        #expect(FlowDiagram.Lane.organization.title == "Organisation")
    }

    @Test("this computer's registration shows: a sign-in by its PRT, its loss, a browser's cookie; no token or cookie in them")
    func device() throws {
        let trace = try FlowTrace(file: nil)
        trace.record("device-sign-in", [("accountType", "msalGraph"), ("deviceId", "5e1c0000-0000-4000-8000-000000000001")])
        trace.record("device-lost", [("error", "AADSTS700003")])
        trace.record("broker-sso-cookie", [("program", "/usr/bin/python3.11"), ("host", "login.microsoftonline.com")])
        let steps = FlowDiagram(trace.events).steps
        #expect(
            steps.map(\.label) == [
                "signed in by this computer’s registration (PRT): no page", "this computer is no longer registered: pages again",
                "single sign-on cookie for /usr/bin/python3.11",
            ])
        #expect(steps.map(\.isHighlighted) == [true, false, true])
        #expect(steps.map(\.isFailure) == [false, true, false])
    }

    @Test("rows come as events arrive; events the diagram leaves to the log add none")
    func live() throws {
        let events = try Self.signInAndSearch().events
        var diagram = FlowDiagram()
        var added: [Int] = []
        for event in events { added.append(diagram.append(event)) }
        #expect(added == [1, 1, 1, 1, 1, 1, 2, 2, 1, 2, 2, 1, 1, 1, 0])
        #expect(diagram.steps == FlowDiagram(events).steps)
    }
}

@MainActor
@Suite("The flow trace file")
struct FlowTraceFileTests {
    @Test("--trace-events writes a file only its owner can read, also over an existing one")
    func ownerOnly() throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "sesame-trace-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appending(path: "trace.jsonl")
        try Data().write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        let trace = try FlowTrace(file: file)
        trace.record("window-shown")
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        #expect(try String(contentsOf: file, encoding: .utf8).hasPrefix(#"{"t":0.0"#))
    }

    @Test("each line is JSON that reads back as written: quotes, backslashes, control characters, any script, times")
    func linesAreJSON() throws {
        let awkward = "a \"quoted\" C:\\path\nnext\tline \u{1} \u{1F} Ελληνικά 登录 🔑 </script>"
        for (time, written) in [(0.0, "0.000"), (1.25, "1.250"), (12.0004, "12.000"), (0.0996, "0.100"), (-0.5, "-0.500")] {
            let event = FlowTrace.Event(time: time, name: awkward, fields: [("url", awkward), ("status", "200")])
            #expect(event.jsonLine.hasPrefix(#"{"t":\#(written),"#))
            let object = try #require(try JSONSerialization.jsonObject(with: Data(event.jsonLine.utf8)) as? [String: Any])
            #expect(object["event"] as? String == awkward)
            #expect(object["url"] as? String == awkward)
            #expect(object["status"] as? Int == 200)
            #expect(abs((object["t"] as? Double ?? .nan) - time) < 0.0006)
        }
    }
}

@Suite("The flow inspector's time column")
struct FlowDiagramTimeTests {
    @Test("a time is never more than seven characters, so the column never cuts it")
    func timeLabels() {
        #expect(FlowDiagram.timeLabel(1.2345) == "1.234" || FlowDiagram.timeLabel(1.2345) == "1.235")
        #expect(FlowDiagram.timeLabel(99.9994) == "99.999")
        #expect(FlowDiagram.timeLabel(121.14) == "121.1")
        #expect(FlowDiagram.timeLabel(4321.4) == "4321")
        #expect(FlowDiagram.timeLabel(12_345) == "205:45")
        #expect(FlowDiagram.timeLabel(-3) == "0.000")
        #expect(FlowDiagram.timeLabel(.nan) == "0.000")
        for seconds in stride(from: 0.0, through: 400_000, by: 97.3) { #expect(FlowDiagram.timeLabel(seconds).count <= 7) }
    }

    @Test("rows are in time order: a request that left during earlier rows is drawn above them, never above what caused it")
    func rowsInTimeOrder() {
        var diagram = FlowDiagram()
        diagram.append(FlowTrace.Event(time: 10.000, name: "window-shown"))
        diagram.append(FlowTrace.Event(time: 10.100, name: "redirect-intercepted"))
        diagram.append(FlowTrace.Event(time: 10.150, name: "list-rendered", fields: [("rows", "3")]))
        // Left at 10.098 — before the trace recorded the redirect that caused it — and answered
        // 100 ms later, after the rows of an earlier search were on screen.
        diagram.append(
            FlowTrace.Event(
                time: 10.198, name: "token-request",
                fields: [("method", "POST"), ("url", "https://h/t/token"), ("status", "200"), ("ms", "100")]))
        let labels = diagram.steps.map(\.label)
        #expect(labels.firstIndex(of: "POST …/token")! > labels.firstIndex(of: L("authorization code → app"))!, "\(labels)")
        #expect(labels.firstIndex(of: "POST …/token")! < labels.firstIndex(of: String(format: L("%d rows on screen"), 3))!, "\(labels)")
    }
}
