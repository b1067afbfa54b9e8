import FoundationEssentials
import Logging
import SesameSystem

/// Calls protected resources with an account's token: attaches `Authorization: Bearer …`,
/// refreshes once and retries on a 401, and waits as told by `Retry-After` on 429 and 503.
public struct AuthorizedHTTPClient: Sendable {
    /// The store that hands out tokens.
    public let store: AccountStore
    private let transport: any HTTPTransport
    private let sleep: @Sendable (Duration) async throws -> Void
    private let logger: Logger

    /// How many times a throttled request (429/503 with `Retry-After`) is retried.
    public var maximumThrottleRetries = 3
    /// The longest `Retry-After` that is waited out; a longer one is returned to the caller.
    public var maximumRetryAfter: Duration = .seconds(60)

    /// A client over a store and a transport.
    /// - Parameter sleep: how to wait for `Retry-After`; tests record instead of waiting.
    public init(
        store: AccountStore,
        transport: any HTTPTransport = AsyncHTTPClientTransport(),
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        logger: Logger = Logger(label: "sesame.http")
    ) {
        self.store = store
        self.transport = transport
        self.sleep = sleep
        self.logger = logger
    }

    /// Performs a request as an account and returns whatever the resource answered (after the
    /// one 401 retry and any throttling retries); the caller interprets the status.
    /// - Parameter progress: upload and download progress of large bodies.
    /// - Throws: ``AccountStoreError`` when no token can be had (`interactionRequired`),
    ///   ``HTTPTransportError`` when the resource cannot be reached.
    public func perform(
        _ request: ResourceRequest, as account: Account, progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws -> HTTPResponse {
        var httpRequest = try request.httpRequest()
        var token = try await store.accessToken(for: account, scopes: request.scopes)
        var refreshedAfter401 = false
        var throttleRetries = 0
        while true {
            httpRequest.headers["Authorization"] = token.authorizationHeaderValue
            let started = ContinuousClock.now
            let response = try await transport.send(httpRequest, progress: progress)
            logger.debug(
                "resource call",
                metadata: [
                    "method": "\(request.method)", "url": "\(httpRequest.url.redactingQuery)", "status": "\(response.status)",
                    "elapsed": "\(ContinuousClock.now - started)",
                ])
            if response.status == 401, !refreshedAfter401 {
                refreshedAfter401 = true
                token = try await store.accessToken(for: account, scopes: request.scopes, forceRefresh: true)
                continue
            }
            // A throttled request is sent again only when sending it twice is harmless: a safe or
            // idempotent method, or one carrying an `Idempotency-Key` the server deduplicates by.
            if response.status == 429 || response.status == 503, Self.isRepeatable(httpRequest), throttleRetries < maximumThrottleRetries,
                let delay = Self.retryAfter(response.headers["Retry-After"], now: Date()), delay <= maximumRetryAfter
            {
                throttleRetries += 1
                logger.notice("throttled; waiting", metadata: ["status": "\(response.status)", "retryAfter": "\(delay)"])
                try await sleep(delay)
                continue
            }
            return response
        }
    }

    /// Whether sending `request` twice has the effect of sending it once (RFC 9110 §9.2.2), or
    /// the server is asked to make it so (`Idempotency-Key`).
    static func isRepeatable(_ request: HTTPRequest) -> Bool {
        ["GET", "HEAD", "OPTIONS", "PUT", "DELETE"].contains(request.method.uppercased()) || request.headers["Idempotency-Key"] != nil
    }

    /// Reads `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
    public static func retryAfter(_ value: String?, now: Date) -> Duration? {
        guard let value = value?.trimmingWhitespace(), !value.isEmpty else { return nil }
        if let seconds = Int(value) { return .seconds(max(0, seconds)) }
        guard let date = HTTPDate.parse(value) else { return nil }
        return .seconds(max(0, Int(date.timeIntervalSince(now).rounded(.up))))
    }
}
