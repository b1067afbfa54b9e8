import FoundationEssentials
import Glibc
import SesameSystem

/// An exclusive advisory lock on a lock file (`flock(2)`), shared by every process that
/// opens the same file. The primitive and the files' names are a contract with the other
/// Sesame processes (older versions included) that share a cache: change neither. MSAL's
/// extensions do not take it; they take their own `.lockfile` (``MSALExtensionsLock``), which
/// Sesame takes second, inside this one.
public enum FileLock {
    /// How long a process waits for another to let go before it says so.
    public static let defaultWait: Duration = .seconds(10)

    /// How long a refresh waits for another process's refresh (which is bounded by its
    /// transport's deadline) before it says so.
    public static let refreshWait: Duration = .seconds(90)

    /// How often a waiting process tries the lock again.
    private static let retryInterval: Duration = .milliseconds(20)

    /// Runs `body` while holding the lock on `path`, waiting at most `wait` for other holders.
    /// The lock file is created 0600; an existing one must be a regular file of this user's (not
    /// a symbolic link, not planted by someone else in a shared directory), or it is refused.
    public static func withLock<T>(path: String, location: String, wait: Duration = defaultWait, _ body: () throws -> T) throws -> T {
        let descriptor = try openLockFile(path, location: location)
        defer { Posix.close(descriptor) }
        let deadline = ContinuousClock.now + wait
        while try !tryLock(descriptor, location: location) {
            guard ContinuousClock.now < deadline else {
                throw TokenStorageError(
                    location: location,
                    reason: "another program has held the sign-in cache for more than \(wait.components.seconds) s; close it and try again")
            }
            // A transaction holds the lock for microseconds: a short blocking wait, on purpose.
            Posix.sleep(retryInterval)
        }
        defer { Posix.unlock(descriptor) }
        return try body()
    }

    /// ``withLock(path:location:wait:_:)`` for an asynchronous body (a refresh token's redemption
    /// over the network): waits without blocking a thread, holds the lock across the body's awaits.
    public static func whileHolding<T: Sendable>(
        path: String, location: String, wait: Duration = refreshWait, isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> T
    ) async throws -> T {
        let descriptor = try openLockFile(path, location: location)
        defer { Posix.close(descriptor) }
        let deadline = ContinuousClock.now + wait
        while try !tryLock(descriptor, location: location) {
            guard ContinuousClock.now < deadline else {
                throw TokenStorageError(
                    location: location,
                    reason: "another program has been refreshing this sign-in for more than \(wait.components.seconds) s; try again")
            }
            try await Task.sleep(for: retryInterval)
        }
        defer { Posix.unlock(descriptor) }
        return try await body()
    }

    /// Opens (creating, 0600) the lock file, refusing a link, a non-file or another user's file.
    private static func openLockFile(_ path: String, location: String) throws(TokenStorageError) -> Int32 {
        let descriptor: Int32
        do {
            descriptor = try Posix.openOwnerOnly(path, O_RDWR | O_CREAT)
        } catch {
            // A read-only folder (EROFS), or one not this user's to write, is said as such.
            throw TokenStorageError(
                location: location, reason: "cannot open the lock file \(path): \(error.message)", problem: .init(errorNumber: error.code))
        }
        guard Posix.isRegularFileOfThisUser(descriptor) else {
            Posix.close(descriptor)
            throw TokenStorageError(
                location: location, reason: "the lock file \(path) belongs to another user or is not a plain file; remove it and try again")
        }
        return descriptor
    }

    private static func tryLock(_ descriptor: Int32, location: String) throws(TokenStorageError) -> Bool {
        do {
            return try Posix.tryLockExclusive(descriptor)
        } catch {
            throw TokenStorageError(location: location, reason: "cannot lock the cache: \(error.message)")
        }
    }
}
