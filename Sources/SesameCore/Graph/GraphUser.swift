import FoundationEssentials

/// A Microsoft Graph `user` (the fields the seed selects, plus the ones a people picker shows).
public struct GraphUser: Sendable, Hashable, Identifiable, Decodable {
    /// `id`: the object id; empty when `$select` left it out.
    public let id: String
    /// `userPrincipalName`.
    public let userPrincipalName: String?
    /// `displayName`.
    public let displayName: String?
    /// `givenName`.
    public let givenName: String?
    /// `surname`.
    public let surname: String?
    /// `mail`: may be null.
    public let mail: String?
    /// `businessPhones`: an array, often empty.
    public let businessPhones: [String]
    /// `mobilePhone`: may be null.
    public let mobilePhone: String?
    /// `jobTitle`.
    public let jobTitle: String?
    /// `officeLocation`.
    public let officeLocation: String?

    enum CodingKeys: String, CodingKey {
        case id, userPrincipalName, displayName, givenName, surname, mail, businessPhones, mobilePhone, jobTitle, officeLocation
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeIfPresent(String.self, forKey: .id) ?? ""
        userPrincipalName = try container.decodeIfPresent(String.self, forKey: .userPrincipalName)
        displayName = try container.decodeIfPresent(String.self, forKey: .displayName)
        givenName = try container.decodeIfPresent(String.self, forKey: .givenName)
        surname = try container.decodeIfPresent(String.self, forKey: .surname)
        mail = try container.decodeIfPresent(String.self, forKey: .mail)
        businessPhones = try container.decodeIfPresent([String].self, forKey: .businessPhones) ?? []
        mobilePhone = try container.decodeIfPresent(String.self, forKey: .mobilePhone)
        jobTitle = try container.decodeIfPresent(String.self, forKey: .jobTitle)
        officeLocation = try container.decodeIfPresent(String.self, forKey: .officeLocation)
    }
}

/// One page of a Graph user list.
public struct GraphUserPage: Sendable, Hashable {
    /// `value`.
    public let users: [GraphUser]
    /// `@odata.nextLink`: the next page's full URL, followed verbatim; `nil` on the last page.
    public let nextLink: URL?
    /// `@odata.count`, when asked for.
    public let count: Int?
}

struct GraphUserListBody: Decodable {
    let value: [GraphUser]
    let nextLink: URL?
    let count: Int?

    enum CodingKeys: String, CodingKey {
        case value
        case nextLink = "@odata.nextLink"
        case count = "@odata.count"
    }
}

/// A Graph error: `{"error": {"code", "message", "innerError": {"request-id", "date"}}}`.
public struct GraphError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status.
    public let status: Int
    /// `error.code`: `Request_UnsupportedQuery`, `InvalidAuthenticationToken`, ….
    public let code: String
    /// `error.message`.
    public let message: String
    /// `error.innerError.request-id`, for support.
    public let requestID: String?

    public var description: String {
        "Microsoft Graph refused the request (\(status) \(code)): \(message)"
    }

    init(response: HTTPResponse) {
        struct Body: Decodable {
            struct Inner: Decodable {
                let code: String?
                let message: String?
                let innerError: InnerError?
            }
            struct InnerError: Decodable {
                let requestID: String?
                enum CodingKeys: String, CodingKey { case requestID = "request-id" }
            }
            let error: Inner
        }
        let body = try? JSONDecoder().decode(Body.self, from: response.body)
        status = response.status
        code = body?.error.code ?? "HTTP\(response.status)"
        message =
            body?.error.message
            ?? (String(data: response.body.prefix(300), encoding: .utf8).flatMap { $0.isEmpty ? nil : $0 } ?? "no details")
        requestID = body?.error.innerError?.requestID ?? response.headers["request-id"]
    }
}
