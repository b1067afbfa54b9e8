import FoundationEssentials
import SesameSystem

/// Sends one HTTP request. The account store, Graph and the task API all go through this
/// protocol, so unit tests use a fake and end-to-end tests the real ``AsyncHTTPClientTransport``.
public protocol HTTPTransport: Sendable {
    /// Sends a request and collects the whole response body.
    /// - Parameter progress: called as the body goes out and the response comes in.
    /// - Throws: ``HTTPTransportError`` when no response arrived.
    func send(_ request: HTTPRequest, progress: (@Sendable (TransferProgress) -> Void)?) async throws -> HTTPResponse
}

extension HTTPTransport {
    /// Sends a request without progress reports.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await send(request, progress: nil)
    }
}

/// Header fields in order, names compared case-insensitively.
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    private var fields: [Field]

    /// One header field.
    public struct Field: Sendable, Hashable {
        /// The field name as sent.
        public var name: String
        /// The field value.
        public var value: String
    }

    /// Headers from name–value pairs.
    public init(_ pairs: [(String, String)] = []) {
        fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The first value of a field, or `nil`; setting replaces every field of that name.
    public subscript(name: String) -> String? {
        get { fields.first { $0.name.equalsIgnoringCase(name) }?.value }
        set {
            fields.removeAll { $0.name.equalsIgnoringCase(name) }
            if let newValue { fields.append(Field(name: name, value: newValue)) }
        }
    }

    /// Adds a field, keeping any of the same name.
    public mutating func add(_ name: String, _ value: String) {
        fields.append(Field(name: name, value: value))
    }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }
}

/// An HTTP request.
public struct HTTPRequest: Sendable, Hashable {
    /// `GET`, `POST`, ….
    public var method: String
    /// The full URL, query included.
    public var url: URL
    /// Header fields.
    public var headers: HTTPHeaders
    /// The body, if any.
    public var body: Data?

    /// A request; see each property.
    public init(method: String, url: URL, headers: HTTPHeaders = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

extension HTTPRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The request as logs may show it: method, URL with query values redacted, header names
    /// (values of `Authorization`, `Cookie` and the like never), the body's size only — a token
    /// request's form carries the code, the verifier or a refresh token.
    public var description: String {
        let names = headers.map(\.name)
        var text = "\(method) \(url.redactingQuery)"
        if !names.isEmpty { text += " headers: \(names.joined(separator: ", "))" }
        if let body { text += " body: \(body.count) bytes <redacted>" }
        return text
    }

    public var debugDescription: String { description }

    /// What `dump` and debuggers show: the description, not the stored properties.
    public var customMirror: Mirror { Mirror(self, children: ["redacted": description], displayStyle: .struct) }
}

/// An HTTP response with its whole body.
public struct HTTPResponse: Sendable, Hashable {
    /// The status code.
    public var status: Int
    /// Header fields.
    public var headers: HTTPHeaders
    /// The body.
    public var body: Data
    /// The status line's reason phrase; the B2C sample's task API puts its 401 reason there.
    public var reasonPhrase: String?

    /// A response; see each property.
    public init(status: Int, headers: HTTPHeaders = [:], body: Data = Data(), reasonPhrase: String? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.reasonPhrase = reasonPhrase
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }
}

/// How far a transfer has come.
public struct TransferProgress: Sendable, Hashable {
    /// Which way the bytes go.
    public enum Direction: Sendable, Hashable {
        /// The request body going out.
        case upload
        /// The response body coming in.
        case download
    }
    /// Which way.
    public var direction: Direction
    /// Bytes transferred so far.
    public var completedBytes: Int64
    /// The total, when known (`Content-Length`).
    public var totalBytes: Int64?

    /// Progress; see each property.
    public init(direction: Direction, completedBytes: Int64, totalBytes: Int64?) {
        self.direction = direction
        self.completedBytes = completedBytes
        self.totalBytes = totalBytes
    }

    /// The completed fraction in 0…1, when the total is known.
    public var fractionCompleted: Double? {
        guard let totalBytes, totalBytes > 0 else { return nil }
        return min(1, Double(completedBytes) / Double(totalBytes))
    }
}

/// No HTTP response arrived: the connection failed or timed out.
public struct HTTPTransportError: Error, Sendable, CustomStringConvertible {
    /// The host that was asked (never the query, which may carry a secret).
    public let host: String
    /// What went wrong, in words.
    public let reason: String
    /// What went wrong, for the sentence a user reads.
    public let kind: Kind
    /// The proxy the request went through (`host:port`, never its credentials), if any.
    public var proxy: String?

    /// The ways an exchange fails without an HTTP answer.
    public enum Kind: Sendable, Equatable {
        /// No connection, for a reason none of the other kinds names.
        case unreachable
        /// The host refused the connection (nothing listens on its port).
        case connectionRefused
        /// The host's name resolves to no address.
        case noSuchHost
        /// No route to the host: the computer is offline or the network is down.
        case networkUnreachable
        /// The server's certificate is not trusted on this computer (an unknown certificate
        /// authority, or a certificate for another host).
        case untrustedCertificate
        /// The secure connection could not be set up for another reason.
        case tlsFailed
        /// The server did not answer (or connect) by the exchange's deadline.
        case timedOut
        /// The answer is larger than the client reads.
        case tooLarge
        /// The connection broke mid-answer, or the answer was not HTTP.
        case brokenAnswer
        /// The proxy could not be reached (refused, unknown, unreachable).
        case proxyUnreachable
        /// The proxy would not open a tunnel to the host (a non-2xx answer to `CONNECT`).
        case proxyRefused
        /// The proxy asks for credentials Sesame does not have, or refused the ones it gave (407).
        case proxyAuthenticationRequired
    }

    /// An error for a request to `url`.
    public init(url: URL, reason: String, kind: Kind = .unreachable, proxy: String? = nil) {
        self.host = Self.hostAndPort(of: url)
        self.reason = reason
        self.kind = kind
        self.proxy = proxy
    }

    /// `host`, or `host:port` when the port is not the scheme's own (443 for https, 80 for
    /// http): what a user sees in an address bar, and the same in every sentence about it.
    public static func hostAndPort(of url: URL) -> String {
        guard let host = url.host, !host.isEmpty else { return url.absoluteString }
        let defaultPort = ["https": 443, "http": 80][url.scheme?.lowercased() ?? ""]
        guard let port = url.port, port != defaultPort else { return host }
        return "\(host):\(port)"
    }

    public var description: String {
        let through = proxy.map { " through the proxy at \($0)" } ?? ""
        return "the exchange with \(host)\(through) failed: \(reason)"
    }
}
