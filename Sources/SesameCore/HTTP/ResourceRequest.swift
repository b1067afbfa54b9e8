import FoundationEssentials

/// A request to a protected resource: the seeds' `NXOAuth2Request performMethod:onResource:
/// usingParameters:withAccount:…` arguments as a value.
public struct ResourceRequest: Sendable, Hashable {
    /// How ``parameters`` travel.
    public enum ParameterEncoding: Sendable, Hashable {
        /// In the query for `GET`, `DELETE` and `HEAD`; as a form body otherwise (NXOAuth2's rule).
        case automatic
        /// Always in the query.
        case query
        /// `application/x-www-form-urlencoded` body.
        case form
        /// A JSON object body of string values (the task API's `{"Text": …}`).
        case json
    }

    /// One parameter. Values are never pasted into the URL by hand: the seeds warn that
    /// characters not allowed in a URI are dropped that way.
    public struct Parameter: Sendable, Hashable {
        /// The name (`$filter`).
        public var name: String
        /// The value, unescaped.
        public var value: String
        /// A name–value pair.
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// `GET`, `POST`, `DELETE`, ….
    public var method: String
    /// The resource.
    public var url: URL
    /// Parameters, in order.
    public var parameters: [Parameter]
    /// How parameters travel.
    public var parameterEncoding: ParameterEncoding
    /// Extra header fields (Graph's `ConsistencyLevel`).
    public var headers: HTTPHeaders
    /// A prepared body, sent as is (parameters then go in the query).
    public var body: Data?
    /// The scopes the token must carry; the account type's own when `nil`.
    public var scopes: [String]?

    /// A request; see each property.
    public init(
        method: String = "GET", url: URL, parameters: [Parameter] = [], parameterEncoding: ParameterEncoding = .automatic,
        headers: HTTPHeaders = [:], body: Data? = nil, scopes: [String]? = nil
    ) {
        self.method = method
        self.url = url
        self.parameters = parameters
        self.parameterEncoding = parameterEncoding
        self.headers = headers
        self.body = body
        self.scopes = scopes
    }

    /// The HTTP request, without the `Authorization` header.
    func httpRequest() throws -> HTTPRequest {
        var headers = headers
        if headers["Accept"] == nil { headers["Accept"] = "application/json" }
        let pairs = parameters.map { ($0.name, $0.value) }
        var encoding = parameterEncoding
        if encoding == .automatic {
            encoding = ["GET", "DELETE", "HEAD"].contains(method.uppercased()) || body != nil ? .query : .form
        }
        switch encoding {
        case .automatic, .query:
            return HTTPRequest(method: method, url: FormEncoding.url(url, appending: pairs), headers: headers, body: body)
        case .form:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            return HTTPRequest(method: method, url: url, headers: headers, body: Data(FormEncoding.encode(pairs).utf8))
        case .json:
            headers["Content-Type"] = "application/json"
            let object = Dictionary(pairs, uniquingKeysWith: { $1 })
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            return HTTPRequest(method: method, url: url, headers: headers, body: try encoder.encode(object))
        }
    }
}
