import Foundation
import SesameCoreTestSupport
import Testing

@testable import SesameCore

#if canImport(Glibc)
    import Glibc
#endif

/// The file store on a shared machine: a lock nobody can hold forever or plant, a folder only its
/// owner can enter, and unreadable caches (live tokens may be inside) not kept forever.
@Suite("Token storage on a shared machine")
struct StorageHardeningTests {
    @Test("a lock held by another program is waited for a bounded time, then a sentence says so")
    func boundedLockWait() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appending(path: "g.json.lock").path
        let holder = open(path, O_RDWR | O_CREAT, 0o600)
        defer { close(holder) }
        #expect(flock(holder, LOCK_EX) == 0)
        // The wait ends by itself (the holder never lets go) and says so.
        #expect {
            try FileLock.withLock(path: path, location: "test", wait: .milliseconds(300)) {}
        } throws: { error in
            (error as? TokenStorageError)?.description.contains("held the sign-in cache for more than") == true
        }
        flock(holder, LOCK_UN)
        #expect(try FileLock.withLock(path: path, location: "test", wait: .milliseconds(300)) { 42 } == 42)
    }

    @Test("a lock file planted by another user, or a symbolic link in its place, is refused")
    func plantedLockFile() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let link = directory.appending(path: "link.lock").path
        symlink(directory.appending(path: "elsewhere").path, link)
        #expect(throws: TokenStorageError.self) { try FileLock.withLock(path: link, location: "test") {} }
        #expect(!FileManager.default.fileExists(atPath: directory.appending(path: "elsewhere").path), "the link was followed")
        if getuid() == 0 {
            // Only root can give a file away; the tests run as root in CI.
            let foreign = directory.appending(path: "foreign.lock").path
            close(open(foreign, O_RDWR | O_CREAT, 0o666))
            chown(foreign, 65534, 65534)
            #expect(throws: TokenStorageError.self) { try FileLock.withLock(path: foreign, location: "test") {} }
        }
    }

    @Test("an existing folder others could enter is tightened to 0700 on the next write")
    func looseFolderTightened() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        try FileManager.default.createDirectory(at: fixture.directory, withIntermediateDirectories: true)
        chmod(fixture.directory.path, 0o755)
        _ = try await fixture.signIn()
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: fixture.directory.path)[.posixPermissions] as? Int)
        #expect(mode == 0o700)
    }

    @Test("set-aside caches are kept a week, three at most; the newest always")
    func setAsideCopiesPruned() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await fixture.configure()
        let file = try fixture.storage.fileURL(group: fixture.provider.configuration.storageGroup)
        try FileManager.default.createDirectory(at: fixture.directory, withIntermediateDirectories: true)
        let old = fixture.directory.appending(path: "\(file.lastPathComponent).corrupt-2020-01-01T000000Z")
        try Data("old".utf8).write(to: old)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-8 * 24 * 3600)], ofItemAtPath: old.path)
        var recent: [URL] = []
        for index in 0..<4 {
            let copy = fixture.directory.appending(path: "\(file.lastPathComponent).corrupt-recent-\(index)")
            try Data("recent".utf8).write(to: copy)
            try FileManager.default.setAttributes(
                [.modificationDate: Date().addingTimeInterval(-Double(index + 1) * 60)], ofItemAtPath: copy.path)
            recent.append(copy)
        }
        try Data("garbage".utf8).write(to: file)
        #expect(try await fixture.store.accounts(ofType: fixture.accountType).isEmpty)

        let left = try FileManager.default.contentsOfDirectory(atPath: fixture.directory.path).filter { $0.contains(".corrupt-") }.sorted()
        #expect(left.count == 3, "\(left)")
        #expect(!left.contains(old.lastPathComponent), "a week-old copy was kept")
        #expect(left.contains(recent[0].lastPathComponent) && left.contains(recent[1].lastPathComponent))
        #expect(left.contains { !$0.contains("recent") }, "the copy just set aside was removed")
    }
}
