import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A person at a terminal window: an interactive bash on a pseudo-terminal of its own, into which
/// a command is typed — what Sesame counts as a person (not a program) running `sesame token`.
/// Everything the terminal showed comes back, the command's output among the shell's prompts.
public enum Terminal {
    /// What the terminal showed, and how the shell ended.
    public struct Session: Sendable {
        public let status: Int32
        public let shown: String

        /// The first JSON web token shown (what `sesame token` prints), if any.
        public var token: String? {
            shown.split(whereSeparator: { $0.isWhitespace }).map(String.init).first {
                $0.hasPrefix("eyJ") && $0.split(separator: ".").count == 3
            }
        }
    }

    /// Types `command` into `bash --norc -i` on a new pseudo-terminal, in `environment`, and
    /// reads the screen until the shell says the command ended (an `echo` of its status typed
    /// after it); then types `exit`. `status` is the command's exit status.
    public static func type(_ command: String, environment: [String: String]) throws -> Session {
        var leader: Int32 = -1
        var follower: Int32 = -1
        guard openpty(&leader, &follower, nil, nil, nil) == 0 else { throw TestSupportError("no pseudo-terminal: \(errno)") }
        let process = Process()
        process.executableURL = URL(filePath: "/bin/bash")
        process.arguments = ["--norc", "--noprofile", "-i"]
        process.environment = environment
        // This side keeps the terminal open too, so that nothing the shell wrote is lost when it ends.
        let terminal = FileHandle(fileDescriptor: follower, closeOnDealloc: true)
        process.standardInput = terminal
        process.standardOutput = terminal
        process.standardError = terminal
        let screen = FileHandle(fileDescriptor: leader, closeOnDealloc: true)
        final class Shown: @unchecked Sendable {
            let lock = NSLock()
            var data = Data()
            var status: Int32?
        }
        let shown = Shown()
        let ended = DispatchSemaphore(value: 0)
        try process.start()
        let screenDescriptor = leader
        Thread.detachNewThread {
            // The screen until the status line shows (the typed line itself shows `$?`, not digits).
            // read(2) itself: FileHandle's read(upToCount:) waits for the whole count on a terminal.
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while case let count = read(screenDescriptor, &chunk, chunk.count), count > 0 {
                shown.lock.lock()
                shown.data.append(contentsOf: chunk.prefix(count))
                let text = String(decoding: shown.data, as: UTF8.self)
                shown.lock.unlock()
                if let range = text.range(of: #"sesame-terminal-status:(\d+):"#, options: .regularExpression) {
                    shown.status = Int32(text[range].split(separator: ":")[1])
                    ended.signal()
                    return
                }
            }
            ended.signal()
        }
        screen.write(Data("\(command)\necho sesame-terminal-status:$?:\n".utf8))
        let finished = ended.wait(timeout: .now() + 300) == .success
        screen.write(Data("exit\n".utf8))
        process.waitUntilExit()
        try? terminal.close()
        shown.lock.lock()
        defer { shown.lock.unlock() }
        let text = String(decoding: shown.data, as: UTF8.self)
        guard finished, let status = shown.status else { throw TestSupportError("the typed command did not end: \(text.suffix(2000))") }
        return Session(status: status, shown: text)
    }
}
