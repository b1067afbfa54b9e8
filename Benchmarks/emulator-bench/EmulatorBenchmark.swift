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

        let token = try await graphToken(base: base)
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
        try await client.shutdown()
        if !met { exit(1) }
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
    static func graphToken(base: String) async throws -> String {
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
            try await client.execute(HTTPClientRequest(url: "\(base)/common/oauth2/v2.0/authorize?\(query)"), timeout: .seconds(10)))
        guard let range = page.range(of: #"name="ctx" value="([^"]*)""#, options: .regularExpression) else {
            throw BenchmarkError("no sign-in page")
        }
        let ctx = page[range].split(separator: "\"")[3]
        _ = try await post("/common/login", "ctx=\(ctx)&step=username&loginfmt=alex%40contoso.onmicrosoft.com")
        _ = try await post("/common/login", "ctx=\(ctx)&step=password&passwd=Passw0rd%21")
        _ = try await post("/common/login", "ctx=\(ctx)&step=kmsi&kmsi=no")
        let consented = try await post("/common/login", "ctx=\(ctx)&step=consent&consent=accept")
        guard let location = consented.headers.first(name: "Location"),
            let code = URLComponents(string: location)?.queryItems?.first(where: { $0.name == "code" })?.value
        else {
            throw BenchmarkError("sign-in did not redirect")
        }
        let tokens = try await post(
            "/common/oauth2/v2.0/token",
            "client_id=6731de76-14a6-49ae-97bc-6eba6914391e&grant_type=authorization_code&code=\(encode(code))"
                + "&redirect_uri=\(encode(redirect))"
        )
        let body = try JSONSerialization.jsonObject(with: Data(try await text(tokens).utf8)) as? [String: Any]
        guard let token = body?["access_token"] as? String else { throw BenchmarkError("no access token") }
        return token
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
