import FoundationEssentials
import SesameCore

/// The app's HTTP transport: every request of the account store (discovery, keys, the token
/// exchange) and of the samples (Graph, the task API) goes through it, and each one becomes a
/// flow event with its method, redacted URL, status and latency. In step-through (``StepThrough``)
/// each request waits for the presenter first.
public struct TracingTransport: HTTPTransport {
    private let base: any HTTPTransport
    private let trace: FlowTrace

    public init(base: any HTTPTransport = AsyncHTTPClientTransport(), trace: FlowTrace) {
        self.base = base
        self.trace = trace
    }

    public func send(_ request: HTTPRequest, progress: (@Sendable (TransferProgress) -> Void)?) async throws -> HTTPResponse {
        let event = Self.eventName(for: request.url)
        let url = request.url.redactingQuery
        // In step-through the request waits for the presenter before it leaves: no connection
        // is open while it waits, and its latency counts from when it goes.
        if await trace.beforeStep(event, [("method", request.method), ("url", url)]) == .cancelled { throw CancellationError() }
        let started = ContinuousClock.now
        do {
            let response = try await base.send(request, progress: progress)
            let finished = ContinuousClock.now
            let fields = [
                ("method", request.method), ("url", url), ("status", String(response.status)),
                ("ms", String(Self.milliseconds(from: started, to: finished))),
            ]
            // The tokens of a token endpoint's answer, read for the inspector (``TokenReading``).
            let tokens =
                event == "token-request" && (200..<300).contains(response.status) ? TokenReading.events(ofTokenResponse: response.body) : []
            // Recorded on the main actor without waiting for it: the response goes on to its caller
            // at once, even while the window is busy drawing (the event keeps its own time).
            Task { @MainActor [trace] in
                trace.record(event, fields, at: finished)
                for token in tokens { trace.record("token-read", token, at: finished) }
            }
            return response
        } catch {
            let finished = ContinuousClock.now
            let fields = [
                ("method", request.method), ("url", url), ("error", "\(error)"),
                ("ms", String(Self.milliseconds(from: started, to: finished))),
            ]
            Task { @MainActor [trace] in trace.record(event, fields, at: finished) }
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

    static func milliseconds(from start: ContinuousClock.Instant, to end: ContinuousClock.Instant) -> Int {
        let elapsed = start.duration(to: end)
        return Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
    }
}
