import Foundation
import SesameCore

/// The app's HTTP transport: every request of the account store (discovery, keys, the token
/// exchange) and of the samples (Graph, the task API) goes through it, and each one becomes a
/// flow event with its method, redacted URL, status and latency.
public struct TracingTransport: HTTPTransport {
    private let base: any HTTPTransport
    private let trace: FlowTrace

    public init(base: any HTTPTransport = AsyncHTTPClientTransport(), trace: FlowTrace) {
        self.base = base
        self.trace = trace
    }

    public func send(_ request: HTTPRequest, progress: (@Sendable (TransferProgress) -> Void)?) async throws -> HTTPResponse {
        let started = ContinuousClock.now
        let event = Self.eventName(for: request.url)
        let url = request.url.redactingQuery
        do {
            let response = try await base.send(request, progress: progress)
            let milliseconds = Self.milliseconds(since: started)
            let trace = trace
            await MainActor.run {
                trace.record(
                    event, [("method", request.method), ("url", url), ("status", String(response.status)), ("ms", String(milliseconds))])
            }
            return response
        } catch {
            let milliseconds = Self.milliseconds(since: started)
            let trace = trace
            let reason = "\(error)"
            await MainActor.run {
                trace.record(event, [("method", request.method), ("url", url), ("error", reason), ("ms", String(milliseconds))])
            }
            throw error
        }
    }

    /// `token-request` for the token endpoint, `discovery` for metadata and keys, `api-call` otherwise.
    static func eventName(for url: URL) -> String {
        let path = url.path
        if path.hasSuffix("/token") { return "token-request" }
        if path.contains("/.well-known/") || path.hasSuffix("/keys") { return "discovery" }
        return "api-call"
    }

    static func milliseconds(since start: ContinuousClock.Instant) -> Int {
        let elapsed = start.duration(to: .now)
        return Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
    }
}
