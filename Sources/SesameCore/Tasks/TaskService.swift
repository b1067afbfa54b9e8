import FoundationEssentials
import SesameSystem

/// A task of the B2C sample's task API: `{"Id", "Owner", "Text", "Completed", "DateModified"}`.
public struct TaskItem: Sendable, Hashable, Identifiable, Decodable {
    /// `Id`: a number in the sample; kept as text.
    public let id: String
    /// `Owner`: the user's object id, taken by the API from the token.
    public let owner: String?
    /// `Text`.
    public let text: String
    /// `Completed`.
    public let completed: Bool
    /// `DateModified`, as sent.
    public let dateModified: String?

    enum CodingKeys: String, CodingKey {
        case id = "Id"
        case owner = "Owner"
        case text = "Text"
        case completed = "Completed"
        case dateModified = "DateModified"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let rawID = try container.decodeIfPresent(JSONValue.self, forKey: .id)
        id = rawID?.stringValue ?? rawID?.integerValue.map(String.init) ?? ""
        owner = try container.decodeIfPresent(String.self, forKey: .owner)
        text = try container.decodeIfPresent(String.self, forKey: .text) ?? ""
        completed = try container.decodeIfPresent(Bool.self, forKey: .completed) ?? false
        dateModified = try container.decodeIfPresent(String.self, forKey: .dateModified)
    }
}

/// The task API refused a request.
public struct TaskServiceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status (0 when the request was refused before it was sent).
    public let status: Int
    /// The API's reason: the sample's 401 reason phrase or body text.
    public let reason: String

    /// An error with a status (0: refused before sending) and a reason.
    public init(status: Int, reason: String) {
        self.status = status
        self.reason = reason
    }

    public var description: String {
        status == 0 ? reason : "The task service answered \(status): \(reason)"
    }
}

/// The B2C sample's task API as an account: `GET` and `POST {taskAPI}/api/tasks`.
public struct TaskService: Sendable {
    private let client: AuthorizedHTTPClient
    private let account: Account
    private let baseURL: URL

    /// The task API at `baseURL` (the settings' `taskAPI`) as an account.
    public init(client: AuthorizedHTTPClient, account: Account, baseURL: URL) {
        self.client = client
        self.account = account
        self.baseURL = baseURL
    }

    private var tasksURL: URL { baseURL.appending(path: "api/tasks") }

    /// The account's tasks.
    public func tasks() async throws -> [TaskItem] {
        let response = try await client.perform(ResourceRequest(url: tasksURL), as: account)
        guard response.isSuccess else { throw Self.error(response) }
        do {
            return try JSONDecoder().decode([TaskItem].self, from: response.body)
        } catch {
            throw TaskServiceError(status: response.status, reason: "the task list could not be read: \(error)")
        }
    }

    /// Adds a task: `POST /api/tasks` with `{"Text": text}` and an `Idempotency-Key`: sent again
    /// with the same key (its answer was lost, the user pressed Add again), the task is added
    /// once.
    /// - Parameter idempotencyKey: one per task the user means to add; a new one by default.
    /// - Throws: ``TaskServiceError`` for an empty text (before sending) or a refusal.
    public func add(_ text: String, idempotencyKey: String = UUID().uuidString) async throws {
        let trimmed = text.trimmingWhitespace()
        guard !trimmed.isEmpty else { throw TaskServiceError(status: 0, reason: "Type a task description first.") }
        let request = ResourceRequest(
            method: "POST", url: tasksURL, parameters: [ResourceRequest.Parameter("Text", trimmed)], parameterEncoding: .json,
            headers: ["Idempotency-Key": idempotencyKey])
        let response = try await client.perform(request, as: account)
        guard response.isSuccess else { throw Self.error(response) }
    }

    private static func error(_ response: HTTPResponse) -> TaskServiceError {
        let text = String(data: response.body, encoding: .utf8)?.trimmingWhitespace() ?? ""
        var reason = text
        if let data = text.data(using: .utf8), let object = try? JSONDecoder().decode([String: JSONValue].self, from: data) {
            reason = object["Message"]?.stringValue ?? object["message"]?.stringValue ?? object["error"]?.stringValue ?? text
        }
        if reason.isEmpty { reason = response.reasonPhrase ?? "no details" }
        return TaskServiceError(status: response.status, reason: reason)
    }
}
