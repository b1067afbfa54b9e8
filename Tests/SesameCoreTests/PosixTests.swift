import Foundation
import SesameCoreTestSupport
import SesameSystem
import Testing

@testable import SesameCore

#if canImport(Glibc)
    import Glibc
#endif

/// The Core's boundary to the C library: private files, links refused, the lock other programs
/// share, and errno told in words.
@Suite("The POSIX boundary")
struct PosixTests {
    private func folder() throws -> URL {
        let directory = temporaryDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    private func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test("a file Sesame writes whole (--trace-events): new, or its user's own emptied; never a link, another user's or a hard-linked file")
    func ownFileForWriting() throws {
        let directory = try folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appending(path: "trace.jsonl").path
        Posix.close(try Posix.openOwnFileForWriting(path))
        #expect(try mode(path) == 0o600)
        try Data("an earlier run".utf8).write(to: URL(filePath: path))
        Posix.close(try Posix.openOwnFileForWriting(path))
        #expect(try Data(contentsOf: URL(filePath: path)).isEmpty, "an earlier trace of this user's is emptied")

        // A hard link to a file elsewhere (planted where a trace is expected) is not written through.
        let precious = directory.appending(path: "precious").path
        try Data("keep me".utf8).write(to: URL(filePath: precious))
        let planted = directory.appending(path: "planted.jsonl").path
        try FileManager.default.linkItem(atPath: precious, toPath: planted)
        #expect(throws: SystemCallError.self) { try Posix.openOwnFileForWriting(planted) }
        let link = directory.appending(path: "link.jsonl").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: precious)
        #expect(throws: SystemCallError.self) { try Posix.openOwnFileForWriting(link) }
        #expect(try String(contentsOfFile: precious, encoding: .utf8) == "keep me")

        // Another user's file, even for root (CI runs as root): refused, untouched.
        if getuid() == 0 {
            let theirs = directory.appending(path: "theirs.jsonl").path
            try Data("theirs".utf8).write(to: URL(filePath: theirs))
            #expect(chown(theirs, 65534, 65534) == 0)
            do {
                _ = try Posix.openOwnFileForWriting(theirs)
                Issue.record("another user's file was opened for writing")
            } catch {
                #expect(error.description.contains("this user's"))
            }
            #expect(try String(contentsOfFile: theirs, encoding: .utf8) == "theirs")
        }
    }

    @Test("a file it creates is 0600 whatever the umask, and an existing one of this user's becomes 0600")
    func ownerOnly() throws {
        let directory = try folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let created = directory.appending(path: "created").path
        // The umask is the process's: set for the one call only, and only ever more permissive,
        // so a file another test creates meanwhile is never less accessible to it.
        let previous = umask(0)
        let descriptor = Result { try Posix.openOwnerOnly(created, O_WRONLY | O_CREAT | O_EXCL) }
        umask(previous)
        Posix.close(try descriptor.get())
        #expect(try mode(created) == 0o600)

        let existing = directory.appending(path: "existing").path
        try Data("x".utf8).write(to: URL(filePath: existing))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: existing)
        Posix.close(try Posix.openOwnerOnly(existing, O_WRONLY | O_CREAT | O_TRUNC))
        #expect(try mode(existing) == 0o600)
    }

    @Test("a symbolic link in a file's place is refused (ELOOP), and nothing is made where it points")
    func symbolicLinkRefused() throws {
        let directory = try folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let target = directory.appending(path: "elsewhere").path
        let link = directory.appending(path: "trace.jsonl").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(throws: SystemCallError(call: "open", code: ELOOP)) {
            try Posix.openOwnerOnly(link, O_WRONLY | O_CREAT | O_TRUNC)
        }
        #expect(!FileManager.default.fileExists(atPath: target), "the link was followed")
    }

    @Test("two opens of one lock file exclude each other, and another program's flock(1) waits for it too")
    func locksExclude() throws {
        let directory = try folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appending(path: "group.json.lock").path
        let first = try Posix.openOwnerOnly(path, O_RDWR | O_CREAT)
        defer { Posix.close(first) }
        let second = try Posix.openOwnerOnly(path, O_RDWR | O_CREAT)
        defer { Posix.close(second) }

        #expect(try Posix.tryLockExclusive(first))
        #expect(try !Posix.tryLockExclusive(second), "one process's second open file took a held lock")
        #expect(try otherProgramLocks(path) == false, "another program took a held lock")
        Posix.unlock(first)
        #expect(try Posix.tryLockExclusive(second))
        Posix.unlock(second)
        #expect(try otherProgramLocks(path) == true)
    }

    /// Whether util-linux's `flock --nonblock` (flock(2), as every program sharing the cache
    /// locks it) gets the lock on `path` now.
    private func otherProgramLocks(_ path: String) throws -> Bool {
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/flock")
        process.arguments = ["--nonblock", "--conflict-exit-code", "75", path, "true"]
        try process.run()
        process.waitUntilExit()
        try #require([0, 75].contains(process.terminationStatus), "flock(1) failed: \(process.terminationStatus)")
        return process.terminationStatus == 0
    }

    @Test("a failure carries errno and the C library's sentence for it")
    func errnoInWords() throws {
        let directory = try folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appending(path: "no-such-folder/file").path
        #expect {
            try Posix.openOwnerOnly(missing, O_WRONLY | O_CREAT)
        } throws: { error in
            let failure = error as? SystemCallError
            return failure?.code == ENOENT && failure?.call == "open" && failure?.description == "No such file or directory"
        }
        #expect(Posix.message(for: EACCES) == "Permission denied")
        #expect(throws: SystemCallError(call: "rename", code: ENOENT)) { try Posix.rename(missing, to: missing + ".new") }
    }
}
