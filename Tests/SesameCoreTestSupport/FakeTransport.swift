import Foundation
import SesameCore

/// A transport that answers from a handler and records every request.
public final class FakeTransport: HTTPTransport, @unchecked Sendable {
    public typealias Handler = @Sendable (HTTPRequest) async throws -> HTTPResponse
    private let lock = NSLock()
    private var handler: Handler
    private var recorded: [HTTPRequest] = []

    public init(_ handler: @escaping Handler = { _ in HTTPResponse(status: 404) }) {
        self.handler = handler
    }

    public func setHandler(_ handler: @escaping Handler) {
        lock.withLock { self.handler = handler }
    }

    public var requests: [HTTPRequest] { lock.withLock { recorded } }

    public func send(_ request: HTTPRequest, progress: (@Sendable (TransferProgress) -> Void)?) async throws -> HTTPResponse {
        let handler = lock.withLock {
            recorded.append(request)
            return self.handler
        }
        if let body = request.body {
            progress?(TransferProgress(direction: .upload, completedBytes: Int64(body.count), totalBytes: Int64(body.count)))
        }
        let response = try await handler(request)
        progress?(
            TransferProgress(direction: .download, completedBytes: Int64(response.body.count), totalBytes: Int64(response.body.count)))
        return response
    }
}

extension HTTPRequest {
    /// The form body's fields.
    public var form: [String: String] {
        Dictionary(FormEncoding.decode(String(decoding: body ?? Data(), as: UTF8.self)), uniquingKeysWith: { $1 })
    }

    /// The query's fields.
    public var query: [String: String] {
        let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery ?? ""
        return Dictionary(FormEncoding.decode(query), uniquingKeysWith: { $1 })
    }
}

public func json(_ object: Any, status: Int = 200, headers: HTTPHeaders = ["Content-Type": "application/json"]) -> HTTPResponse {
    HTTPResponse(status: status, headers: headers, body: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
}

/// A fresh temporary directory, removed by the caller.
public func temporaryDirectory() -> URL {
    let url = FileManager.default.temporaryDirectory.appending(path: "sesame-tests-\(UUID().uuidString)", directoryHint: .isDirectory)
    try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
