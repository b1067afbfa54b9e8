import Foundation
import SesameCoreTestSupport
import SesameTestSupport
import Synchronization
import Testing

@testable import SesameCore

#if canImport(Glibc)
    import Glibc
#endif

/// The file store and MSAL's extensions on one cache: Sesame takes their `.lockfile` (created
/// exclusively) inside its own lock, reads only once it holds both, stamps its writes so that
/// msal-extensions reloads them, and clears a lock file its holder left behind when it died.
@Suite("Sharing a cache file with msal-extensions")
struct MSALExtensionsLockTests {
    /// A lock file as msal-extensions' `CrossPlatLock` makes it: created exclusively, then
    /// `<pid> <argv[0]>` written into it.
    private func holdAsMSAL(_ path: String, pid: Int32) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        try #require(descriptor >= 0, "the lock file could not be created: errno \(errno)")
        let content = Array("\(pid) /usr/bin/az".utf8)
        #expect(write(descriptor, content, content.count) == content.count)
        close(descriptor)
    }

    /// A process that lives until the test ends it: a holder that is alive.
    private func liveProcess() throws -> Process {
        let process = Process()
        process.executableURL = URL(filePath: "/bin/sleep")
        process.arguments = ["600"]
        try process.start()
        return process
    }

    /// The id of a process that has ended: a holder that is gone.
    private func endedProcessID() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(filePath: "/bin/true")
        try process.start()
        process.waitUntilExit()
        return process.processIdentifier
    }

    /// Whether some open file holds Sesame's flock on `path` now (this process's own open file
    /// does not share another open file's lock).
    private func isLocked(_ path: String) -> Bool {
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 {
            flock(descriptor, LOCK_UN)
            return false
        }
        return true
    }

    @Test("a cache msal-extensions is half-way through rewriting is read only after its lock file goes, whole")
    func halfWrittenCacheIsWaitedFor() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let storage = FileTokenStorage(directory: directory)
        let file = try storage.fileURL(group: "g")
        let whole = Data(#"{"AccessToken": {}, "RefreshToken": {}, "IdToken": {}, "Account": {}, "AppMetadata": {}}"#.utf8)

        // msal-extensions' FilePersistence.save rewrites in place (O_TRUNC, then write), under
        // its lock file: here it has written half.
        let holder = try liveProcess()
        defer { holder.end() }
        try holdAsMSAL(file.path + ".lockfile", pid: holder.processIdentifier)
        try whole.prefix(whole.count / 2).write(to: file)

        /// What the transaction read: nil until it has run.
        final class Seen: Sendable {
            let bytes = Mutex<Data??>(nil)
            let failure = Mutex<String?>(nil)
        }
        let box = Seen()
        let thread = Thread {
            let bytes = Result { () throws -> Data? in
                var read: Data?
                _ = try storage.transact(group: "g") { data in
                    read = data
                    return .keep
                }
                return read
            }
            if case .failure(let error) = bytes { box.failure.withLock { $0 = "\(error)" } }
            box.bytes.withLock { $0 = .some(try? bytes.get()) }
        }
        thread.start()
        // The transaction holds Sesame's lock while it waits for msal-extensions' (or, without
        // that wait, it has already read the half). Watched from this thread without suspending:
        // the transaction waits 10 s at most, and a suspended test can wait longer than that for
        // a thread of the shared pool while the whole suite runs.
        _ = Eventually.holdsBlocking(within: .seconds(5), every: .milliseconds(2)) {
            isLocked(file.path + ".lock") || box.bytes.withLock { $0 != nil }
        }
        #expect(isLocked(file.path + ".lock"), "the transaction does not hold Sesame's lock while it waits")
        let failure = box.failure.withLock { $0 } ?? "no error"
        #expect(
            box.bytes.withLock { $0 == nil },
            "the cache was read while msal-extensions was writing it, or the transaction failed: \(failure)")

        try whole.write(to: file)
        unlink(file.path + ".lockfile")
        #expect(await Eventually.holds { box.bytes.withLock { $0 != nil } })
        #expect(box.bytes.withLock { $0 } == .some(.some(whole)), "the transaction did not read the whole cache")
        #expect(!FileManager.default.fileExists(atPath: file.path + ".lockfile"), "Sesame left its lock file behind")
    }

    @Test("an unreadable cache found under both locks is set aside, and the lock files are gone after")
    func unreadableUnderBothLocks() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let storage = FileTokenStorage(directory: directory)
        let file = try storage.fileURL(group: "g")
        try Data("{\"AccessToken\": {".utf8).write(to: file)
        let aside = try storage.transact(group: "g") { _ in
            #expect(FileManager.default.fileExists(atPath: file.path + ".lockfile"), "the body ran without msal-extensions' lock")
            return .setAsideAndWrite(Data("{}".utf8))
        }
        #expect(aside != nil)
        #expect(!FileManager.default.fileExists(atPath: file.path + ".lockfile"))
    }

    @Test("a lock file whose holder is alive is waited for a bounded time, then a sentence names it; it stays")
    func liveHolderIsWaitedFor() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appending(path: "g.json.lockfile").path
        let holder = try liveProcess()
        defer { holder.end() }
        try holdAsMSAL(path, pid: holder.processIdentifier)
        #expect {
            try MSALExtensionsLock.withLock(path: path, location: "test", wait: .milliseconds(300), staleAfter: .milliseconds(50)) {}
        } throws: { error in
            let sentence = (error as? TokenStorageError)?.reason ?? ""
            return sentence.contains("process \(holder.processIdentifier)") && sentence.contains("remove that file")
        }
        #expect(FileManager.default.fileExists(atPath: path), "a live holder's lock file was removed")
    }

    @Test("a lock file left by a process that is gone (or naming none) is cleared, then taken")
    func staleLockFileIsCleared() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appending(path: "g.json.lockfile").path
        try holdAsMSAL(path, pid: try endedProcessID())
        var ran = try MSALExtensionsLock.withLock(path: path, location: "test", wait: .seconds(10), staleAfter: .milliseconds(50)) {
            // Held now, by this process.
            let text = try String(contentsOfFile: path, encoding: .utf8)
            return text.hasPrefix("\(getpid()) ")
        }
        #expect(ran, "the lock file does not name its new holder")
        #expect(!FileManager.default.fileExists(atPath: path))

        close(open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600))
        ran = try MSALExtensionsLock.withLock(path: path, location: "test", wait: .seconds(10), staleAfter: .milliseconds(50)) { true }
        #expect(ran)
    }

    @Test("while Sesame holds the lock file, another program cannot create it, nor flock it")
    func heldAgainstBothPrimitives() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appending(path: "g.json.lockfile").path
        try MSALExtensionsLock.withLock(path: path, location: "test") {
            // msal-extensions' own lock: `open(path, 'xb')`.
            let created = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            #expect(created < 0 && errno == EEXIST)
            if created >= 0 { close(created) }
            // portalocker's (and older msal-extensions'): flock on the file.
            #expect(isLocked(path))
        }
    }

    @Test("a written cache's modification time is ahead of the clock, so msal-extensions reloads it")
    func writesAreStampedAhead() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let storage = FileTokenStorage(directory: directory)
        let file = try storage.fileURL(group: "g")
        let before = Date()
        _ = try storage.transact(group: "g") { _ in .write(Data("{}".utf8)) }
        // msal-extensions reloads when `last_sync < getmtime(file)`, last_sync being the
        // time.time() it took after its last load — which may come after this write: the file's
        // time must be ahead of the write's (whenever the write happened, it was after `before`).
        let modified = try #require(try FileManager.default.attributesOfItem(atPath: file.path)[.modificationDate] as? Date)
        #expect(
            modified > before.addingTimeInterval(FileTokenStorage.modificationTimeLead - 0.001),
            "msal-extensions would keep what it loaded before this write, and write it back")
    }
}
