import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The real transport: AsyncHTTPClient (SwiftNIO), TLS verified against the system's trust
/// store (plus any extra certificate authority given, such as the emulator's).
public struct AsyncHTTPClientTransport: HTTPTransport {
    private let client: HTTPClient
    private let timeout: TimeAmount

    /// Bodies larger than this go out in chunks so that upload progress can be reported.
    static let progressChunkSize = 64 * 1024

    /// A transport on AsyncHTTPClient's shared client.
    public init(timeout: Duration = .seconds(60)) {
        self.client = HTTPClient.shared
        self.timeout = .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000)
    }

    /// A transport on a given client; the caller shuts that client down.
    public init(client: HTTPClient, timeout: Duration = .seconds(60)) {
        self.client = client
        self.timeout = .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000)
    }

    public func send(_ request: HTTPRequest, progress: (@Sendable (TransferProgress) -> Void)?) async throws -> HTTPResponse {
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
        do {
            let response = try await client.execute(outgoing, timeout: timeout)
            let total = response.headers.first(name: "content-length").flatMap(Int64.init)
            var collected = Data()
            if let total, total > 0, total < 64 * 1024 * 1024 { collected.reserveCapacity(Int(total)) }
            for try await chunk in response.body {
                collected.append(contentsOf: chunk.readableBytesView)
                progress?(TransferProgress(direction: .download, completedBytes: Int64(collected.count), totalBytes: total))
            }
            var headers = HTTPHeaders()
            for (name, value) in response.headers { headers.add(name, value) }
            return HTTPResponse(
                status: Int(response.status.code), headers: headers, body: collected, reasonPhrase: response.status.reasonPhrase)
        } catch let error as HTTPClientError {
            throw HTTPTransportError(url: request.url, reason: Self.describe(error))
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw HTTPTransportError(url: request.url, reason: "\(error)")
        }
    }

    private static func describe(_ error: HTTPClientError) -> String {
        switch error {
        case .deadlineExceeded, .readTimeout, .connectTimeout: "the server did not answer in time"
        case .remoteConnectionClosed: "the server closed the connection"
        case .cancelled: "the request was cancelled"
        default: "\(error)"
        }
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
