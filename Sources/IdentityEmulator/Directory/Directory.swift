import FoundationEssentials
import Synchronization

/// A tenant's users, in a stable order (by display name), with lookups for sign-in and Graph and
/// a prefix index for `$filter=startswith(…)`. B2C sign-up adds users while the emulator runs.
public final class Directory: Sendable {
    public let tenant: Tenant

    private struct Storage: Sendable {
        var users: [DirectoryUser]
        var byID: [String: Int]
        var bySignInName: [String: Int]
        var index: PrefixIndex
    }

    private let storage: Mutex<Storage>

    public init(tenant: Tenant, users: [DirectoryUser]) {
        self.tenant = tenant
        let keyed: [(key: String, user: DirectoryUser)] = users.map { (key: $0.displayName.lowercased(), user: $0) }
        let sorted: [DirectoryUser] = keyed.sorted { a, b in
            a.key == b.key ? a.user.userPrincipalName < b.user.userPrincipalName : a.key < b.key
        }.map(\.user)
        var byID: [String: Int] = [:]
        var bySignInName: [String: Int] = [:]
        byID.reserveCapacity(sorted.count)
        bySignInName.reserveCapacity(sorted.count)
        for (ordinal, user) in sorted.enumerated() {
            byID[user.id] = ordinal
            bySignInName[user.userPrincipalName.lowercased()] = ordinal
        }
        storage = Mutex(Storage(users: sorted, byID: byID, bySignInName: bySignInName, index: PrefixIndex(users: sorted)))
    }

    public var count: Int { storage.withLock { $0.users.count } }

    /// The user with this object id.
    public func user(id: String) -> DirectoryUser? {
        storage.withLock { storage in storage.byID[id.lowercased()].map { storage.users[$0] } }
    }

    /// The user who signs in with this name (user principal name or B2C email), any case.
    public func user(signInName: String) -> DirectoryUser? {
        storage.withLock { storage in
            storage.bySignInName[signInName.trimmingWhitespace().lowercased()].map { storage.users[$0] }
        }
    }

    /// Graph's `/users/{id | userPrincipalName}`.
    public func user(idOrPrincipalName key: String) -> DirectoryUser? { user(id: key) ?? user(signInName: key) }

    /// Adds a user (B2C sign-up). Fails when the sign-in name is taken.
    @discardableResult
    func add(_ user: DirectoryUser) -> Bool {
        storage.withLock { storage in
            let name = user.userPrincipalName.lowercased()
            guard storage.bySignInName[name] == nil else { return false }
            let ordinal = storage.users.count
            storage.users.append(user)
            storage.byID[user.id] = ordinal
            storage.bySignInName[name] = ordinal
            storage.index.insert(user, ordinal: ordinal)
            return true
        }
    }

    /// Changes a user's password (B2C password reset) and returns the changed user.
    func setPassword(_ password: String, forUserID id: String) -> DirectoryUser? {
        storage.withLock { storage in
            guard let ordinal = storage.byID[id] else { return nil }
            storage.users[ordinal].passwordDigest = DirectoryUser.digest(password: password)
            return storage.users[ordinal]
        }
    }

    /// Restores a user kept in the state directory: replaces the same id, or adds it.
    func restore(_ user: DirectoryUser) {
        let replaced = storage.withLock { storage -> Bool in
            guard let ordinal = storage.byID[user.id] else { return false }
            storage.users[ordinal] = user
            return true
        }
        if !replaced { add(user) }
    }

    /// The users `include` keeps (the B2C sign-ups to keep in the state directory; a test's pick).
    public func users(where include: (DirectoryUser) -> Bool) -> [DirectoryUser] {
        storage.withLock { $0.users.filter(include) }
    }

    /// Runs a read-only query against the users and the index under one lock.
    func read<Result: Sendable>(_ body: (_ users: [DirectoryUser], _ index: PrefixIndex) throws -> Result) rethrows -> Result {
        try storage.withLock { storage in try body(storage.users, storage.index) }
    }
}
