import Foundation

/// Debian's `swtpm`: a TPM 2.0 (libtpms) for a test, on Unix sockets in a folder of its own, which
/// also holds its state — so a TPM stopped and started again on the same folder is the same TPM
/// (a reboot), and one on another folder is another computer's.
public final class SoftwareTPM: @unchecked Sendable {
    /// Its state and its sockets.
    public let directory: URL
    private var process: Process?

    /// The TPM as tpm2-tss opens it (`SESAME_TPM`).
    public var tcti: String { "swtpm:path=\(directory.appending(path: "sock").path)" }

    /// A new TPM (fresh state), started.
    public convenience init() throws {
        try self.init(state: Repository.temporaryDirectory("swtpm"))
    }

    /// The TPM whose state is in `state`, started.
    public init(state: URL) throws {
        directory = state
        try start()
    }

    /// Starts it (again) on its state.
    public func start() throws {
        let swtpm = "/usr/bin/swtpm"
        guard FileManager.default.isExecutableFile(atPath: swtpm) else {
            throw TestSupportError("swtpm is not installed (Debian's swtpm; `make test` installs it)")
        }
        let socket = directory.appending(path: "sock").path
        let control = socket + ".ctrl"
        for path in [socket, control] { try? FileManager.default.removeItem(atPath: path) }
        let process = Process()
        process.executableURL = URL(filePath: swtpm)
        // startup-clear: swtpm sends TPM2_Startup itself, as a computer's firmware does.
        process.arguments = [
            "socket", "--tpm2", "--tpmstate", "dir=\(directory.path)", "--server", "type=unixio,path=\(socket)",
            "--ctrl", "type=unixio,path=\(control)", "--flags", "startup-clear",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.start()
        self.process = process
        guard
            Eventually.holdsBlocking({ FileManager.default.fileExists(atPath: socket) && FileManager.default.fileExists(atPath: control) })
        else { throw TestSupportError("swtpm made no sockets in \(directory.path)") }
    }

    /// Stops it (its state stays): SIGTERM, then waits for it to end.
    public func stop() {
        process?.end()
        process = nil
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
