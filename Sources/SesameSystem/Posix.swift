import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// The one place the Core and the modules over it (SesameKeyring, SesameSamples, SesameGtk, the
/// command) call the C library's file system calls directly (`open`, `flock`, `fstat`, `fchmod`,
/// `fsync`, `rename`, `unlink`, inotify's), as SwiftNIO's `Sources/NIOPosix/System.swift` is NIO's:
/// each call reads `errno` at once, retries `EINTR`, and turns a failure into a
/// ``SystemCallError`` that carries `strerror`'s sentence. What a private file needs
/// (`O_NOFOLLOW`, `O_CLOEXEC`, mode 0600) is decided here, not at each caller, so a new caller
/// cannot forget one of them. (`check-layering.sh`'s rule 9 finds these calls anywhere else.)
///
/// Package access: Sesame's own modules use it; it is not part of the Core's public API.
package enum Posix {
    /// The mode of every file Sesame creates: read and write for its owner, nothing for others.
    package static let ownerOnlyMode: mode_t = 0o600

    /// Opens `path` with `flags` (`O_WRONLY`, `O_RDWR`, `O_CREAT`, `O_EXCL`, `O_TRUNC`) plus
    /// `O_NOFOLLOW` and `O_CLOEXEC`: a symbolic link at `path` is refused (`ELOOP`), never followed
    /// to where someone else pointed it, and no program Sesame starts (WebKit's processes, a
    /// browser) inherits the descriptor. With `O_CREAT` the file is its owner's alone, mode 0600,
    /// whatever the umask — and so is an existing file of this user's that was more open.
    /// - Returns: the descriptor; the caller closes it.
    package static func openOwnerOnly(_ path: String, _ flags: Int32) throws(SystemCallError) -> Int32 {
        let descriptor = try call("open") { open(path, flags | O_NOFOLLOW | O_CLOEXEC, ownerOnlyMode) }
        var status = stat()
        if flags & O_CREAT != 0, fstat(descriptor, &status) == 0, status.st_uid == getuid(), status.st_mode & 0o777 != ownerOnlyMode {
            // The umask may have taken bits away, and an existing file keeps its old mode. Another
            // user's file is left as it is (even by root): its caller refuses it.
            _ = fchmod(descriptor, ownerOnlyMode)
        }
        return descriptor
    }

    /// Opens a file to write that Sesame made or may replace: a new one (mode 0600), or an
    /// existing regular file of this user's with no other name (one hard link) — never a link,
    /// a device or a FIFO, another user's file (even as root), or a file that is also known by
    /// another name elsewhere; it is emptied and made 0600. The error says which rule it broke.
    package static func openOwnFileForWriting(_ path: String) throws(SystemCallError) -> Int32 {
        do {
            return try openOwnerOnly(path, O_WRONLY | O_CREAT | O_EXCL)
        } catch  where error.code == EEXIST {
            let descriptor = try openOwnerOnly(path, O_WRONLY | O_NONBLOCK)
            var status = stat()
            guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_uid == getuid(),
                status.st_nlink == 1
            else {
                close(descriptor)
                throw SystemCallError(call: "open", code: EPERM, detail: "it is not a file of this user's alone")
            }
            _ = try call("ftruncate") { ftruncate(descriptor, 0) }
            // What it will hold is its owner's alone, as a new file's would be.
            _ = fchmod(descriptor, ownerOnlyMode)
            return descriptor
        }
    }

    /// Closes a descriptor. Linux releases it even when `close` reports an error, so there is
    /// nothing to retry or undo.
    package static func close(_ descriptor: Int32) {
        _ = Glibc.close(descriptor)
    }

    /// Whether the open file is a regular file (not a directory, device, FIFO or socket) owned by
    /// this process's user: a lock file someone else planted in a shared folder is not.
    package static func isRegularFileOfThisUser(_ descriptor: Int32) -> Bool {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return false }
        return status.st_mode & S_IFMT == S_IFREG && status.st_uid == getuid()
    }

    /// Takes the exclusive advisory lock (`flock(LOCK_EX | LOCK_NB)`) of an open file without
    /// waiting: `false` when another open file description holds it. Locks are per open file
    /// description, so two `open`s of one file exclude each other even in one process.
    package static func tryLockExclusive(_ descriptor: Int32) throws(SystemCallError) -> Bool {
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            switch code {
            case EINTR: continue
            case EWOULDBLOCK: return false
            default: throw SystemCallError(call: "flock", code: code)
            }
        }
        return true
    }

    /// Lets go of the lock taken by ``tryLockExclusive(_:)`` (closing the descriptor does too).
    package static func unlock(_ descriptor: Int32) {
        _ = flock(descriptor, LOCK_UN)
    }

    /// The device and inode of an open file: what names one file, whatever path reaches it.
    package static func identity(of descriptor: Int32) -> FileIdentity? {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        return FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    /// The device and inode of the file at `path` (a symbolic link is described, not followed).
    package static func identity(ofPath path: String) throws(SystemCallError) -> FileIdentity {
        let status = try linkStatus(path)
        return FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    /// Sets an open file's modification time to `date`, to the nanosecond (`futimens`); its access
    /// time is left alone. The kernel stamps a write with a clock that ticks every few
    /// milliseconds; a program that compares the stamp with its own clock needs the exact time.
    package static func setModificationTime(_ descriptor: Int32, to date: Date) throws(SystemCallError) {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        let nanoseconds = min(999_999_999, max(0, Int((date.timeIntervalSince1970 - seconds) * 1_000_000_000)))
        // UTIME_OMIT, `((1l << 30) - 2l)` in <sys/stat.h>: a macro Swift does not import.
        let omit = (1 << 30) - 2
        var times = [
            timespec(tv_sec: 0, tv_nsec: omit),
            timespec(tv_sec: Int(seconds), tv_nsec: nanoseconds),
        ]
        _ = try call("futimens") { futimens(descriptor, &times) }
    }

    /// This process's id.
    package static var processID: Int32 { getpid() }

    /// Whether a process with this id exists in this process's PID namespace (`kill(pid, 0)`: no
    /// signal is sent; `EPERM` means it exists and belongs to someone else).
    package static func processExists(_ id: Int32) -> Bool {
        guard id > 0 else { return false }
        if kill(id, 0) == 0 { return true }
        return errno == EPERM
    }

    /// Renames `source` over `destination` atomically (both in one file system).
    package static func rename(_ source: String, to destination: String) throws(SystemCallError) {
        _ = try call("rename") { Glibc.rename(source, destination) }
    }

    /// Removes a file if it is there; a file that is already gone is not a failure, and the
    /// callers (cleaning up after a failure, pruning old copies) have nothing to do about others.
    package static func removeFile(_ path: String) {
        _ = unlink(path)
    }

    /// fsync of a file by path (nothing when it is gone). Best effort, as ``syncDirectory(_:)``.
    package static func syncFile(_ path: String) {
        guard let descriptor = try? call("open", { open(path, O_RDONLY | O_CLOEXEC) }) else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    /// Flushes a directory's entries to disk (after a rename into it), so a crash leaves the new
    /// name or the old one. Best effort: a file system that cannot is not an error.
    package static func syncDirectory(_ path: String) {
        guard let descriptor = try? call("open", { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }) else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    /// The device and inode of the file `path` leads to, links followed (`stat`): a process's
    /// executable through `/proc/PID/exe`. Nil when it cannot be reached.
    package static func identity(following path: String) -> FileIdentity? {
        var status = stat()
        guard fstatat(AT_FDCWD, path, &status, 0) == 0 else { return nil }
        return FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    /// The bytes of the regular file at `path` (not a link, device or FIFO), at most `limit` + 1
    /// of them — more than `limit` says the file is too large — or why it cannot be read.
    /// `followingLinks`: for a name a person gave (`sesame --replay latest.jsonl`), a symbolic link
    /// is followed as every tool follows its argument, and what it leads to must be a regular file;
    /// `O_NONBLOCK` still keeps a FIFO at its end from holding the open until a writer comes.
    package static func readRegularFile(_ path: String, limit: Int, followingLinks: Bool = false) throws(SystemCallError) -> [UInt8] {
        let descriptor = try call("open") { open(path, O_RDONLY | O_NONBLOCK | (followingLinks ? 0 : O_NOFOLLOW) | O_CLOEXEC) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw SystemCallError(call: "open", code: EINVAL, detail: "it is not a regular file")
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while bytes.count <= limit {
            let count = try read(descriptor, into: &buffer)
            if count == 0 { break }
            bytes += buffer.prefix(count)
        }
        return Array(bytes.prefix(limit + 1))
    }

    /// Writes all of `bytes` to an open file (a short write is written on).
    package static func writeAll(_ descriptor: Int32, _ bytes: some Sequence<UInt8>) throws(SystemCallError) {
        var remaining = Array(bytes)
        while !remaining.isEmpty {
            let count = try call("write") { Glibc.write(descriptor, remaining, remaining.count) }
            remaining.removeFirst(count)
        }
    }

    /// Makes `path` a file of this user's (0600) that holds `size` bytes of the disk
    /// (`posix_fallocate`): room taken now, so that a write made in its place later finds it.
    /// A full disk fails here, with `ENOSPC`.
    package static func reserve(_ path: String, size: Int) throws(SystemCallError) {
        let descriptor = try openOwnerOnly(path, O_WRONLY | O_CREAT)
        defer { close(descriptor) }
        // posix_fallocate returns the error instead of setting errno.
        let result = posix_fallocate(descriptor, 0, off_t(size))
        guard result == 0 else { throw SystemCallError(call: "posix_fallocate", code: result) }
    }

    /// Writes `text` to standard error (a command's messages); a failure has nowhere to go.
    package static func writeStandardError(_ text: String) {
        try? writeAll(STDERR_FILENO, text.utf8)
    }

    /// Writes `text` to standard output.
    package static func writeStandardOutput(_ text: String) {
        try? writeAll(STDOUT_FILENO, text.utf8)
    }

    /// Standard input up to its end or `limit` bytes, whichever comes first (git's request).
    package static func readStandardInput(limit: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < limit, let count = try? read(STDIN_FILENO, into: &buffer), count > 0 {
            bytes += buffer.prefix(Swift.min(count, limit - bytes.count))
        }
        return bytes
    }

    /// Sleeps the calling thread (a lock's retry, on a thread of its own: never the main loop).
    /// The wall-clock time of day `secondsSince1970` is in the computer's time zone (`TZ`,
    /// `/etc/localtime`), as hours, minutes and seconds.
    package static func localTimeOfDay(secondsSince1970: Int64) -> (hour: Int, minute: Int, second: Int)? {
        var time = time_t(secondsSince1970)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return nil }
        return (Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    package static func sleep(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    /// The bytes of a regular file of this user's at `path` (not a link: `O_NOFOLLOW`), when it
    /// holds at most `limit` of them; nil otherwise (missing, another user's, a FIFO, too large).
    package static func readRegularFileOfThisUser(_ path: String, limit: Int) -> [UInt8]? {
        readRegularFile(path, limit: limit, ownedByThisUser: true)
    }

    /// The bytes of a regular file at `path`, whoever owns it (`/proc/PID/stat`), under the same
    /// rules as ``readRegularFileOfThisUser(_:limit:)``.
    package static func readFile(_ path: String, limit: Int) -> [UInt8]? {
        readRegularFile(path, limit: limit, ownedByThisUser: false)
    }

    private static func readRegularFile(_ path: String, limit: Int, ownedByThisUser: Bool) -> [UInt8]? {
        guard let descriptor = try? call("open", { open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC) }) else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, !ownedByThisUser || status.st_uid == getuid() else {
            return nil
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            guard let count = try? read(descriptor, into: &buffer) else { return nil }
            if count == 0 { return bytes }
            bytes += buffer.prefix(count)
            if bytes.count > limit { return nil }
        }
    }

    /// What `lstat` says of `path` (a symbolic link is described, not followed).
    package static func linkStatus(_ path: String) throws(SystemCallError) -> stat {
        var status = stat()
        _ = try call("lstat") { lstat(path, &status) }
        return status
    }

    /// Sets the permission bits of `path` (a directory Sesame tightens to 0700).
    package static func changeMode(_ path: String, _ mode: mode_t) throws(SystemCallError) {
        _ = try call("chmod") { chmod(path, mode) }
    }

    /// Whether `path` (`/proc/PID/fd/0`: a process's standard input) is a terminal: a character
    /// device of the console, a virtual terminal or a pseudo-terminal (Linux's majors 4, 5 and
    /// 136–143) — what a person types into, as against a pipe or a file.
    package static func isTerminal(_ path: String) -> Bool {
        var status = stat()
        guard fstatat(AT_FDCWD, path, &status, 0) == 0, status.st_mode & S_IFMT == S_IFCHR else { return false }
        let major = (status.st_rdev >> 8) & 0xfff
        return major == 4 || major == 5 || (136...143).contains(major)
    }

    /// This process's real user id (the owner its files must have).
    package static var userID: uid_t { getuid() }

    /// A new inotify instance, close-on-exec.
    package static func inotifyInstance() throws(SystemCallError) -> Int32 {
        try call("inotify_init1") { inotify_init1(Int32(IN_CLOEXEC)) }
    }

    /// Watches `path` for `mask`'s events; the watch descriptor (the same for a directory watched
    /// twice, even by two paths).
    package static func addWatch(_ instance: Int32, path: String, mask: UInt32) throws(SystemCallError) -> Int32 {
        try call("inotify_add_watch") { inotify_add_watch(instance, path, mask) }
    }

    /// Ends a watch (its `IN_IGNORED` event follows).
    package static func removeWatch(_ instance: Int32, _ watch: Int32) {
        _ = inotify_rm_watch(instance, watch)
    }

    /// Reads what is there into `buffer` (blocking until something is): the number of bytes read.
    package static func read(_ descriptor: Int32, into buffer: inout [UInt8]) throws(SystemCallError) -> Int {
        let capacity = buffer.count
        return try call("read") { Glibc.read(descriptor, &buffer, capacity) }
    }

    /// `strerror`'s sentence for an `errno` value ("No such file or directory").
    package static func message(for code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// Runs a call that answers -1 and sets `errno` on failure, again while it is interrupted
    /// (`EINTR`). `errno` is read right after the call, before anything else can change it.
    private static func call<Result: FixedWidthInteger>(
        _ name: String, _ body: () -> Result
    ) throws(SystemCallError) -> Result {
        while true {
            let result = body()
            guard result == -1 else { return result }
            let code = errno
            if code != EINTR { throw SystemCallError(call: name, code: code) }
        }
    }
}

/// What names a file on this machine: its device and inode. A file replaced by a rename, or
/// removed and created again, is another file.
package struct FileIdentity: Hashable, Sendable {
    package let device: UInt64
    package let inode: UInt64
}

/// A system call failed: which one, and `errno` with the C library's sentence for it.
package struct SystemCallError: Error, Equatable, CustomStringConvertible {
    /// The call (`open`, `flock`, `rename`, …).
    package let call: String
    /// `errno` as the call left it (`ENOENT`, `ELOOP`, …).
    package let code: Int32

    /// Why Sesame refused, when the call itself did not fail (nil: `strerror`'s sentence says it).
    package let detail: String?

    package init(call: String, code: Int32, detail: String? = nil) {
        self.call = call
        self.code = code
        self.detail = detail
    }

    /// `strerror`'s sentence ("Too many levels of symbolic links"), or Sesame's reason.
    package var message: String { detail ?? Posix.message(for: code) }

    /// The sentence alone: callers say what they were doing ("cannot open the lock file …: ").
    package var description: String { message }
}
