import FoundationEssentials
import Glibc
import SesameSystem

/// The lock Microsoft's MSAL extensions take on a cache before they read-modify-write it: the
/// file `<cache>.lockfile`, *created exclusively* (`O_CREAT | O_EXCL`: whoever creates it holds
/// the lock) and removed by its holder when done. Sesame takes it inside its own ``FileLock``, so
/// that an MSAL-based tool (azure-cli, azure-identity, the MSAL Python apps: msal-extensions'
/// `PersistedTokenCache`) and Sesame never write the same cache at once.
///
/// What msal-extensions 1.3.1 does (HACKING.md, "Sharing a cache with MSAL-based tools", has the
/// file and line references): `PersistedTokenCache.modify` holds `CrossPlatLock(<cache>.lockfile)`
/// around reload, change and save. Without portalocker (only an optional extra there) the lock
/// is `open(path, 'xb')` retried every 0.25 s for 5 s, then `LockError`; with portalocker it is
/// that same exclusive creation (then, after 5 s, it goes on regardless) plus `flock(LOCK_EX)` on
/// the file. So the primitive both share is the file's existence — `flock` alone would exclude
/// neither — and Sesame holds both: it creates the file exclusively and keeps a `flock` on it
/// (which also stops a portalocker-based tool that stopped waiting for the file, and
/// msal-extensions 0.3.0 and older, which only took the `flock`).
///
/// A holder that died leaves the file behind, and every msal-extensions tool then fails until a
/// person removes it. Sesame removes it when it has been there, the same file, for
/// ``staleAfter`` and the process it names (`<pid> <program>`, as msal-extensions writes it) is
/// gone; only one Sesame process at a time can be deciding that, as it holds Sesame's own lock.
package enum MSALExtensionsLock {
    /// The lock file's suffix after the cache file's name.
    package static let suffix = ".lockfile"

    /// How long the same lock file must have been there before its holder is asked whether it is
    /// alive: msal-extensions' own patience (5 s), after which its waiters give up on it too.
    package static let staleAfter: Duration = .seconds(5)

    /// How often a waiting process looks again. msal-extensions holds the file for one reload,
    /// change and save: milliseconds.
    private static let retryInterval: Duration = .milliseconds(2)

    /// Runs `body` while holding `path` (a cache's `.lockfile`), waiting at most `wait` for its
    /// holder. Call it while holding Sesame's own lock on the same cache, never the other way
    /// round (HACKING.md: the order of the locks).
    package static func withLock<T>(
        path: String, location: String, wait: Duration = FileLock.defaultWait, staleAfter: Duration = MSALExtensionsLock.staleAfter,
        _ body: () throws -> T
    ) throws -> T {
        let deadline = ContinuousClock.now + wait
        // The lock file seen last and since when: a holder is only suspected of being dead when
        // one and the same file has been in the way for `staleAfter`.
        var inTheWay: (identity: FileIdentity, since: ContinuousClock.Instant)?
        while true {
            if let descriptor = try create(path, location: location) {
                defer { release(path, descriptor) }
                return try body()
            }
            let now = ContinuousClock.now
            if let identity = try? Posix.identity(ofPath: path) {
                if let seen = inTheWay, seen.identity == identity {
                    if seen.since.duration(to: now) >= staleAfter, holderIsGone(path) {
                        // Removed only while it is still the file judged: a new holder's is not.
                        if (try? Posix.identity(ofPath: path)) == identity { Posix.removeFile(path) }
                        inTheWay = nil
                        continue
                    }
                } else {
                    inTheWay = (identity, now)
                }
            }
            guard now < deadline else {
                throw TokenStorageError(
                    location: location,
                    reason: "another program (\(holderDescription(path))) has held the lock file \(path) for more than "
                        + "\(wait.components.seconds) s; if no MSAL-based tool is running, remove that file and try again")
            }
            // A holder keeps the file for milliseconds: a short blocking wait, as FileLock's.
            Posix.sleep(retryInterval)
        }
    }

    /// Creates the lock file exclusively and locks it: the descriptor, or `nil` when another
    /// process holds it.
    private static func create(_ path: String, location: String) throws(TokenStorageError) -> Int32? {
        let descriptor: Int32
        do {
            descriptor = try Posix.openOwnerOnly(path, O_RDWR | O_CREAT | O_EXCL)
        } catch let error where error.code == EEXIST {
            return nil
        } catch {
            throw TokenStorageError(
                location: location, reason: "cannot create the lock file \(path): \(error.message)", problem: .init(errorNumber: error.code)
            )
        }
        // Between the creation and this flock, only a program that opens the lock file without
        // creating it (older msal-extensions, or portalocker's after its 5 s) can have locked it;
        // it is then in its critical section and removes the file when done.
        let locked: Bool
        do {
            locked = try Posix.tryLockExclusive(descriptor)
        } catch {
            Posix.close(descriptor)
            throw TokenStorageError(location: location, reason: "cannot lock \(path): \(error.message)")
        }
        guard locked else {
            Posix.close(descriptor)
            return nil
        }
        // Who holds it, as msal-extensions writes it (`<pid> <argv[0]>`), for a person looking.
        try? Posix.writeAll(descriptor, "\(Posix.processID) sesame".utf8)
        return descriptor
    }

    /// Removes the lock file (while still holding its `flock`: a process that opens it now waits
    /// on a file no longer in the folder, and the next exclusive creation is a new file), then
    /// closes it. Only this holder's own file is removed.
    private static func release(_ path: String, _ descriptor: Int32) {
        if let mine = Posix.identity(of: descriptor), (try? Posix.identity(ofPath: path)) == mine {
            Posix.removeFile(path)
        }
        Posix.close(descriptor)
    }

    /// The first line of a lock file, at most 64 bytes of it (written by another program: read
    /// as hostile input): what msal-extensions writes there, `<pid> <argv[0]>`.
    private static func contents(_ path: String) -> String? {
        guard let descriptor = try? Posix.openOwnerOnly(path, O_RDONLY | O_NONBLOCK) else { return nil }
        defer { Posix.close(descriptor) }
        guard Posix.isRegularFileOfThisUser(descriptor) else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64)
        guard let count = try? Posix.read(descriptor, into: &buffer) else { return nil }
        let text = String(decoding: buffer.prefix(count), as: UTF8.self)
        return text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
    }

    /// The process id a lock file's contents name, when they name one.
    private static func holderID(in contents: String) -> Int32? {
        guard let first = contents.split(separator: " ", maxSplits: 1).first, first.count <= 10 else { return nil }
        return Int32(first)
    }

    /// Whether the lock file at `path` was left by a process that is gone: it names none (a
    /// holder writes its id right after creating the file), names this process (which does not
    /// hold it: it is waiting), or names one that does not exist. One that cannot be read (gone
    /// meanwhile, another user's) is not judged.
    private static func holderIsGone(_ path: String) -> Bool {
        guard let text = contents(path) else { return false }
        guard let id = holderID(in: text) else { return true }
        return id == Posix.processID || !Posix.processExists(id)
    }

    /// Who holds the lock, for the error: the process id the file names, or that it names none.
    private static func holderDescription(_ path: String) -> String {
        contents(path).flatMap(holderID(in:)).map { "process \($0)" } ?? "unknown process"
    }
}
