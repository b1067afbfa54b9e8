import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat

/// `make bench`: how fast `identity-emulator --users 100000` starts, and how fast it answers a
/// Graph `startswith` search over that directory. Goals: start < 5 s, search < 10 ms (p95).
@main
struct EmulatorBenchmark {
    static let users = 100_000
    static let startGoal = 5.0
    static let searchGoal = 0.010

    /// The sign-in redirects to the app's redirect URI, which must not be followed.
    static let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))

    static func main() async {
        do {
            if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "--exchanges" {
                try await exchanges(base: CommandLine.arguments[2])
                return
            }
            if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "--code" {
                // For bench/bare-rows.c: alex's code, fresh from the pages, to redeem.
                print("{\"code\": \"\(try await authorizationCode(base: CommandLine.arguments[2]).code)\"}")
                return
            }
            if CommandLine.arguments.count == 4, CommandLine.arguments[1] == "--search" {
                try await searchOnce(base: CommandLine.arguments[2], text: CommandLine.arguments[3])
                return
            }
            try await measure()
        } catch {
            print("benchmark failed: \(error)")
            exit(2)
        }
    }

    static func measure() async throws {
        let emulatorPath =
            CommandLine.arguments.dropFirst().first
            ?? URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent().appending(path: "identity-emulator").path
        print("identity-emulator benchmark — \(emulatorPath)")

        var starts: [Double] = []
        var running: (process: Process, base: String)?
        for run in 1...3 {
            let (process, base, seconds) = try start(emulatorPath)
            starts.append(seconds)
            print(String(format: "  start %d: %.2f s to 'listening' with --users %d", run, seconds, users))
            if run == 3 {
                running = (process, base)
            } else {
                process.terminate()
                process.waitUntilExit()
            }
        }
        guard let (process, base) = running else { return }
        defer { process.terminate() }

        let token = try await graphToken(base: base).access
        let prefixes = [
            "a", "al", "meg", "jo", "ma", "Mar", "o'b", "Γι", "王", "lu", "chen", "sean", "x", "da", "pa", "li", "wang", "ni", "so", "eli",
        ]
        var latencies: [Double] = []
        var rows = 0
        for round in 0..<30 {
            for prefix in prefixes {
                let property = ["displayName", "givenName", "surname", "mail", "userPrincipalName"][round % 5]
                let filter = "startswith(\(property),'\(prefix.replacingOccurrences(of: "'", with: "''"))')"
                var request = HTTPClientRequest(
                    url: "\(base)/v1.0/users?$filter=\(encode(filter))&$select=displayName,mail,userPrincipalName&$top=50")
                request.headers.add(name: "Authorization", value: "Bearer \(token)")
                let began = ContinuousClock.now
                let response = try await client.execute(request, timeout: .seconds(10))
                let body = try await response.body.collect(upTo: 1 << 22)
                let elapsed = began.duration(to: .now)
                guard response.status.code == 200 else { throw BenchmarkError("search \(filter) answered \(response.status.code)") }
                if round > 0 { latencies.append(Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds)) }
                rows +=
                    (try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])?["value"].flatMap {
                        ($0 as? [Any])?.count
                    } ?? 0
            }
        }
        latencies.sort()
        func percentile(_ p: Double) -> Double { latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }
        let startMedian = starts.sorted()[1]
        print(String(format: "  start: median %.2f s, worst %.2f s (goal < %.0f s)", startMedian, starts.max() ?? 0, startGoal))
        print(
            String(
                format:
                    "  startswith search over %d users, %d requests (%d rows): p50 %.2f ms, p95 %.2f ms, p99 %.2f ms, max %.2f "
                    + "ms (goal p95 < %.0f ms)",
                users, latencies.count, rows, percentile(0.5) * 1000, percentile(0.95) * 1000, percentile(0.99) * 1000,
                (latencies.last ?? 0) * 1000, searchGoal * 1000))
        let met = (starts.max() ?? .infinity) < startGoal && percentile(0.95) < searchGoal
        print(met ? "  goals met" : "  GOALS MISSED")
        figure(
            "emulator start, 100,000 users", value: startMedian, unit: "s", baseline: "goal", baselineValue: startGoal,
            goal: "< \(Int(startGoal)) s", met: (starts.max() ?? .infinity) < startGoal)
        figure(
            "emulator search p95, 100,000 users", value: percentile(0.95) * 1000, unit: "ms", baseline: "goal",
            baselineValue: searchGoal * 1000, goal: "< \(Int(searchGoal * 1000)) ms", met: percentile(0.95) < searchGoal)
        try await throughput(base: base, token: token, emulator: process.processIdentifier)
        try await client.shutdown()
    }

    /// `emulator-bench --exchanges BASE`: the baseline of the redirect-to-data figure. Signs alex
    /// in through the pages (not timed), then times what the app needs between the redirect and
    /// the first rows — the code's redemption and one Graph page, as the Directory asks for it —
    /// made back to back by a plain client; prints the milliseconds as one JSON line.
    static func exchanges(base: String) async throws {
        let (code, _) = try await authorizationCode(base: base)
        let redirect = "https://login.microsoftonline.com/common/oauth2/nativeclient"
        let began = ContinuousClock.now
        var request = HTTPClientRequest(url: "\(base)/contoso.onmicrosoft.com/oauth2/v2.0/token")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(
            ByteBuffer(
                string: "client_id=6731de76-14a6-49ae-97bc-6eba6914391e&grant_type=authorization_code&code=\(encode(code))"
                    + "&redirect_uri=\(encode(redirect))&scope=" + encode("openid offline_access User.Read User.ReadBasic.All")))
        let tokens = try await client.execute(request, timeout: .seconds(30))
        let body = try await tokens.body.collect(upTo: 1 << 20)
        guard let object = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any],
            let access = object["access_token"] as? String
        else { throw BenchmarkError("the code's redemption answered \(tokens.status.code)") }
        let select = "id,displayName,givenName,surname,userPrincipalName,mail,businessPhones,mobilePhone"
        var page = HTTPClientRequest(url: "\(base)/v1.0/users?$select=\(encode(select))&$top=50")
        page.headers.add(name: "Authorization", value: "Bearer \(access)")
        let users = try await client.execute(page, timeout: .seconds(30))
        _ = try await users.body.collect(upTo: 1 << 22)
        guard users.status.code == 200 else { throw BenchmarkError("the Graph page answered \(users.status.code)") }
        print("{\"ms\": \(began.duration(to: .now) / .milliseconds(1))}")
    }

    /// `emulator-bench --search BASE TEXT`: the emulator's own answer time for the Directory's
    /// search of TEXT (the same people-picker filter and page), after one untimed warm-up.
    static func searchOnce(base: String, text: String) async throws {
        let token = try await cachedToken(base: base)
        let literal = "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        let filter = ["displayName", "givenName", "surname", "mail", "userPrincipalName"].map { "startswith(\($0),\(literal))" }
            .joined(separator: " or ")
        let select = "id,displayName,givenName,surname,userPrincipalName,mail,businessPhones,mobilePhone"
        var elapsed = Duration.zero
        for attempt in 0..<2 {
            var request = HTTPClientRequest(url: "\(base)/v1.0/users?$filter=\(encode(filter))&$select=\(encode(select))&$top=50")
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            let began = ContinuousClock.now
            let response = try await client.execute(request, timeout: .seconds(30))
            _ = try await response.body.collect(upTo: 1 << 22)
            guard response.status.code == 200 else { throw BenchmarkError("the search answered \(response.status.code)") }
            if attempt == 1 { elapsed = began.duration(to: .now) }
        }
        print("{\"ms\": \(elapsed / .milliseconds(1))}")
    }

    /// An access token kept in a file beside the temporary folder for an hour, so that each
    /// `--search` does not sign in again.
    static func cachedToken(base: String) async throws -> String {
        let file = FileManager.default.temporaryDirectory.appending(
            path: "emulator-bench-token-\(base.replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: ":", with: "_"))")
        if let attributes = try? FileManager.default.attributesOfItem(atPath: file.path),
            let modified = attributes[.modificationDate] as? Date, Date().timeIntervalSince(modified) < 3000,
            let token = try? String(contentsOf: file, encoding: .utf8)
        {
            return token
        }
        let token = try await graphToken(base: base).access
        try Data(token.utf8).write(to: file, options: [.atomic])
        chmod(file.path, 0o600)
        return token
    }

    /// Prints one figure of `bench/results.json` as a JSON line, prefixed `FIGURE `.
    static func figure(
        _ name: String, value: Double, unit: String, baseline: String, baselineValue: Double, ratio: Double? = nil, goal: String,
        met: Bool, detail: String? = nil
    ) {
        var object: [String: Any] = [
            "figure": name, "value": value, "unit": unit, "baseline": baseline, "baseline_value": baselineValue,
            "ratio": ratio ?? (baselineValue == 0 ? 0 : value / baselineValue), "goal": goal, "met": met,
        ]
        if let detail { object["detail"] = detail }
        if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
            print("FIGURE " + String(decoding: data, as: UTF8.self))
        }
    }

    static let connections = 64

    /// Refresh-token grants per second at 64 connections, against the RS256 signatures per second
    /// the same process makes (a grant signs an access token and an id_token), alternated in five
    /// rounds; and Graph searches per second over the 100,000 users.
    static func throughput(base: String, token: String, emulator: Int32) async throws {
        // Each connection refreshes its own chain (a rotated refresh token replaces the last).
        var chains: [String] = []
        for _ in 0..<connections { chains.append(try await graphToken(base: base).refresh) }
        let chainBox = Chains(chains)
        var grants: [Double] = []
        var signatures: [Double] = []
        // Where the two cores went while the grants ran: the emulator's share, and this client's.
        var emulatorCores: [Double] = []
        var clientCores: [Double] = []
        for _ in 0..<5 {
            signatures.append(try await signatureRate(base: base))
            let began = (ContinuousClock.now, cpuSeconds(of: emulator), cpuSeconds(of: getpid()))
            grants.append(
                try await rate(seconds: 2) { index in
                    var request = HTTPClientRequest(url: "\(base)/contoso.onmicrosoft.com/oauth2/v2.0/token")
                    request.method = .POST
                    request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                    request.body = .bytes(
                        ByteBuffer(
                            string: "client_id=6731de76-14a6-49ae-97bc-6eba6914391e&grant_type=refresh_token&refresh_token="
                                + encode(chainBox.get(index)) + "&scope=" + encode("openid profile offline_access User.Read")))
                    let response = try await pooled.execute(request, timeout: .seconds(30))
                    let body = try await response.body.collect(upTo: 1 << 20)
                    guard response.status.code == 200,
                        let object = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any],
                        let next = object["refresh_token"] as? String
                    else { throw BenchmarkError("a refresh grant answered \(response.status.code)") }
                    chainBox.set(index, next)
                })
            let wall = began.0.duration(to: .now) / .seconds(1)
            emulatorCores.append((cpuSeconds(of: emulator) - began.1) / wall)
            clientCores.append((cpuSeconds(of: getpid()) - began.2) / wall)
        }
        let grantRate = median(grants)
        let signatureLimit = median(signatures) / 2
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        // The bound on the cores the emulator had: signatures per core-second, times its cores.
        let emulatorShare = median(emulatorCores)
        let boundOnItsShare = signatureLimit / cores * emulatorShare
        print(
            String(
                format: "  refresh grants at %d connections: %.0f/s; RS256 limit %.0f signatures/s ÷ 2 = %.0f grants/s (%.0f %%)",
                connections, grantRate, median(signatures), signatureLimit, grantRate / signatureLimit * 100))
        let profile = String(
            format: "while the grants ran, the emulator used %.2f of the %.0f cores and this client %.2f; on the cores it had, "
                + "the emulator's grants were %.2f of the RS256 bound (%.0f grants/s)",
            emulatorShare, cores, median(clientCores), grantRate / boundOnItsShare, boundOnItsShare)
        print("  " + profile)
        figure(
            "emulator refresh grants/s at 64 connections", value: grantRate, unit: "grants/s",
            baseline: "RS256 signatures/s of the same process ÷ 2 per grant", baselineValue: signatureLimit,
            goal: "≥ 0.70", met: grantRate / signatureLimit >= 0.7, detail: profile)

        var searches: [Double] = []
        let prefixes = ["a", "al", "meg", "jo", "ma", "Mar", "lu", "chen", "sean", "da", "pa", "li", "wang", "ni", "so", "eli"]
        for _ in 0..<5 {
            searches.append(
                try await rate(seconds: 2) { index in
                    let filter = "startswith(displayName,'\(prefixes[index % prefixes.count])')"
                    var request = HTTPClientRequest(
                        url: "\(base)/v1.0/users?$filter=\(encode(filter))&$select=displayName,mail,userPrincipalName&$top=50")
                    request.headers.add(name: "Authorization", value: "Bearer \(token)")
                    request.headers.add(name: "ConsistencyLevel", value: "eventual")
                    let response = try await pooled.execute(request, timeout: .seconds(30))
                    _ = try await response.body.collect(upTo: 1 << 22)
                    guard response.status.code == 200 else { throw BenchmarkError("a search answered \(response.status.code)") }
                })
        }
        print(String(format: "  Graph searches at %d connections over %d users: %.0f/s", connections, users, median(searches)))
        figure(
            "emulator Graph searches/s at 64 connections, 100,000 users", value: median(searches), unit: "searches/s",
            baseline: "none (reported)", baselineValue: 0, ratio: 0, goal: "reported", met: true)
        try await pooled.shutdown()
    }

    /// A client that opens up to 64 connections to the emulator.
    static let pooled: HTTPClient = {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    /// Runs `work` on 64 concurrent workers for `seconds`: completed exchanges per second.
    static func rate(seconds: Double, _ work: @escaping @Sendable (Int) async throws -> Void) async throws -> Double {
        let started = ContinuousClock.now
        let deadline = started + .milliseconds(Int(seconds * 1000))
        let done = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<connections {
                group.addTask {
                    var count = 0
                    while ContinuousClock.now < deadline {
                        try await work(index)
                        count += 1
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        return Double(done) / (started.duration(to: .now) / .seconds(1))
    }

    /// `POST /.emulator/benchmark/signatures`: the emulator's own signing rate for 2 s.
    static func signatureRate(base: String) async throws -> Double {
        var request = HTTPClientRequest(url: "\(base)/.emulator/benchmark/signatures")
        request.method = .POST
        request.body = .bytes(ByteBuffer(string: "2"))
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 16)
        guard let object = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any],
            let rate = object["signatures_per_second"] as? Int
        else { throw BenchmarkError("the signature benchmark answered \(response.status.code)") }
        return Double(rate)
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    /// CPU time a process has used so far, user and system (/proc/PID/stat), in seconds.
    static func cpuSeconds(of pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return 0 }
        // After the name: state is field 3, utime 14 and stime 15 (1-based), in clock ticks.
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    /// Starts the emulator and returns when it prints its first line.
    static func start(_ path: String) throws -> (Process, String, Double) {
        let process = Process()
        process.executableURL = URL(filePath: path)
        process.arguments = ["--users", String(users), "--port", "0"]
        let output = Pipe()
        process.standardOutput = output
        let began = ContinuousClock.now
        try process.run()
        var line = Data()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            guard !byte.isEmpty else { throw BenchmarkError("identity-emulator exited before listening") }
            if byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        let elapsed = began.duration(to: .now)
        let text = String(decoding: line, as: UTF8.self)
        guard let base = text.split(separator: " ").last, text.hasPrefix("identity-emulator listening on ") else {
            throw BenchmarkError("unexpected first line: \(text)")
        }
        return (process, String(base), Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    /// Signs alex in through the pages and redeems the code, as the app would.
    static func graphToken(base: String) async throws -> (access: String, refresh: String) {
        let (code, redeem) = try await authorizationCode(base: base)
        return try await redeem(code)
    }

    /// Walks alex's sign-in pages: the code the redirect carries, and how to redeem it.
    static func authorizationCode(
        base: String
    ) async throws -> (code: String, redeem: @Sendable (String) async throws -> (access: String, refresh: String)) {
        let redirect = "https://login.microsoftonline.com/common/oauth2/nativeclient"
        let query =
            "client_id=6731de76-14a6-49ae-97bc-6eba6914391e&response_type=code&redirect_uri=\(encode(redirect))"
            + "&scope=\(encode("openid profile offline_access User.Read User.ReadBasic.All"))"
        func text(_ response: HTTPClientResponse) async throws -> String {
            String(buffer: try await response.body.collect(upTo: 1 << 20))
        }
        func post(_ path: String, _ form: String) async throws -> HTTPClientResponse {
            var request = HTTPClientRequest(url: base + path)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: form))
            return try await client.execute(request, timeout: .seconds(10))
        }
        let page = try await text(
            try await client.execute(
                HTTPClientRequest(url: "\(base)/contoso.onmicrosoft.com/oauth2/v2.0/authorize?\(query)"), timeout: .seconds(10)))
        guard let range = page.range(of: #"name="ctx" value="([^"]*)""#, options: .regularExpression) else {
            throw BenchmarkError("no sign-in page")
        }
        let ctx = page[range].split(separator: "\"")[3]
        _ = try await post("/contoso.onmicrosoft.com/login", "ctx=\(ctx)&step=username&loginfmt=alex%40contoso.onmicrosoft.com")
        _ = try await post("/contoso.onmicrosoft.com/login", "ctx=\(ctx)&step=password&passwd=Passw0rd%21")
        var answer = try await post("/contoso.onmicrosoft.com/login", "ctx=\(ctx)&step=kmsi&kmsi=no")
        // Consent is asked once per user and app; after that "stay signed in" redirects at once.
        if answer.headers.first(name: "Location") == nil {
            answer = try await post("/contoso.onmicrosoft.com/login", "ctx=\(ctx)&step=consent&consent=accept")
        }
        guard let location = answer.headers.first(name: "Location"),
            let code = URLComponents(string: location)?.queryItems?.first(where: { $0.name == "code" })?.value
        else {
            throw BenchmarkError("sign-in did not redirect")
        }
        return (code, { code in try await redeem(code, base: base) })
    }

    static func redeem(_ code: String, base: String) async throws -> (access: String, refresh: String) {
        let redirect = "https://login.microsoftonline.com/common/oauth2/nativeclient"
        func text(_ response: HTTPClientResponse) async throws -> String {
            String(buffer: try await response.body.collect(upTo: 1 << 20))
        }
        func post(_ path: String, _ form: String) async throws -> HTTPClientResponse {
            var request = HTTPClientRequest(url: base + path)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: form))
            return try await client.execute(request, timeout: .seconds(10))
        }
        let tokens = try await post(
            "/contoso.onmicrosoft.com/oauth2/v2.0/token",
            "client_id=6731de76-14a6-49ae-97bc-6eba6914391e&grant_type=authorization_code&code=\(encode(code))"
                + "&redirect_uri=\(encode(redirect))"
        )
        let body = try JSONSerialization.jsonObject(with: Data(try await text(tokens).utf8)) as? [String: Any]
        guard let token = body?["access_token"] as? String, let refresh = body?["refresh_token"] as? String else {
            throw BenchmarkError("no access or refresh token")
        }
        return (token, refresh)
    }
}

/// Each connection's latest refresh token.
final class Chains: @unchecked Sendable {
    private let lock = NSLock()
    private var tokens: [String]
    init(_ tokens: [String]) { self.tokens = tokens }
    func get(_ index: Int) -> String { lock.withLock { tokens[index] } }
    func set(_ index: Int, _ token: String) { lock.withLock { tokens[index] = token } }
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
