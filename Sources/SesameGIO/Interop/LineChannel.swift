import CGio
import Glibc

/// Lines of text over a pair of file descriptors, read on the GLib main loop: what the account
/// service and the window it starts (`sesame --service-face`) say to each other over the window's
/// standard input and output. A line longer than ``maximumLineLength`` ends the channel (the other
/// side is broken or hostile), as does the end of input; writing blocks only as long as the pipe
/// is full (the lines are short, the reader always reads).
@MainActor
public final class LineChannel {
    /// The longest line accepted.
    public static let maximumLineLength = 1 << 20

    private final class State: @unchecked Sendable {
        var buffer: [UInt8] = []
        var onLine: (@MainActor (String) -> Void)?
        var onClose: (@MainActor () -> Void)?
        var closed = false
    }

    private let state = State()
    private let readFD: Int32
    private let writeFD: Int32
    private var source: guint = 0

    /// Reads lines from `readFD` and writes to `writeFD` (both kept open until ``close()``).
    public init(readFD: Int32, writeFD: Int32) {
        self.readFD = readFD
        self.writeFD = writeFD
        var failure: UnsafeMutablePointer<GError>?
        _ = g_unix_set_fd_nonblocking(readFD, 1, &failure)
        if failure != nil { g_error_free(failure) }
        let readable: GUnixFDSourceFunc = { fd, _, data in
            let state = Unmanaged<State>.fromOpaque(data!).takeUnretainedValue()
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EAGAIN || errno == EINTR { return 1 }
            guard count > 0 else {
                MainActor.assumeIsolated { LineChannel.finish(state) }
                return 0
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

    /// The process's standard input and output as a channel: standard output is moved to a
    /// descriptor of the channel's own and the old one points at standard error, so that nothing
    /// else the process prints (a library's warning) can break a line.
    public static func standardStreams() -> LineChannel {
        let output = dup(1)
        dup2(2, 1)
        return LineChannel(readFD: 0, writeFD: output)
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
            let written = bytes.withUnsafeBytes { write(writeFD, $0.baseAddress! + offset, $0.count - offset) }
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

/// A program started with its standard input and output as a ``LineChannel`` (its standard error
/// is the parent's), and told when it ends.
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

    /// Starts `arguments[0]` (an absolute path) with `arguments`; `environment` replaces the
    /// parent's when given.
    /// - Throws: ``GLibError`` when it cannot be started.
    public init(arguments: [String], environment: [String: String]? = nil) throws(GLibError) {
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
        processID = pid
        channel = LineChannel(readFD: output, writeFD: input)
        let ended: GChildWatchFunc = { pid, status, data in
            let box = Unmanaged<ExitBox>.fromOpaque(data!).takeUnretainedValue()
            g_spawn_close_pid(pid)
            MainActor.assumeIsolated { box.onExit?(status) }
        }
        let release: GDestroyNotify = { data in Unmanaged<ExitBox>.fromOpaque(data!).release() }
        g_child_watch_add_full(G_PRIORITY_DEFAULT, pid, ended, Unmanaged.passRetained(exit).toOpaque(), release)
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
