import Dispatch
import FoundationEssentials
import Glibc
import SesameSystem
import Synchronization

/// Notices that something in a directory changed without a system call per question: one
/// inotify instance for the process, one thread blocked on it, and per watched directory the
/// number of the last event seen in it (numbers come from one process-wide sequence, so a
/// directory watched again after its watch ended never repeats an earlier number).
///
/// Stores ask ``generation(ofDirectory:)`` before using a parsed copy of their bytes: the same
/// number means no file in the directory was created, written, renamed, deleted or had its
/// attributes changed since the copy was read. Writes of this process call
/// ``noteChange(inDirectory:)`` as they finish, so the process's own next read never waits for
/// the kernel's event; another process's write is seen as soon as the event is read (within
/// microseconds). Where inotify cannot answer — no instance, a directory that does not exist,
/// a network file system another machine may write to — the answer is `nil` and the caller
/// compares the file's `stat` instead.
package final class DirectoryChanges: Sendable {
    /// The process's watcher, started on first use; `nil` when inotify is unavailable.
    package static let shared: DirectoryChanges? = {
        guard let changes = DirectoryChanges() else { return nil }
        changes.start()
        return changes
    }()

    /// A watched directory's last event number.
    private final class Watch: Sendable {
        let descriptor: Int32
        let lastChange: Atomic<UInt64>
        init(descriptor: Int32, lastChange: UInt64) {
            self.descriptor = descriptor
            self.lastChange = Atomic(lastChange)
        }
    }

    private struct Watches {
        var byPath: [String: Watch] = [:]
        var byDescriptor: [Int32: (path: String, watch: Watch)] = [:]
        /// Folders on network file systems: asked about once.
        var remote: Set<String> = []
    }

    private let inotify: Int32
    private let sequence = Atomic<UInt64>(1)
    private let watches = Mutex(Watches())

    private init?() {
        guard let instance = try? Posix.inotifyInstance() else { return nil }
        inotify = instance
    }

    /// What changes a cache: files created, written, moved in or out, deleted, their modes or
    /// times changed, and the directory itself deleted or moved.
    private static let mask: UInt32 =
        UInt32(IN_CREATE) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_MODIFY) | UInt32(IN_MOVED_FROM) | UInt32(IN_MOVED_TO)
        | UInt32(IN_DELETE) | UInt32(IN_ATTRIB) | UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF) | UInt32(IN_ONLYDIR)

    /// The number of the last change seen in `path` (an absolute directory), watching it from
    /// now on if it was not yet; `nil` when it cannot be watched.
    package func generation(ofDirectory path: String) -> UInt64? {
        let (known, remote) = watches.withLock { ($0.byPath[path], $0.remote.contains(path)) }
        if let known { return known.lastChange.load(ordering: .acquiring) }
        guard !remote, FileManager.default.fileExists(atPath: path) else { return nil }
        guard Self.isLocalFileSystem(path) else {
            watches.withLock { _ = $0.remote.insert(path) }
            return nil
        }
        return watches.withLock { watches -> UInt64? in
            if let watch = watches.byPath[path] { return watch.lastChange.load(ordering: .acquiring) }
            guard let descriptor = try? Posix.addWatch(inotify, path: path, mask: Self.mask) else { return nil }
            // A directory reached by two paths shares one kernel watch: keep the first path's.
            if let existing = watches.byDescriptor[descriptor] { return existing.watch.lastChange.load(ordering: .acquiring) }
            let watch = Watch(descriptor: descriptor, lastChange: sequence.add(1, ordering: .relaxed).newValue)
            watches.byPath[path] = watch
            watches.byDescriptor[descriptor] = (path, watch)
            return watch.lastChange.load(ordering: .acquiring)
        }
    }

    /// This process changed something in `path`: the next ``generation(ofDirectory:)`` differs.
    package func noteChange(inDirectory path: String) {
        guard let watch = watches.withLock({ $0.byPath[path] }) else { return }
        watch.lastChange.store(sequence.add(1, ordering: .relaxed).newValue, ordering: .releasing)
    }

    private func start() {
        // Its own serial queue: a thread of libdispatch's overcommitting pool, blocked in `read`
        // for the life of the process, never one of the cooperative pool's.
        DispatchQueue(label: "sesame.directory-changes").async { [self] in readEvents() }
    }

    /// Reads events for ever (the instance lives as long as the process). Each event is
    /// `struct inotify_event`: `wd`, `mask`, `cookie`, `len` (32 bits each, host order), then
    /// `len` bytes of NUL-padded name.
    private func readEvents() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let header = 16
        func word(_ at: Int) -> UInt32 {
            UInt32(buffer[at]) | UInt32(buffer[at + 1]) << 8 | UInt32(buffer[at + 2]) << 16 | UInt32(buffer[at + 3]) << 24
        }
        while true {
            // An interrupted read is read again; any other failure ends the watcher (nothing
            // more will come from that instance).
            guard let count = try? Posix.read(inotify, into: &buffer) else { return }
            var offset = 0
            while offset + header <= count {
                let descriptor = Int32(bitPattern: UInt32(littleEndian: word(offset)))
                let mask = UInt32(littleEndian: word(offset + 4))
                let length = Int(UInt32(littleEndian: word(offset + 12)))
                let name = buffer[(offset + header)..<min(count, offset + header + length)].prefix { $0 != 0 }
                offset += header + length
                // Opening and closing a lock file (every transaction does), or creating and
                // removing MSAL's extensions' one, changes no cache.
                if Self.isLockFile(name) { continue }
                handle(descriptor: descriptor, mask: mask)
            }
        }
    }

    /// The names of lock files: Sesame's `.lock`s and MSAL's extensions' `.lockfile`s.
    private static let lockSuffixes = [Array(".lock".utf8), Array(MSALExtensionsLock.suffix.utf8)]

    private static func isLockFile(_ name: ArraySlice<UInt8>) -> Bool {
        lockSuffixes.contains { suffix in name.count > suffix.count && name.suffix(suffix.count).elementsEqual(suffix) }
    }

    private func handle(descriptor: Int32, mask: UInt32) {
        let number = sequence.add(1, ordering: .relaxed).newValue
        watches.withLock { watches in
            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                // Events were lost: every directory may have changed.
                for watch in watches.byPath.values { watch.lastChange.store(number, ordering: .releasing) }
                return
            }
            guard let (path, watch) = watches.byDescriptor[descriptor] else { return }
            watch.lastChange.store(number, ordering: .releasing)
            if mask & (UInt32(IN_IGNORED) | UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF) | UInt32(IN_UNMOUNT)) != 0 {
                // The watch no longer follows this path: the next question watches it again.
                if mask & UInt32(IN_IGNORED) == 0 { Posix.removeWatch(inotify, descriptor) }
                watches.byDescriptor[descriptor] = nil
                if watches.byPath[path] === watch { watches.byPath[path] = nil }
            }
        }
    }

    /// Network file systems another machine writes to send no events here: not watched. The
    /// type is the one of the longest mount point above the folder in `/proc/self/mounts`;
    /// where that cannot be read, the folder is not watched either.
    private static func isLocalFileSystem(_ path: String) -> Bool {
        guard let mounts = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return false }
        let folder = URL(filePath: path).resolvingSymlinksInPath().path
        var best: (length: Int, type: Substring)?
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let mountPoint = unescapeMountField(fields[1])
            let inside = folder == mountPoint || folder.hasPrefix(mountPoint == "/" ? "/" : mountPoint + "/")
            if inside, mountPoint.count >= (best?.length ?? -1) { best = (mountPoint.count, fields[2]) }
        }
        guard let type = best?.type else { return false }
        let remote: Set<Substring> = ["nfs", "nfs4", "cifs", "smb3", "smbfs", "ceph", "afs", "9p", "glusterfs", "lustre", "davfs", "sshfs"]
        return !remote.contains(type) && !type.hasPrefix("fuse.")
    }

    /// `/proc/self/mounts` writes space, tab, newline and backslash in paths as `\ooo` octal.
    private static func unescapeMountField(_ field: Substring) -> String {
        guard field.contains("\\") else { return String(field) }
        var bytes: [UInt8] = []
        var utf8 = Array(field.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "\\"), utf8.count >= 3,
                let value = UInt8(String(decoding: utf8.prefix(3), as: UTF8.self), radix: 8)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
