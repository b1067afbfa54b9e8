import Foundation

/// Where a storage group's token cache bytes live. Two backends ship: the Secret Service
/// (`SesameKeyring`) and ``FileTokenStorage``.
///
/// A backend runs each ``transact(group:_:)`` under a lock that other processes using the same
/// backend respect, reads the current bytes *after* taking it (so two apps sharing a group do
/// not overwrite each other's sign-ins), and applies what the body decides.
public protocol TokenStorage: Sendable {
    /// A short description for messages: `Secret Service` or the file's directory.
    var location: String { get }

    /// Reads a group's bytes under the backend's lock and applies the body's decision.
    /// - Parameter body: gets the current bytes (`nil` when the group has none yet).
    /// - Returns: where unreadable bytes were set aside, if the body asked for that.
    func transact(group: String, _ body: (Data?) throws -> TokenStorageAction) throws -> String?

    /// Runs `body` while holding the group's refresh lock, which every process sharing the
    /// storage takes before it redeems a refresh token: with strict rotation a refresh token
    /// works once, and two programs redeeming the same one would sign the user out. The
    /// transaction lock stays free meanwhile (reading the cache does not wait for a network).
    func whileRefreshing<T: Sendable>(
        group: String, isolation: isolated (any Actor)?, _ body: () async throws -> T
    ) async throws -> T
}

extension TokenStorage {
    /// No other process shares this storage: nothing to wait for.
    public func whileRefreshing<T: Sendable>(
        group: String, isolation: isolated (any Actor)?, _ body: () async throws -> T
    ) async throws -> T {
        try await body()
    }
}

/// What a ``TokenStorage/transact(group:_:)`` body decided.
public enum TokenStorageAction: Sendable {
    /// Leave the stored bytes as they are.
    case keep
    /// Replace them (atomically).
    case write(Data)
    /// Keep the current bytes aside (they could not be read: truncated, corrupt) where a person
    /// can inspect them, and store these instead.
    case setAsideAndWrite(Data)
}

/// A storage backend failed.
public struct TokenStorageError: Error, Sendable, CustomStringConvertible {
    /// Which backend and where.
    public let location: String
    /// What failed.
    public let reason: String

    /// An error at `location`.
    public init(location: String, reason: String) {
        self.location = location
        self.reason = reason
    }

    public var description: String { "token storage at \(location): \(reason)" }
}
