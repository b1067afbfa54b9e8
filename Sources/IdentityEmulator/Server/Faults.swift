import FoundationEssentials
import HTTPTypes
import Hummingbird

/// What the emulator does wrong on purpose, so that clients are tested against the failures a
/// real network and real services produce: `identity-emulator --faults SPEC`, or
/// `POST /.emulator/faults` with the SPEC as its body while running (an empty body clears it).
///
/// A SPEC is a comma-separated list of `FAMILY:KIND[=VALUE][@RATE]`, plus `skew=±SECONDS`:
/// - FAMILY: `signin` (pages), `token`, `discovery` (metadata and keys), `graph`, `tasks`, `all`.
/// - KIND: `status=CODE` (`status=429/5`: with `Retry-After: 5`), `latency=MS` (`100ms` or `1s`),
///   `drop` (the connection closes mid-answer), `truncate`, `non-json`, `html` (a proxy's error
///   page), `trickle` (a byte every 100 ms), `oversized` (32 MiB of whitespace first),
///   `revoke-refresh` (refresh grants answered `invalid_grant`, AADSTS50173).
/// - RATE: the share of matching requests hit, 0 to 1 (default 1), drawn from `--seed`, so a run
///   is repeatable.
/// - `skew=600`: the emulator's clock runs 600 s ahead (negative: behind) in every token.
public struct FaultPlan: Sendable, Equatable {
    /// A group of endpoints, as clients see them.
    public enum Family: String, Sendable, CaseIterable {
        case signin, token, discovery, graph, tasks, all
    }

    /// One fault.
    public enum Kind: Sendable, Equatable {
        case status(Int, retryAfter: Int?)
        case latency(Duration)
        case drop, truncate, nonJSON, html, trickle, oversized, revokeRefresh
    }

    /// A fault on a family, for a share of its requests.
    public struct Rule: Sendable, Equatable {
        public var family: Family
        public var kind: Kind
        public var rate: Double
    }

    public var rules: [Rule] = []
    /// Seconds the clock runs ahead (negative: behind).
    public var skew: TimeInterval = 0

    public init(rules: [Rule] = [], skew: TimeInterval = 0) {
        self.rules = rules
        self.skew = skew
    }

    /// Why a SPEC could not be read.
    public struct ParseError: Error, CustomStringConvertible, Equatable {
        public let description: String
    }

    /// Reads a SPEC (see the type's documentation).
    public static func parse(_ text: String) throws(ParseError) -> FaultPlan {
        var plan = FaultPlan()
        for item in text.split(separator: ",").map({ $0.trimmingWhitespace() }) where !item.isEmpty {
            if item.hasPrefix("skew=") {
                guard let seconds = Double(item.dropFirst(5).replacing("s", with: "")), abs(seconds) <= 86_400 else {
                    throw ParseError(description: "'\(item)': skew needs seconds between -86400 and 86400, as skew=600")
                }
                plan.skew = seconds
                continue
            }
            let parts = item.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2, let family = Family(rawValue: parts[0]) else {
                throw ParseError(
                    description: "'\(item)': start with a family (\(Family.allCases.map(\.rawValue).joined(separator: ", "))) and a colon")
            }
            var rest = parts[1]
            var rate = 1.0
            if let at = rest.firstIndex(of: "@") {
                guard let value = Double(rest[rest.index(after: at)...]), (0...1).contains(value) else {
                    throw ParseError(description: "'\(item)': the rate after @ is a share from 0 to 1, as @0.2")
                }
                rate = value
                rest = String(rest[..<at])
            }
            let (name, value) = rest.split(separator: "=", maxSplits: 1).map(String.init).splitPair()
            plan.rules.append(Rule(family: family, kind: try kind(name, value, item: item), rate: rate))
        }
        return plan
    }

    private static func kind(_ name: String, _ value: String?, item: String) throws(ParseError) -> Kind {
        switch (name, value) {
        case ("status", let value?):
            let numbers = value.split(separator: "/").map { Int($0) }
            guard let code = numbers.first ?? nil, (400...599).contains(code), numbers.count <= 2 else {
                throw ParseError(description: "'\(item)': status needs an error code from 400 to 599, as status=503 or status=429/5")
            }
            let retryAfter = numbers.count == 2 ? numbers[1] : nil
            if numbers.count == 2, retryAfter == nil { throw ParseError(description: "'\(item)': Retry-After is whole seconds") }
            return .status(code, retryAfter: retryAfter)
        case ("latency", let value?):
            let milliseconds =
                value.hasSuffix("ms")
                ? Double(value.dropLast(2)) : value.hasSuffix("s") ? Double(value.dropLast()).map { $0 * 1000 } : Double(value)
            guard let milliseconds, (0...600_000).contains(milliseconds) else {
                throw ParseError(description: "'\(item)': latency needs a time up to 600s, as latency=100ms")
            }
            return .latency(.milliseconds(Int(milliseconds)))
        case ("drop", nil): return .drop
        case ("truncate", nil): return .truncate
        case ("non-json", nil): return .nonJSON
        case ("html", nil): return .html
        case ("trickle", nil): return .trickle
        case ("oversized", nil): return .oversized
        case ("revoke-refresh", nil): return .revokeRefresh
        default:
            throw ParseError(
                description: "'\(item)': the fault is one of status=CODE, latency=TIME, drop, truncate, non-json, html, trickle, "
                    + "oversized, revoke-refresh")
        }
    }

    /// The family of a request path; `nil` for the emulator's own controls (never faulted).
    static func family(ofPath path: String) -> Family? {
        if path.hasPrefix("/.emulator/") || path == "/" { return nil }
        if path.hasSuffix("/oauth2/v2.0/token") { return .token }
        if path.contains("/.well-known/") || path.hasSuffix("/discovery/v2.0/keys") { return .discovery }
        if path.hasPrefix("/v1.0/") || path.hasPrefix("/oidc/") { return .graph }
        if path.hasPrefix("/api/tasks") { return .tasks }
        return .signin
    }
}

extension Array where Element == String {
    fileprivate func splitPair() -> (String, String?) { (self.first ?? "", self.count > 1 ? self[1] : nil) }
}

/// The faults in force and the seeded draw that picks which requests they hit.
final class FaultInjector: @unchecked Sendable {
    private let lock = Lock()
    private var plan: FaultPlan
    private var random: SeededGenerator
    private let clock: EmulatorClock

    init(plan: FaultPlan, seed: String, clock: EmulatorClock) {
        self.plan = plan
        self.clock = clock
        random = SeededGenerator(seed: seed)
        clock.setSkew(plan.skew)
    }

    /// Replaces the plan (the control endpoint).
    func replace(with plan: FaultPlan) {
        lock.withLock { self.plan = plan }
        clock.setSkew(plan.skew)
    }

    /// Requests received so far by family, counted as they arrive (before any latency): a test
    /// knows a request is under way while its answer is held back.
    private var received: [FaultPlan.Family: Int] = [:]

    /// `GET /.emulator/requests`: ``received``, by family name.
    var receivedCounts: [(String, Int)] {
        lock.withLock { FaultPlan.Family.allCases.filter { $0 != .all }.map { ($0.rawValue, received[$0] ?? 0) } }
    }

    /// The faults that hit this request of `family` (which is counted).
    func draw(for family: FaultPlan.Family) -> [FaultPlan.Kind] {
        lock.withLock {
            received[family, default: 0] += 1
            return plan.rules.filter { $0.family == family || $0.family == .all }.compactMap { rule in
                rule.rate >= 1 || Double(random.next() >> 11) / Double(1 << 53) < rule.rate ? rule.kind : nil
            }
        }
    }
}

/// Applies the injector's faults around every endpoint but the emulator's own controls.
struct FaultMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let injector: FaultInjector

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let family = FaultPlan.family(ofPath: request.uri.path) else { return try await next(request, context) }
        let faults = injector.draw(for: family)
        guard !faults.isEmpty else { return try await next(request, context) }
        var request = request
        for fault in faults {
            switch fault {
            case .latency(let delay): try await Task.sleep(for: delay)
            case .status(let code, let retryAfter): return Self.failure(code, retryAfter: retryAfter, family: family)
            case .revokeRefresh where family == .token:
                let body = try await request.collectBody(upTo: 1 << 20)
                if String(buffer: body).contains("grant_type=refresh_token") { return Self.revoked() }
            default: break
            }
        }
        let response = try await next(request, context)
        guard let shape = faults.first(where: { [.drop, .truncate, .nonJSON, .html, .trickle, .oversized].contains($0) }) else {
            return response
        }
        var bytes = try await Self.collect(response.body)
        var headers = response.headers
        headers[.contentLength] = nil
        switch shape {
        case .drop:
            let half = bytes.readSlice(length: bytes.readableBytes / 2) ?? ByteBuffer()
            return Response(
                status: response.status, headers: headers,
                body: ResponseBody { writer in
                    try await writer.write(half)
                    throw CancellationError()
                })
        case .truncate:
            return Response(
                status: response.status, headers: headers, body: .init(byteBuffer: bytes.readSlice(length: bytes.readableBytes / 2)!))
        case .nonJSON:
            return Response(status: response.status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: "{\"value\": [")))
        case .html:
            headers[.contentType] = "text/html; charset=utf-8"
            let page = "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>"
            return Response(status: .badGateway, headers: headers, body: .init(byteBuffer: ByteBuffer(string: page)))
        case .trickle:
            let whole = bytes
            return Response(
                status: response.status, headers: headers,
                body: ResponseBody { writer in
                    var bytes = whole
                    while let byte = bytes.readSlice(length: 1) {
                        try await writer.write(byte)
                        try await Task.sleep(for: .milliseconds(100))
                    }
                    try await writer.finish(nil)
                })
        case .oversized:
            let padding = ByteBuffer(repeating: UInt8(ascii: " "), count: 1 << 20)
            let original = bytes
            return Response(
                status: response.status, headers: headers,
                body: ResponseBody { writer in
                    for _ in 0..<32 { try await writer.write(padding) }
                    try await writer.write(original)
                    try await writer.finish(nil)
                })
        default:
            return response
        }
    }

    /// An error answer in the family's own shape: Entra's JSON for the identity endpoints,
    /// Graph's for Graph, the task API's text otherwise.
    static func failure(_ code: Int, retryAfter: Int?, family: FaultPlan.Family) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        let body: String
        switch family {
        case .signin:
            // The identity pages fail as Microsoft's do: an HTML page the user reads.
            headers[.contentType] = "text/html; charset=utf-8"
            body =
                "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Sign in to your account</title></head><body>"
                + "<h1 id=\"errorTitle\">Sorry, but we’re having trouble signing you in.</h1>"
                + "<p id=\"errorDescription\">AADSTS90033: A transient error has occurred. Please try again.</p></body></html>"
        case .graph:
            body =
                #"{"error":{"code":"ServiceUnavailable","message":"Injected fault: HTTP \#(code).","innerError":{"request-id":"\#(Identifiers.guid())"}}}"#
        case .tasks:
            body = #"{"Message":"Injected fault: HTTP \#(code)."}"#
        default:
            body =
                #"{"error":"temporarily_unavailable","error_description":"AADSTS90033: A transient error has occurred. Please try again.","error_codes":[90033]}"#
        }
        return Response(status: .init(code: code), headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// A refresh grant refused as Entra refuses a revoked refresh token.
    static func revoked() -> Response {
        let body =
            #"{"error":"invalid_grant","error_description":"AADSTS50173: The provided grant has expired due to it being revoked, a fresh auth token is needed.","error_codes":[50173]}"#
        return Response(
            status: .badRequest, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// The bytes a response body writes.
    static func collect(_ body: ResponseBody) async throws -> ByteBuffer {
        final class Collected: @unchecked Sendable { var buffer = ByteBuffer() }
        struct Collector: ResponseBodyWriter {
            let collected: Collected
            mutating func write(_ part: ByteBuffer) async throws {
                var part = part
                collected.buffer.writeBuffer(&part)
            }
            consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
        }
        let collected = Collected()
        try await body.write(Collector(collected: collected))
        return collected.buffer
    }
}
