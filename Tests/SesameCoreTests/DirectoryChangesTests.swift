import Foundation
import SesameCoreTestSupport
import SesameTestSupport
import Testing

@testable import SesameCore

#if canImport(Glibc)
    import Glibc
#endif

/// How the stores notice that their bytes changed without a system call per silent token: the
/// kernel's inotify events, read by one thread of the process.
@Suite("Noticing changes to the stored caches")
struct DirectoryChangesTests {
    /// Runs `command` in /bin/sh: a program that is not this one.
    private func otherProgram(_ command: String) throws {
        let process = Process()
        process.executableURL = URL(filePath: "/bin/sh")
        process.arguments = ["-c", command]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    /// Waits (at most ten seconds) until `condition` holds; whether it did.
    private func eventually(_ condition: () async throws -> Bool) async rethrows -> Bool {
        try await Eventually.holds(every: .milliseconds(1), condition)
    }

    @Test("another program's write is noticed; a lock taken and let go (ours or msal-extensions') is not a change")
    func writesAreNoticedLocksAreNot() async throws {
        let changes = try #require(DirectoryChanges.shared, "inotify is not available here")
        let cacheDirectory = temporaryDirectory()
        let otherDirectory = temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(at: cacheDirectory)
            try? FileManager.default.removeItem(at: otherDirectory)
        }
        for directory in [cacheDirectory, otherDirectory] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        let before = try #require(changes.generation(ofDirectory: cacheDirectory.path))
        let otherBefore = try #require(changes.generation(ofDirectory: otherDirectory.path))

        // Every transaction opens and closes the group's lock file, written or not.
        let lock = open(cacheDirectory.appending(path: "group.json.lock").path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(lock >= 0)
        close(lock)
        // msal-extensions' lock: `<cache>.lockfile` created, written and removed by its holder.
        let lockfile = cacheDirectory.appending(path: "group.json.lockfile").path
        try otherProgram("echo '4242 /usr/bin/az' > '\(lockfile)' && rm '\(lockfile)'")
        // The kernel reports events in order: once the later write in the other folder is seen,
        // the lock's events have been read too.
        try otherProgram("echo x > '\(otherDirectory.appending(path: "sentinel").path)'")
        #expect(await eventually { changes.generation(ofDirectory: otherDirectory.path) != otherBefore })
        #expect(changes.generation(ofDirectory: cacheDirectory.path) == before, "taking the lock counted as a change of the cache")

        // A cache replaced by another program, as every store does it: a temporary file renamed over.
        let file = cacheDirectory.appending(path: "group.json").path
        try otherProgram("echo '{}' > '\(file).tmp' && mv '\(file).tmp' '\(file)'")
        #expect(await eventually { changes.generation(ofDirectory: cacheDirectory.path) != before })

        // Deleted by hand: noticed as well.
        let afterWrite = changes.generation(ofDirectory: cacheDirectory.path)
        try otherProgram("rm '\(file)'")
        #expect(await eventually { changes.generation(ofDirectory: cacheDirectory.path) != afterWrite })
    }

    @Test("a folder that is moved away and made again is watched again, never with an earlier number")
    func movedFolderIsWatchedAgain() async throws {
        let changes = try #require(DirectoryChanges.shared, "inotify is not available here")
        let directory = temporaryDirectory()
        let moved = temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(at: directory)
            try? FileManager.default.removeItem(at: moved)
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let first = try #require(changes.generation(ofDirectory: directory.path))
        try otherProgram("mv '\(directory.path)' '\(moved.path)' && mkdir '\(directory.path)'")
        // The old watch follows the moved folder; the path is watched afresh once that is read.
        #expect(await eventually { (changes.generation(ofDirectory: directory.path) ?? first) > first })
        let second = try #require(changes.generation(ofDirectory: directory.path))
        try otherProgram("echo x > '\(directory.appending(path: "group.json").path)'")
        #expect(await eventually { changes.generation(ofDirectory: directory.path) != second })
    }

    @Test("a silent token after another program deleted the cache: the store notices without being told")
    func storeNoticesAnotherProgram() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        let account = try await fixture.signIn()
        let first = try await fixture.store.accessToken(for: account)
        #expect(try await fixture.store.accessToken(for: account).secret.revealed == first.secret.revealed)
        let file = try fixture.storage.fileURL(group: fixture.provider.configuration.storageGroup).path
        try otherProgram("rm '\(file)'")
        let noticed = await eventually {
            do {
                _ = try await fixture.store.accessToken(for: account)
                return false
            } catch {
                return true
            }
        }
        #expect(noticed, "the store kept answering from a cache another program deleted")
    }
}
