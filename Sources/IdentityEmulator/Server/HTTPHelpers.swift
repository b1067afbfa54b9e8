import FoundationEssentials
import HTTPTypes
import Hummingbird
import NIOCore

extension HTTPField.Name {
    static let clientRequestID = Self("client-request-id")!
    /// The PRT's SSO credential as a header ([MS-OAPXBC] 2.2.1.1); browsers send it as a cookie.
    static let refreshTokenCredential = Self("x-ms-RefreshTokenCredential")!
    /// MSAL's `x-client-OS`: the client's platform, as Conditional Access reads it at the token endpoint.
    static let clientOS = Self("x-client-OS")!
    static let requestID = Self("request-id")!
    static let consistencyLevel = Self("ConsistencyLevel")!
    static let pragma = Self("Pragma")!
    static let xMSRequestID = Self("x-ms-request-id")!
    static let host = Self("Host")!
}

extension Response {
    static func html(_ page: HTML, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status,
            headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store, no-cache", .pragma: "no-cache"],
            body: .init(byteBuffer: ByteBuffer(string: page.text)))
    }

    static func json(_ value: JSON, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        if fields[.contentType] == nil { fields[.contentType] = "application/json; charset=utf-8" }
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: value.serialized)))
    }

    static func text(_ value: String, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "text/plain; charset=utf-8"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: value)))
    }

    static func found(_ location: String) -> Response {
        Response(status: .found, headers: [.location: location, .cacheControl: "no-store, no-cache", .pragma: "no-cache"])
    }
}

extension Request {
    /// The query string as form fields (`+` is a space).
    var queryFields: FormFields { FormFields(encoded: uri.query ?? "") }

    /// The body as form fields (`application/x-www-form-urlencoded`), at most 1 MiB.
    func formFields() async throws -> FormFields {
        FormFields(encoded: try await bodyText())
    }

    func bodyText(limit: Int = 1 << 20) async throws -> String {
        let buffer = try await body.collect(upTo: limit)
        return String(buffer: buffer)
    }

    /// The host name the client asked for, lower-cased, without the port: the `Host` header.
    /// On the wire HTTP/1's `Host` becomes the request's authority; Hummingbird's router test
    /// client sets the authority to `localhost` itself and passes a `Host` header through as a
    /// field, so a field wins.
    var hostName: String? {
        guard let authority = headers[.host] ?? head.authority, !authority.isEmpty else { return nil }
        if authority.hasPrefix("[") {
            // An IPv6 literal: `[::1]:8400`.
            guard let end = authority.firstIndex(of: "]") else { return authority.lowercased() }
            return String(authority[authority.index(after: authority.startIndex)..<end]).lowercased()
        }
        return String(authority.split(separator: ":", maxSplits: 1).first ?? Substring(authority)).lowercased()
    }

    /// The bearer token of `Authorization: Bearer …`, if any.
    var bearerToken: String? {
        guard let header = headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        var token = parts[1]
        while token.first == " " || token.first == "\t" { token = token.dropFirst() }
        while token.last == " " || token.last == "\t" { token = token.dropLast() }
        return token.isEmpty ? nil : String(token)
    }
}
