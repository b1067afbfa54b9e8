import FoundationEssentials
import SesameSystem

/// Searches an organisation's users through Microsoft Graph as an account.
public struct GraphUserDirectory: Sendable {
    /// How a search text becomes a filter.
    public enum SearchMode: Sendable, Hashable {
        /// The seed's filter: `startswith(givenName,'…')`.
        case givenName
        /// A people picker: `startswith` over displayName, givenName, surname, mail and
        /// userPrincipalName, joined with `or`.
        case peoplePicker
    }

    /// The properties read: the seed's, plus id, givenName and surname.
    public static let selectedProperties = [
        "id", "displayName", "givenName", "surname", "userPrincipalName", "mail", "businessPhones", "mobilePhone",
    ]

    private let client: AuthorizedHTTPClient
    private let account: Account
    private let baseURL: URL
    private let scopes: [String]?

    /// A directory for an account.
    /// - Parameters:
    ///   - baseURL: Graph's versioned base, `https://graph.microsoft.com/v1.0/`.
    ///   - scopes: the token's scopes; the account type's own when `nil`.
    public init(client: AuthorizedHTTPClient, account: Account, baseURL: URL, scopes: [String]? = nil) {
        self.client = client
        self.account = account
        self.baseURL = baseURL
        self.scopes = scopes
    }

    /// The OData filter for a search text, single quotes doubled (`O'Brien` → `'O''Brien'`);
    /// `nil` for an empty text (list everyone).
    public static func filter(for text: String, mode: SearchMode) -> String? {
        let trimmed = text.trimmingWhitespace()
        guard !trimmed.isEmpty else { return nil }
        let literal = "'" + trimmed.replacing("'", with: "''") + "'"
        switch mode {
        case .givenName:
            return "startswith(givenName,\(literal))"
        case .peoplePicker:
            return ["displayName", "givenName", "surname", "mail", "userPrincipalName"]
                .map { "startswith(\($0),\(literal))" }
                .joined(separator: " or ")
        }
    }

    /// The first page of users matching a text.
    /// - Parameter pageSize: `$top`, 1…999.
    /// - Throws: ``GraphError``, ``AccountStoreError``, ``HTTPTransportError``.
    public func search(_ text: String, mode: SearchMode = .peoplePicker, pageSize: Int = 50) async throws -> GraphUserPage {
        var parameters = [ResourceRequest.Parameter("$select", Self.selectedProperties.joined(separator: ","))]
        if let filter = Self.filter(for: text, mode: mode) {
            parameters.insert(ResourceRequest.Parameter("$filter", filter), at: 0)
        }
        parameters.append(ResourceRequest.Parameter("$top", String(min(max(pageSize, 1), 999))))
        return try await page(ResourceRequest(url: baseURL.appending(path: "users"), parameters: parameters, scopes: scopes))
    }

    /// The page after `page`, following its `@odata.nextLink` verbatim; `nil` after the last.
    /// - Throws: ``GraphError`` (`UntrustedNextLink`) when the link leaves Graph's origin (its
    ///   scheme, host and port): the bearer token goes nowhere else.
    public func nextPage(after page: GraphUserPage) async throws -> GraphUserPage? {
        guard let nextLink = page.nextLink else { return nil }
        guard Self.origin(of: nextLink) == Self.origin(of: baseURL) else {
            throw GraphError(
                status: 0, code: "UntrustedNextLink",
                message: "the next page is at \(nextLink.host() ?? "another address"), not Microsoft Graph; it was not requested",
                requestID: nil)
        }
        return try await self.page(ResourceRequest(url: nextLink, scopes: scopes))
    }

    /// Scheme, host and port (the default port spelled out), lowercased.
    static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
        return "\(scheme)://\(url.host()?.lowercased() ?? ""):\(port)"
    }

    /// The signed-in user: `GET /me`.
    public func me() async throws -> GraphUser {
        let response = try await client.perform(ResourceRequest(url: baseURL.appending(path: "me"), scopes: scopes), as: account)
        guard response.isSuccess else { throw GraphError(response: response) }
        return try decode(GraphUser.self, response)
    }

    /// One user by id or userPrincipalName: `GET /users/{id}`.
    public func user(_ idOrPrincipalName: String) async throws -> GraphUser {
        let url = baseURL.appending(path: "users").appending(path: idOrPrincipalName)
        let request = ResourceRequest(
            url: url, parameters: [ResourceRequest.Parameter("$select", Self.selectedProperties.joined(separator: ","))], scopes: scopes)
        let response = try await client.perform(request, as: account)
        guard response.isSuccess else { throw GraphError(response: response) }
        return try decode(GraphUser.self, response)
    }

    private func page(_ request: ResourceRequest) async throws -> GraphUserPage {
        let response = try await client.perform(request, as: account)
        guard response.isSuccess else { throw GraphError(response: response) }
        let body = try decode(GraphUserListBody.self, response)
        return GraphUserPage(users: body.value, nextLink: body.nextLink, count: body.count)
    }

    private func decode<T: Decodable>(_ type: T.Type, _ response: HTTPResponse) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: response.body)
        } catch {
            throw GraphError(
                status: response.status, code: "InvalidResponse", message: "the answer could not be read: \(error)",
                requestID: response.headers["request-id"])
        }
    }
}

extension GraphError {
    init(status: Int, code: String, message: String, requestID: String?) {
        self.status = status
        self.code = code
        self.message = message
        self.requestID = requestID
    }
}
