import Foundation

/// Runs a program to its end and captures what it printed: both pipes are read on their own
/// threads, so neither fills up and blocks the program.
public enum ProcessRunner {
    /// What a run printed and how it ended.
    public struct Result: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
    }

    /// Runs `executable` with `arguments` in `environment` (the test's own when nil), in
    /// `currentDirectory` (the test's own when nil).
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, currentDirectory: URL? = nil
    ) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.start()
        return collect(process, stdout: out, stderr: err)
    }

    /// Waits for a started `process` to end, reading both of its pipes at once (each on a thread
    /// of its own, so neither fills up and blocks it), and returns what it printed.
    public static func collect(_ process: Process, stdout out: Pipe, stderr err: Pipe) -> Result {
        final class Box: @unchecked Sendable { var data = Data() }
        let stderr = Box()
        let stderrRead = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            stderr.data = err.fileHandleForReading.readDataToEndOfFile()
            stderrRead.signal()
        }
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        stderrRead.wait()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr.data, as: UTF8.self))
    }
}

extension Process {
    /// Starts the program with no signal blocked, whatever thread asks. A child inherits the
    /// signal mask of the thread that starts it, and the threads async tests run on block most
    /// signals, SIGTERM among them: a program started from one ignored `end()`'s SIGTERM (and
    /// WebKitWebDriver, started by a flow started so, ignored Selenium's for its minute).
    public func start() throws {
        final class Outcome: @unchecked Sendable {
            let process: Process
            var failure: (any Error)?
            init(_ process: Process) { self.process = process }
        }
        let outcome = Outcome(self)
        let started = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var none = sigset_t()
            sigemptyset(&none)
            pthread_sigmask(SIG_SETMASK, &none, nil)
            do { try outcome.process.run() } catch { outcome.failure = error }
            started.signal()
        }
        started.wait()
        if let failure = outcome.failure { throw failure }
    }

    /// Ends a program a test started: SIGTERM, then SIGKILL if it is still there a second later
    /// (a server finishing its open connections, socat's forked children), and waits for it.
    public func end() {
        if isRunning { terminate() }
        if !Eventually.holdsBlocking(within: .seconds(1), every: .milliseconds(20), { !isRunning }) {
            kill(processIdentifier, SIGKILL)
        }
        waitUntilExit()
    }
}
