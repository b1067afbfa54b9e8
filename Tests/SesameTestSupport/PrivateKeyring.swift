import Foundation

/// A desktop's keyring of a test's own: gnome-keyring on a session bus of its own (``SessionBus``),
/// its "login" collection unlocked with a password on standard input, as a desktop's login does,
/// in a home folder of the test's. What Sesame keeps there — sign-ins, this computer's device
/// identity — is the test's alone, whatever else runs.
public final class PrivateKeyring: @unchecked Sendable {
    public let bus: SessionBus
    /// The environment for programs that use it: the bus, the home folder, its data and runtime folders.
    public let environment: [String: String]
    private var daemon = Process()
    private let home: URL

    /// Starts the bus and the keyring in `home`.
    public init(home: URL) throws {
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home.path
        environment["XDG_DATA_HOME"] = home.appending(path: ".local/share").path
        environment["XDG_CONFIG_HOME"] = home.appending(path: ".config").path
        environment["XDG_STATE_HOME"] = home.appending(path: ".local/state").path
        // Its own runtime folder too: gnome-keyring's control socket is there, and a daemon
        // started in a shared one takes that socket over — after this one has gone, a keyring
        // D-Bus starts on demand elsewhere would no longer find the session's own, and start an
        // empty one whose first write waits for a password prompt nobody answers.
        let runtime = home.appending(path: "runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        environment["XDG_RUNTIME_DIR"] = runtime.path
        bus = try SessionBus(environment: environment)
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        self.environment = environment
        self.home = home
        try start(unlocking: true)
    }

    /// Starts the daemon in the foreground (a child of the test's, ended with the bus: its
    /// environment names it); `unlocking`: with the login password on its standard input, as a
    /// desktop's login does, else as a session that has not unlocked it yet.
    private func start(unlocking: Bool) throws {
        let log = home.appending(path: "keyring.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)  // a failure throws on the next line
        let output = try FileHandle(forWritingTo: log)
        daemon = Process()
        daemon.executableURL = URL(filePath: "/usr/bin/gnome-keyring-daemon")
        daemon.arguments = ["--foreground"] + (unlocking ? ["--unlock"] : []) + ["--components=secrets"]
        daemon.environment = environment
        daemon.standardOutput = output
        daemon.standardError = output
        if unlocking {
            let password = Pipe()
            daemon.standardInput = password
            try daemon.start()
            password.fileHandleForWriting.write(Data("sesame-test-keyring".utf8))
            try password.fileHandleForWriting.close()
        } else {
            daemon.standardInput = FileHandle.nullDevice
            try daemon.start()
        }
        let ready = Eventually.holdsBlocking(within: .seconds(60), every: .milliseconds(100)) { [bus, environment] in
            guard bus.hasOwner("org.freedesktop.secrets") else { return false }
            let alias = try? ProcessRunner.run(
                URL(filePath: "/usr/bin/gdbus"),
                [
                    "call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", "/org/freedesktop/secrets", "--method",
                    "org.freedesktop.Secret.Service.ReadAlias", "login",
                ], environment: environment)
            return alias?.stdout.contains("/collection/") == true
        }
        guard ready else {
            throw TestSupportError(
                "gnome-keyring's login collection never came up: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        }
    }

    /// The keyring as every fresh login finds it: its daemon ended and started again without the
    /// password, so that it loads the login collection from its file, locked, with what it held.
    public func restartLocked() throws {
        daemon.terminate()
        daemon.waitUntilExit()
        let gone = Eventually.holdsBlocking(within: .seconds(60), every: .milliseconds(100)) { [bus] in
            !bus.hasOwner("org.freedesktop.secrets")
        }
        guard gone else { throw TestSupportError("the keyring daemon did not let go of its name on the bus") }
        try start(unlocking: false)
    }

    /// What the keyring holds under Sesame's schema for `group` and `kind` (`secret-tool lookup`).
    public func lookup(group: String, kind: String) throws -> String? {
        let found = try ProcessRunner.run(
            URL(filePath: "/usr/bin/secret-tool"), ["lookup", "group", group, "kind", kind], environment: environment)
        return found.status == 0 && !found.stdout.isEmpty ? found.stdout : nil
    }

    /// Ends the keyring and the bus.
    public func stop() {
        if daemon.isRunning { daemon.terminate() }
        bus.stop()
    }
}
