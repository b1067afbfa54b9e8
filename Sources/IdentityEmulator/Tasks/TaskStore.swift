import FoundationEssentials

/// One task of the B2C sample's task API. JSON fields are PascalCase, as ASP.NET Web API writes them.
struct TaskItem: Codable, Sendable, Equatable {
    /// `Id`.
    var id: Int
    /// `Owner`: the `oid` of the user the task belongs to.
    var owner: String
    /// `Text`.
    var text: String
    /// `Completed`.
    var completed: Bool
    /// `DateModified`.
    var dateModified: Date
    /// The `Idempotency-Key` the task was added with, if any (kept, not shown).
    var idempotencyKey: String?

    enum CodingKeys: String, CodingKey {
        case id = "Id"
        case owner = "Owner"
        case text = "Text"
        case completed = "Completed"
        case dateModified = "DateModified"
        case idempotencyKey = "IdempotencyKey"
    }

    var json: JSON {
        .object([
            ("Id", .int(id)), ("Owner", .string(owner)), ("Text", .string(text)), ("Completed", .bool(completed)),
            ("DateModified", .string(dateModified.ISO8601Format(.iso8601.year().month().day().time(includingFractionalSeconds: true)))),
        ])
    }
}

/// The task API's storage: in memory, and in `tasks.json` in the state directory when one is given
/// (written atomically after every change).
actor TaskStore {
    private struct Persisted: Codable {
        var nextID = 1
        var tasks: [TaskItem] = []
    }

    private let file: URL?
    private var persisted = Persisted()
    private(set) var warning: String?

    init(stateDirectory: URL?) {
        file = stateDirectory?.appending(path: "tasks.json")
        if let file {
            let (value, warning) = StateFile.read(Persisted.self, from: file)
            if let value { persisted = value }
            self.warning = warning
        }
    }

    /// The owner's tasks, oldest first.
    func tasks(owner: String) -> [TaskItem] { persisted.tasks.filter { $0.owner == owner } }

    /// Adds a task; one the owner already added with the same `idempotencyKey` is returned
    /// instead of added again (its answer was lost and the client sent it again).
    func add(text: String, owner: String, idempotencyKey: String? = nil, now: Date) throws -> TaskItem {
        if let idempotencyKey, let existing = persisted.tasks.first(where: { $0.owner == owner && $0.idempotencyKey == idempotencyKey }) {
            return existing
        }
        let task = TaskItem(
            id: persisted.nextID, owner: owner, text: text, completed: false, dateModified: now, idempotencyKey: idempotencyKey)
        persisted.nextID += 1
        persisted.tasks.append(task)
        try save()
        return task
    }

    /// Deletes the owner's task; false when the owner has no task with that id.
    func delete(id: Int, owner: String) throws -> Bool {
        guard let index = persisted.tasks.firstIndex(where: { $0.id == id && $0.owner == owner }) else { return false }
        persisted.tasks.remove(at: index)
        try save()
        return true
    }

    private func save() throws {
        guard let file else { return }
        try StateFile.writeAtomically(JSONEncoder.state.encode(persisted), to: file)
    }
}
