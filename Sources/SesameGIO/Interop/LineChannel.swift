import CGio
import Glibc

/// Lines of text, read on the GLib main loop: over a connected Unix socket, what the account
/// service and the window it starts (`sesame --service-face`) say to each other — each read comes
/// with its sender's process id as the kernel attached it (`SCM_CREDENTIALS`), and bytes from any
/// process but the expected peer are dropped, never read as a line (``onForeign`` is told) — or
/// over a child's standard input and output (the demo's emulator). A line
/// longer than ``maximumLineLength`` ends the channel (the other side is broken or hostile), as
/// does the end of input; writing blocks only as long as the socket is full (the lines are short,
/// the reader always reads).
@MainActor
public final class LineChannel {
    /// The longest line accepted.
    public static let maximumLineLength = 1 << 20
    /// The descriptor the window finds its channel at (``inherited()``).
    public static let inheritedDescriptor: Int32 = 3

    private final class State: @unchecked Sendable {
        var buffer: [UInt8] = []
        var onLine: (@MainActor (String) -> Void)?
        var onClose: (@MainActor () -> Void)?
        var onForeign: (@MainActor (Int32) -> Void)?
        var closed = false
        /// The process whose bytes are read, on a socket; 0: a pipe, whoever writes.
        var peer: pid_t = 0
    }

    private let state = State()
    private let readFD: Int32
    private let writeFD: Int32
    private var source: guint = 0

    /// Reads lines from the socket `descriptor` (kept open until ``close()``) sent by process `peer`.
    convenience init(socket descriptor: Int32, peer: pid_t) {
        self.init(readFD: descriptor, writeFD: descriptor, peer: peer)
    }

    /// Reads lines from `readFD` and writes to `writeFD` (both kept open until ``close()``): a
    /// socket whose sender must be `peer`, or pipes (`peer` 0).
    init(readFD: Int32, writeFD: Int32, peer: pid_t) {
        self.readFD = readFD
        self.writeFD = writeFD
        state.peer = peer
        var failure: UnsafeMutablePointer<GError>?
        _ = g_unix_set_fd_nonblocking(readFD, 1, &failure)
        if failure != nil { g_error_free(failure) }
        let readable: GUnixFDSourceFunc = { fd, _, data in
            let state = Unmanaged<State>.fromOpaque(data!).takeUnretainedValue()
            var chunk = [UInt8](repeating: 0, count: 65_536)
            var sender: pid_t = 0
            let count = chunk.withUnsafeMutableBytes {
                state.peer == 0 ? read(fd, $0.baseAddress, $0.count) : sesame_receive_with_sender(fd, $0.baseAddress, $0.count, &sender)
            }
            if count < 0, errno == EAGAIN || errno == EINTR { return 1 }
            guard count > 0 else {
                MainActor.assumeIsolated { LineChannel.finish(state) }
                return 0
            }
            guard sender == state.peer else {
                // Another process holds this socket (taken with pidfd_getfd, say): nothing it
                // sends is read.
                MainActor.assumeIsolated { state.onForeign?(sender) }
                return 1
            }
            state.buffer += chunk.prefix(count)
            var lines: [String] = []
            while let newline = state.buffer.firstIndex(of: 10) {
                lines.append(String(decoding: state.buffer[..<newline], as: UTF8.self))
                state.buffer.removeSubrange(...newline)
            }
            let tooLong = state.buffer.count > LineChannel.maximumLineLength
            MainActor.assumeIsolated {
                for line in lines where !state.closed { state.onLine?(line) }
                if tooLong { LineChannel.finish(state) }
            }
            return tooLong ? 0 : 1
        }
        let release: GDestroyNotify = { data in Unmanaged<State>.fromOpaque(data!).release() }
        source = g_unix_fd_add_full(
            G_PRIORITY_DEFAULT, readFD, GIOCondition(G_IO_IN.rawValue | G_IO_HUP.rawValue | G_IO_ERR.rawValue), readable,
            Unmanaged.passRetained(state).toOpaque(), release)
    }

    /// The channel the service left this process at descriptor ``inheritedDescriptor``, made
    /// close-on-exec at once (nothing this process starts — WebKit's processes, a browser —
    /// inherits it), reading only what its parent, the service, sends; nil when that descriptor
    /// is not a Unix socket (the program was not started by the service).
    public static func inherited() -> LineChannel? {
        let descriptor = inheritedDescriptor
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else { return nil }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        var on: Int32 = 1
        // SO_PASSCRED (16): the service's bytes come with its process id.
        _ = setsockopt(descriptor, SOL_SOCKET, 16, &on, socklen_t(MemoryLayout<Int32>.size))
        return LineChannel(socket: descriptor, peer: getppid())
    }

    /// Called with the process id of a sender whose bytes were dropped.
    public var onForeign: (@MainActor (Int32) -> Void)? {
        get { state.onForeign }
        set { state.onForeign = newValue }
    }

    /// Called with each line read (without its newline).
    public var onLine: (@MainActor (String) -> Void)? {
        get { state.onLine }
        set { state.onLine = newValue }
    }

    /// Called once when the other side closed (or broke) the channel.
    public var onClose: (@MainActor () -> Void)? {
        get { state.onClose }
        set { state.onClose = newValue }
    }

    /// Writes `line` and a newline; false when the other side is gone.
    @discardableResult
    public func send(_ line: String) -> Bool {
        guard !state.closed else { return false }
        var bytes = Array(line.utf8)
        bytes.append(10)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                state.peer == 0
                    ? write(writeFD, $0.baseAddress! + offset, $0.count - offset)
                    : Glibc.send(writeFD, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0, errno == EINTR || errno == EAGAIN { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// Stops reading and closes both descriptors.
    public func close() {
        if source != 0 { g_source_remove(source) }
        source = 0
        if !state.closed {
            state.closed = true
            Glibc.close(readFD)
            if writeFD != readFD { Glibc.close(writeFD) }
        }
    }

    private static func finish(_ state: State) {
        guard !state.closed else { return }
        state.closed = true
        state.onClose?()
    }

    isolated deinit { close() }
}

/// A program started with a ``LineChannel`` to it, told when it ends. The channel is either a
/// Unix socket pair made here, the child's end at descriptor ``LineChannel/inheritedDescriptor``
/// (only this process and the child hold it, and only the child's bytes are read; its standard
/// input is `/dev/null`, its standard output this process's standard error) — or the child's
/// standard input and output, for a program that speaks on them (the identity emulator).
@MainActor
public final class ChildProcess {
    /// Its process id.
    public let processID: Int32
    /// Lines to and from it.
    public let channel: LineChannel
    private final class ExitBox: @unchecked Sendable {
        var onExit: (@MainActor (Int32) -> Void)?
    }
    private let exit = ExitBox()

    /// How the channel reaches the child.
    public enum Channel: Sendable {
        /// A socket of its own at descriptor 3 (``LineChannel/inherited()`` on its side).
        case socket
        /// Its standard input and output.
        case standardStreams
    }

    /// Starts `arguments[0]` (an absolute path) with `arguments` and a channel to it;
    /// `environment` replaces the parent's when given.
    /// - Throws: ``GLibError`` when it cannot be started.
    public init(arguments: [String], environment: [String: String]? = nil, channel kind: Channel = .socket) throws(GLibError) {
        switch kind {
        case .socket: (processID, channel) = try Self.startWithSocket(arguments, environment)
        case .standardStreams: (processID, channel) = try Self.startWithStandardStreams(arguments, environment)
        }
        let ended: GChildWatchFunc = { pid, status, data in
            let box = Unmanaged<ExitBox>.fromOpaque(data!).takeUnretainedValue()
            g_spawn_close_pid(pid)
            MainActor.assumeIsolated { box.onExit?(status) }
        }
        let release: GDestroyNotify = { data in Unmanaged<ExitBox>.fromOpaque(data!).release() }
        g_child_watch_add_full(G_PRIORITY_DEFAULT, processID, ended, Unmanaged.passRetained(exit).toOpaque(), release)
    }

    private static func startWithSocket(_ arguments: [String], _ environment: [String: String]?) throws(GLibError) -> (GPid, LineChannel) {
        var pair: [Int32] = [-1, -1]
        guard sesame_credential_socket_pair(&pair) == 0 else {
            throw GLibError(
                domain: "g-spawn-error-quark", code: 0,
                message: "Sesame could not make a channel to its window: \(String(cString: strerror(errno))).")
        }
        var pid: GPid = 0
        var failure: UnsafeMutablePointer<GError>?
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer {
            for pointer in argv + (envp ?? []) { free(pointer) }
            // The child's end is the child's alone.
            Glibc.close(pair[1])
        }
        let constantArgv = argv.map { $0.map { UnsafePointer($0) } }
        let constantEnvp = envp.map { $0.map { $0.map { UnsafePointer($0) } } }
        // The child's standard output is this process's standard error, passed as a copy: GLib
        // closes the descriptor it is given (as close-on-exec) in the child, and fd 2 itself
        // must stay the child's standard error.
        let output = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3)
        defer { if output >= 0 { Glibc.close(output) } }
        let sources: [Int32] = [pair[1]]
        let targets: [Int32] = [LineChannel.inheritedDescriptor]
        let flags = GSpawnFlags(G_SPAWN_DO_NOT_REAP_CHILD.rawValue | G_SPAWN_STDIN_FROM_DEV_NULL.rawValue)
        let started = constantArgv.withUnsafeBufferPointer { argvBuffer in
            (constantEnvp ?? []).withUnsafeBufferPointer { envpBuffer in
                g_spawn_async_with_pipes_and_fds(
                    nil, argvBuffer.baseAddress, constantEnvp == nil ? nil : envpBuffer.baseAddress, flags, nil, nil, -1, output, -1,
                    sources, targets, 1, &pid, nil, nil, nil, &failure)
            }
        }
        guard started != 0 else {
            Glibc.close(pair[0])
            let error = GLibError(failure)
            g_error_free(failure)
            throw error
        }
        return (pid, LineChannel(socket: pair[0], peer: pid))
    }

    private static func startWithStandardStreams(
        _ arguments: [String], _ environment: [String: String]?
    ) throws(GLibError) -> (GPid, LineChannel) {
        var pid: GPid = 0
        var input: Int32 = -1
        var output: Int32 = -1
        var failure: UnsafeMutablePointer<GError>?
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer {
            for pointer in argv + (envp ?? []) { free(pointer) }
        }
        var mutableArgv = argv
        let started = mutableArgv.withUnsafeMutableBufferPointer { argvBuffer in
            var mutableEnvp = envp ?? []
            return mutableEnvp.withUnsafeMutableBufferPointer { envpBuffer in
                g_spawn_async_with_pipes(
                    nil, argvBuffer.baseAddress, environment == nil ? nil : envpBuffer.baseAddress,
                    GSpawnFlags(G_SPAWN_DO_NOT_REAP_CHILD.rawValue | G_SPAWN_CLOEXEC_PIPES.rawValue), nil, nil, &pid, &input, &output,
                    nil, &failure)
            }
        }
        guard started != 0 else {
            let error = GLibError(failure)
            g_error_free(failure)
            throw error
        }
        return (pid, LineChannel(readFD: output, writeFD: input, peer: 0))
    }

    /// Called with its wait status once it ended.
    public var onExit: (@MainActor (Int32) -> Void)? {
        get { exit.onExit }
        set { exit.onExit = newValue }
    }

    /// Asks it to end (SIGTERM).
    public func terminate() { kill(processID, SIGTERM) }
}

/// Replacing the running program with another.
public enum ProgramReplacement {
    /// Runs `path` with `arguments` (its `argv`, the first its name) in place of this process;
    /// returns only when it could not (with `errno`'s meaning).
    public static func exec(_ path: String, _ arguments: [String]) -> String {
        var argv = arguments.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
        }
        let code = argv.withUnsafeMutableBufferPointer { execv(path, $0.baseAddress!) }
        return code == 0 ? "" : String(cString: strerror(errno))
    }
}
