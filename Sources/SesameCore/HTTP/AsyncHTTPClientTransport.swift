import AsyncHTTPClient
import FoundationEssentials
import NIOCore
import NIOHTTP1

/// The real transport: AsyncHTTPClient (SwiftNIO), TLS verified against the system's trust
/// store, each request through the proxy its ``ProxyResolver`` names for its URL. Every exchange
/// is bounded: it never follows a redirect (a token request's form — the code, the verifier, a
/// refresh token — must not be re-sent elsewhere, and an API's answer is never a redirect Sesame
/// needs), a whole exchange, body included, ends by its deadline however slowly the body
/// trickles, and a body larger than the cap is refused. A connection that cannot be made fails
/// at once with what happened (refused, no such host, an untrusted certificate, the proxy's
/// refusal): it is not tried again until the connect timeout, as AsyncHTTPClient does by default.
public struct AsyncHTTPClientTransport: HTTPTransport {
    /// The client the caller gave; `nil` for the process's bounded ones, one per proxy route, made
    /// at the first exchange that takes it (an app that only opens its window starts no threads).
    private let givenClient: HTTPClient?
    private let proxyResolver: any ProxyResolver
    private let timeout: Duration
    private let maximumBodySize: Int

    /// Bodies larger than this go out in chunks so that upload progress can be reported.
    static let progressChunkSize = 64 * 1024

    /// The answer Sesame reads at most by default: 16 MiB (a Graph page of 999 users is about 1 MiB).
    public static let defaultMaximumBodySize = 16 * 1024 * 1024

    /// A transport on the process's bounded clients.
    /// - Parameters:
    ///   - proxyResolver: the route of each request; the app passes the desktop's
    ///     (`DesktopProxyResolver`), a library user without one gets direct connections.
    ///   - timeout: the longest a whole exchange may take, the body's last byte included.
    ///   - maximumBodySize: the largest answer read; a larger one is an error.
    public init(
        proxyResolver: any ProxyResolver = FixedProxyResolver(.direct), timeout: Duration = .seconds(60),
        maximumBodySize: Int = defaultMaximumBodySize
    ) {
        givenClient = nil
        self.proxyResolver = proxyResolver
        self.timeout = timeout
        self.maximumBodySize = maximumBodySize
    }

    /// A transport on a given client; the caller shuts that client down (and decides whether it
    /// follows redirects and which proxy it takes).
    public init(client: HTTPClient, timeout: Duration = .seconds(60), maximumBodySize: Int = defaultMaximumBodySize) {
        givenClient = client
        proxyResolver = FixedProxyResolver(.direct)
        self.timeout = timeout
        self.maximumBodySize = maximumBodySize
    }

    public func send(_ request: HTTPRequest, progress: (@Sendable (TransferProgress) -> Void)?) async throws -> HTTPResponse {
        let timeout = timeout
        let route = givenClient == nil ? await proxyResolver.route(for: request.url) : .direct
        do {
            return try await withThrowingTaskGroup(of: HTTPResponse?.self) { group in
                group.addTask { try await exchange(request, route: route, progress: progress) }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let response = first else {
                    throw HTTPTransportError(url: request.url, reason: "the server did not answer in time", kind: .timedOut)
                }
                return response
            }
        } catch let error as HTTPTransportError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw ConnectionFailure.classify(error, url: request.url, route: route)
        }
    }

    private func exchange(
        _ request: HTTPRequest, route: ProxyRoute, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> HTTPResponse {
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for field in request.headers { outgoing.headers.add(name: field.name, value: field.value) }
        if let body = request.body {
            if let progress, body.count > Self.progressChunkSize {
                outgoing.body = .stream(ChunkedBody(data: body, progress: progress), length: .known(Int64(body.count)))
            } else {
                outgoing.body = .bytes(ByteBuffer(bytes: body))
                progress?(TransferProgress(direction: .upload, completedBytes: Int64(body.count), totalBytes: Int64(body.count)))
            }
        }
        let client = givenClient ?? ClientPool.shared.client(for: route)
        let response = try await client.execute(outgoing, timeout: .seconds(Int64(timeout.components.seconds) + 1))
        let total = response.headers.first(name: "content-length").flatMap(Int64.init)
        let tooLarge = HTTPTransportError(
            url: request.url, reason: "the answer is larger than \(maximumBodySize / 1024 / 1024) MiB, more than Sesame reads",
            kind: .tooLarge)
        if let total, total > maximumBodySize { throw tooLarge }
        var collected = Data()
        if let total, total > 0 { collected.reserveCapacity(Int(total)) }
        for try await chunk in response.body {
            guard collected.count + chunk.readableBytes <= maximumBodySize else { throw tooLarge }
            collected.append(contentsOf: chunk.readableBytesView)
            progress?(TransferProgress(direction: .download, completedBytes: Int64(collected.count), totalBytes: total))
        }
        var headers = HTTPHeaders()
        for (name, value) in response.headers { headers.add(name, value) }
        return HTTPResponse(
            status: Int(response.status.code), headers: headers, body: collected, reasonPhrase: response.status.reasonPhrase)
    }

    /// A body handed to AsyncHTTPClient chunk by chunk, reporting each chunk as it is taken.
    private struct ChunkedBody: AsyncSequence, Sendable {
        typealias Element = ByteBuffer
        let data: Data
        let progress: @Sendable (TransferProgress) -> Void

        struct AsyncIterator: AsyncIteratorProtocol {
            let data: Data
            let progress: @Sendable (TransferProgress) -> Void
            var offset = 0

            mutating func next() async -> ByteBuffer? {
                guard offset < data.count else { return nil }
                let end = Swift.min(offset + AsyncHTTPClientTransport.progressChunkSize, data.count)
                let chunk = ByteBuffer(bytes: data[data.startIndex + offset..<data.startIndex + end])
                offset = end
                progress(TransferProgress(direction: .upload, completedBytes: Int64(offset), totalBytes: Int64(data.count)))
                return chunk
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(data: data, progress: progress) }
    }
}
