import Dispatch
import FoundationEssentials
import Glibc
import SesameSystem

/// Token caches as files, for machines without a Secret Service: one `<group>.json` per
/// storage group under `$XDG_DATA_HOME/sesame/` (`~/.local/share/sesame/`), mode 0600 in a
/// 0700 directory, replaced atomically (write a temporary file, rename; fsync off the caller's path).
///
/// Each transaction holds two locks, always taken in this order and let go in the reverse:
/// 1. Sesame's own: an advisory `flock` on `<group>.json.lock`, shared by every Sesame process
///    (older versions take only this one);
/// 2. MSAL's extensions': `<group>.json.lockfile`, created exclusively (``MSALExtensionsLock``),
///    so that an MSAL-based tool pointed at the same file (msal-extensions' `FilePersistence`)
///    and Sesame never read-modify-write it at once.
///
/// The bytes are read only once both are held: no program that takes either lock can be half-way
/// through writing them (msal-extensions rewrites the file in place), so bytes that do not parse
/// then are really unreadable, and only then set aside.
public struct FileTokenStorage: TokenStorage {
    /// The directory holding the cache files.
    public let directory: URL
    /// `directory.path`, worked out once: ``version(group:)`` is on every silent token's path.
    private let directoryPath: String

    /// Storage in a given directory, created (mode 0700) when first written.
    public init(directory: URL) {
        self.directory = directory
        directoryPath = directory.path
    }

    /// Storage in `$XDG_DATA_HOME/sesame/`, or `~/.local/share/sesame/` when that is unset.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.init(directory: Self.defaultDirectory(environment: environment))
    }

    /// `$XDG_DATA_HOME/sesame`, per the XDG base directory spec (a relative value is ignored).
    public static func defaultDirectory(environment: [String: String]) -> URL {
        if let dataHome = environment["XDG_DATA_HOME"], dataHome.hasPrefix("/") {
            return URL(fileURLWithPath: dataHome, isDirectory: true).appending(path: "sesame", directoryHint: .isDirectory)
        }
        let home = environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path
        return URL(fileURLWithPath: home, isDirectory: true).appending(path: ".local/share/sesame", directoryHint: .isDirectory)
    }

    public var location: String { directory.path }

    /// The cache file of a group.
    public func fileURL(group: String) throws -> URL {
        guard Self.isFileName(group) else {
            throw TokenStorageError(location: location, reason: "the storage group \"\(group)\" cannot be a file name")
        }
        return directory.appending(path: "\(group).json", directoryHint: .notDirectory)
    }

    public func whileRefreshing<T: Sendable>(
        group: String, isolation: isolated (any Actor)?, _ body: () async throws -> T
    ) async throws -> T {
        let file = try fileURL(group: group)
        try createDirectory()
        return try await FileLock.whileHolding(path: file.path + ".refresh.lock", location: location, body)
    }

    /// The directory's last change as inotify reported it (no system call), or where it cannot
    /// tell, the cache file's identity, size and times (every write replaces the file by a rename).
    public func version(group: String) -> StoredVersion? {
        guard Self.isFileName(group) else { return nil }
        if let generation = DirectoryChanges.shared?.generation(ofDirectory: directoryPath) {
            return StoredVersion(stamp: [-1, Int64(bitPattern: generation)])
        }
        return StoredVersion.ofFile(atPath: directoryPath + "/" + group + ".json")
    }

    /// The room a refresh's answer will need, taken as a hidden file beside the cache that the
    /// write removes before it writes: the cache with the answer in it. The write makes the new
    /// file beside the old one (the old one's room comes back only with the rename), so that is
    /// the cache as it is and ``answerRoom`` for what the answer adds.
    public func reserveRoom(group: String) throws {
        let file = try fileURL(group: group)
        try createDirectory()
        let size = (try? Posix.linkStatus(file.path)).map { Int($0.st_size) } ?? 0
        do {
            try Posix.reserve(reservePath(of: file), size: size + Self.answerRoom)
        } catch {
            Posix.removeFile(reservePath(of: file))
            throw TokenStorageError(
                location: location, reason: "cannot reserve room for the cache: \(error.message)", problem: .init(errorNumber: error.code))
        }
    }

    /// What a refresh's answer can add to the cache: it replaces the account's refresh token, ID
    /// token and account, and replaces or adds one access token — each a few kilobytes (Entra
    /// bounds a token's size: past 200 groups an access token names where to read them instead of
    /// listing them), written as the answer sent them, with the cache's keys beside them. Not the
    /// transport's limit on an answer (16 MiB): room for that would refuse refreshes on every
    /// nearly full disk. An answer larger still, on a disk with no room for it, is not lost: its
    /// refresh token is kept aside (``RefreshRescue``) and stored by the next refresh.
    static let answerRoom = 64 * 1024

    public func releaseRoom(group: String) {
        guard let file = try? fileURL(group: group) else { return }
        Posix.removeFile(reservePath(of: file))
    }

    private func reservePath(of file: URL) -> String {
        file.deletingLastPathComponent().appending(path: ".\(file.lastPathComponent).reserve").path
    }

    /// A group names one file in the directory: not empty, no `/` or NUL, not `.` or `..`.
    private static func isFileName(_ group: String) -> Bool {
        !group.isEmpty && group != "." && group != ".." && !group.utf8.contains { $0 == UInt8(ascii: "/") || $0 == 0 }
    }

    public func transact(group: String, _ body: (Data?) throws -> TokenStorageAction) throws -> String? {
        let file = try fileURL(group: group)
        try createDirectory()
        return try FileLock.withLock(path: file.path + ".lock", location: location) {
            try MSALExtensionsLock.withLock(path: file.path + MSALExtensionsLock.suffix, location: location) {
                try transactLocked(file: file, body)
            }
        }
    }

    private func transactLocked(file: URL, _ body: (Data?) throws -> TokenStorageAction) throws -> String? {
        let current: Data?
        do {
            current = try Data(contentsOf: file)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            current = nil
        } catch {
            throw TokenStorageError(location: file.path, reason: "cannot read: \(error)")
        }

        let action = try body(current)
        if case .keep = action { return nil }
        // Readers of this process see the change at once, not when the kernel's event is read.
        defer { DirectoryChanges.shared?.noteChange(inDirectory: directoryPath) }
        switch action {
        case .keep:
            return nil
        case .write(let data):
            try replace(file, with: data)
            return nil
        case .setAsideAndWrite(let data):
            let stamp = Date().formatted(.iso8601).replacingEvery(":", with: "")
            let aside = file.deletingLastPathComponent().appending(path: "\(file.lastPathComponent).corrupt-\(stamp)")
            do {
                try Posix.rename(file.path, to: aside.path)
            } catch {
                throw TokenStorageError(location: file.path, reason: "cannot move the unreadable cache aside: \(error.message)")
            }
            try replace(file, with: data)
            pruneSetAside(beside: file, keeping: aside)
            return aside.path
        }
    }

    /// How long a set-aside cache (live tokens may be inside) is kept for a person to look at.
    public static let setAsideLifetime: TimeInterval = 7 * 24 * 3600

    /// Deletes set-aside copies of `file` older than a week, and all but the three newest.
    private func pruneSetAside(beside file: URL, keeping newest: URL) {
        let folder = file.deletingLastPathComponent()
        let prefix = "\(file.lastPathComponent).corrupt-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return }
        let copies = names.filter { $0.hasPrefix(prefix) }.map { folder.appending(path: $0) }.compactMap { url -> (URL, Date)? in
            guard let modified = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date else {
                return nil
            }
            return (url, modified)
        }.sorted { $0.1 > $1.1 }
        let cutoff = Date().addingTimeInterval(-Self.setAsideLifetime)
        for (index, (url, modified)) in copies.enumerated() where url != newest && (index >= 3 || modified < cutoff) {
            Posix.removeFile(url.path)
        }
    }

    /// Creates the directory 0700, or tightens an existing one of this user's that others could
    /// read or enter (a folder made by hand, or by an older version).
    private func createDirectory() throws {
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw TokenStorageError(location: location, reason: "cannot create the directory: \(error)", problem: .init(fileError: error))
        }
        if let status = try? Posix.linkStatus(directory.path), status.st_uid == Posix.userID, status.st_mode & 0o077 != 0 {
            try? Posix.changeMode(directory.path, 0o700)
        }
    }

    /// How far ahead of the clock a written cache's modification time is set. msal-extensions
    /// reloads the file only when its modification time is later than the `time.time()` it took
    /// *after* its last load (`PersistedTokenCache._reload_if_necessary`), and keeps what it
    /// loaded when it writes next. A write stamped by the kernel (whose clock ticks every few
    /// milliseconds) or landing between its load and its clock reading would be missed, then
    /// overwritten: with the time a little ahead, it reloads on each access until then instead.
    package static let modificationTimeLead: TimeInterval = 2

    /// Writes a temporary file (0600, created exclusively) and renames it over the target: every
    /// process sees the old cache or the new one, never a part, and the new one survives this
    /// process being killed the moment this returns (its bytes are the kernel's). Making them
    /// durable against a power cut — fsync of the file, then of the directory — costs from a
    /// fraction of a millisecond to tens on a laptop's disk, and happens on another thread (``Durability``): the
    /// caller's next request (the Graph call after a sign-in) does not wait for the disk.
    private func replace(_ file: URL, with data: Data) throws {
        // The room a refresh reserved is this write's.
        Posix.removeFile(reservePath(of: file))
        let temporary = file.deletingLastPathComponent().appending(
            path: ".\(file.lastPathComponent).\(RandomString.base64URL(byteCount: 6)).tmp")
        let descriptor: Int32
        do {
            descriptor = try Posix.openOwnerOnly(temporary.path, O_WRONLY | O_CREAT | O_EXCL)
        } catch {
            throw TokenStorageError(
                location: file.path, reason: "cannot create a temporary file: \(error.message)", problem: .init(errorNumber: error.code))
        }
        do {
            defer { Posix.close(descriptor) }
            try Posix.writeAll(descriptor, data)
            try Posix.setModificationTime(descriptor, to: Date().addingTimeInterval(Self.modificationTimeLead))
        } catch {
            Posix.removeFile(temporary.path)
            throw TokenStorageError(location: file.path, reason: "cannot write: \(error)", problem: .init(errorNumber: error.code))
        }
        do {
            try Posix.rename(temporary.path, to: file.path)
        } catch {
            Posix.removeFile(temporary.path)
            throw TokenStorageError(
                location: file.path, reason: "cannot replace the cache file: \(error.message)", problem: .init(errorNumber: error.code))
        }
        Durability.shared.sync(file: file.path, directory: file.deletingLastPathComponent().path)
    }
}

/// Flushes written caches to the disk on a thread of its own, in the order they were written:
/// the file's data, then its directory's entry (the rename). Until it has, a power cut (not a
/// crash of the process) can take the newest write back to the one before it; ext4 (Debian's
/// default) writes a renamed-over file's data before the rename in any case.
package final class Durability: Sendable {
    package static let shared = Durability()
    private let queue = DispatchQueue(label: "sesame.token-cache.fsync", qos: .utility)
    private let group = DispatchGroup()

    /// Flushes `file` (when it is still the one written: a later write flushes its own) and `directory`.
    func sync(file: String, directory: String) {
        queue.async(group: group) {
            Posix.syncFile(file)
            Posix.syncDirectory(directory)
        }
    }

    /// Waits until every write so far is on the disk (a program about to exit: `sesame login`).
    package func waitUntilFlushed() {
        group.wait()
    }
}
