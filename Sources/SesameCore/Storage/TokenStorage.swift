import FoundationEssentials
import Glibc
import SesameSystem

/// Where a storage group's token cache bytes live. Two backends ship: the Secret Service
/// (`SesameKeyring`) and ``FileTokenStorage``.
///
/// A backend runs each ``transact(group:_:)`` under a lock that other processes using the same
/// backend respect — both shipped backends also take the lock of MSAL-based tools that share the
/// cache (their `.lockfile`) —, reads the current bytes *after* taking it (so two apps
/// sharing a group do not overwrite each other's sign-ins, nor read a write in progress), and
/// applies what the body decides.
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

    /// A cheap stamp of a group's stored bytes, read without the lock: it changes whenever any
    /// process writes the group, so a reader that has parsed the bytes under a stamp may use
    /// them again while the stamp is the same, without reading or locking. `nil`: the backend
    /// cannot tell, read every time.
    func version(group: String) -> StoredVersion?

    /// Takes room on the disk for the group's next write, before a refresh spends its refresh
    /// token: a full disk is then found while the stored token still works, and the write of the
    /// answer finds the room (the write lets it go). The Secret Service's own disk is the keyring
    /// daemon's, out of reach: it reserves nothing.
    /// - Throws: ``TokenStorageError`` (``TokenStorageError/Problem/diskFull``) when there is no room.
    func reserveRoom(group: String) throws

    /// Lets go of what ``reserveRoom(group:)`` took, when no write came (a refused refresh).
    func releaseRoom(group: String)
}

/// What ``TokenStorage/version(group:)`` answers: an opaque stamp, and how long a copy read under
/// it may be used before the bytes are read again anyway (for stores other programs may change
/// without stamping, as a person deleting the item in the keyring's manager).
public struct StoredVersion: Sendable, Hashable {
    /// The stamp (a file's identity, size and times).
    public let stamp: [Int64]
    /// How long a copy may be used without reading; `nil`: as long as the stamp holds.
    public let maximumAge: Duration?

    public init(stamp: [Int64], maximumAge: Duration? = nil) {
        self.stamp = stamp
        self.maximumAge = maximumAge
    }

    /// The stamp of a file: device, inode, size, modification and change times in nanoseconds
    /// (a replacement by rename is a new inode), or `[0]` when there is no file.
    public static func ofFile(atPath path: String, maximumAge: Duration? = nil) -> StoredVersion? {
        let status: stat
        do {
            status = try Posix.linkStatus(path)
        } catch {
            return error.code == ENOENT ? StoredVersion(stamp: [0], maximumAge: maximumAge) : nil
        }
        return StoredVersion(
            stamp: [
                Int64(status.st_dev), Int64(status.st_ino), Int64(status.st_size),
                Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec),
                Int64(status.st_ctim.tv_sec) * 1_000_000_000 + Int64(status.st_ctim.tv_nsec),
            ], maximumAge: maximumAge)
    }
}

extension TokenStorage {
    /// The backend cannot tell: every read reads.
    public func version(group: String) -> StoredVersion? { nil }

    /// The backend's disk is not Sesame's to reserve.
    public func reserveRoom(group: String) throws {}

    public func releaseRoom(group: String) {}

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
    /// What stands in the way, as the person can tell it apart and do something about it.
    public enum Problem: String, Sendable, Hashable {
        /// The keyring holding the sign-ins is locked (its unlock prompt was dismissed, or no
        /// prompt can be shown): the sign-ins are there, behind the lock.
        case keyringLocked
        /// No Secret Service answers (no session bus, no keyring daemon).
        case keyringUnavailable
        /// The disk holding the sign-ins is full (or the user's quota is used up).
        case diskFull
        /// The folder holding the sign-ins cannot be written (a read-only file system, permissions).
        case readOnly
        /// Anything else.
        case other

        /// The problem a failed system call's `errno` names.
        public init(errorNumber code: Int32) {
            switch code {
            case ENOSPC, EDQUOT: self = .diskFull
            case EROFS, EACCES, EPERM: self = .readOnly
            default: self = .other
            }
        }

        /// The problem behind an error of Foundation's file operations (creating a folder, writing
        /// a file): they report the system call's `errno` as a ``CocoaError`` code.
        public init(fileError error: any Error) {
            switch (error as? CocoaError)?.code {
            case .fileWriteOutOfSpace?: self = .diskFull
            case .fileWriteVolumeReadOnly?, .fileWriteNoPermission?: self = .readOnly
            default: self = (error as? SystemCallError).map { Problem(errorNumber: $0.code) } ?? .other
            }
        }
    }

    /// Which backend and where.
    public let location: String
    /// What failed.
    public let reason: String
    /// What kind of problem it is.
    public let problem: Problem

    /// An error at `location`.
    public init(location: String, reason: String, problem: Problem = .other) {
        self.location = location
        self.reason = reason
        self.problem = problem
    }

    public var description: String { "token storage at \(location): \(reason)" }
}
