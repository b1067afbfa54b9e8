import Foundation

/// A D-Bus session bus of a test's own (`dbus-daemon --session`): the services it starts on
/// demand (dconf, glib-pacrunner) see `environment`, so a test's GSettings live in its own
/// `XDG_CONFIG_HOME` and not in the machine's. Its configuration is `make test`'s
/// (`scripts/test-dbus/session.conf`: Debian's session bus, without the desktop portal).
public final class SessionBus: @unchecked Sendable {
    /// `DBUS_SESSION_BUS_ADDRESS` for the programs that join it.
    public let address: String
    private let process = Process()

    /// Starts the bus with `environment` (its services inherit it).
    public init(environment: [String: String]) throws {
        let output = Pipe()
        process.executableURL = URL(filePath: "/usr/bin/dbus-daemon")
        let configuration = Repository.root.appending(path: "scripts/test-dbus/session.conf")
        process.arguments = ["--config-file=\(configuration.path)", "--nofork", "--print-address=1"]
        process.environment = environment
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.start()
        var line = Data()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        guard !line.isEmpty else { throw TestSupportError("dbus-daemon --session printed no address") }
        address = String(decoding: line, as: UTF8.self)
    }

    /// Ends the bus and the services it started (dconf-service and glib-pacrunner outlive it).
    public func stop() {
        for pid in services() { kill(pid, SIGKILL) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Whether someone owns `name` on this bus now.
    public func hasOwner(_ name: String) -> Bool { Self.hasOwner(name, address: address) }

    /// Whether someone owns `name` now on the bus at `address`.
    public static func hasOwner(_ name: String, address: String) -> Bool {
        askTheBus("NameHasOwner", about: name, address: address)?.stdout.contains("true") == true
    }

    /// Who owns `name` on the bus at `address`, as a failure should say it: the owner's process,
    /// its command line, its parent and its state (an owner whose parent is 1 outlived whoever
    /// started it), or "nobody".
    public static func owner(of name: String, address: String) -> String {
        let answer = askTheBus("GetConnectionUnixProcessID", about: name, address: address)
        // gdbus prints "(uint32 1234,)".
        guard let printed = answer?.stdout, answer?.status == 0,
            let pid = printed.split(whereSeparator: { !$0.isNumber }).compactMap({ Int32($0) }).last
        else { return "nobody" }
        let commandLine =
            (FileManager.default.contents(atPath: "/proc/\(pid)/cmdline")).map {
                String(decoding: $0, as: UTF8.self).split(separator: "\u{0}").joined(separator: " ")
            } ?? "?"
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let field = { (key: String) in
            status.split(separator: "\n").first { $0.hasPrefix(key + ":") }.map {
                $0.dropFirst(key.count + 1).trimmingCharacters(in: .whitespaces)
            } ?? "?"
        }
        return "process \(pid) (\(commandLine.prefix(300))), parent \(field("PPid")), state \(field("State"))"
    }

    /// The bus itself's `method` (org.freedesktop.DBus) about `name`, through gdbus; nil if gdbus
    /// could not run.
    private static func askTheBus(_ method: String, about name: String, address: String) -> ProcessRunner.Result? {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = address
        return try? ProcessRunner.run(
            URL(filePath: "/usr/bin/gdbus"),
            [
                "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus", "--method",
                "org.freedesktop.DBus.\(method)", name,
            ], environment: environment)
    }

    /// The processes that joined this bus from their start: those whose environment names it.
    private func services() -> [Int32] {
        let marker = Data("DBUS_SESSION_BUS_ADDRESS=\(address)\u{0}".utf8)
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry in
            guard let pid = Int32(entry), pid != getpid(),
                let environment = FileManager.default.contents(atPath: "/proc/\(entry)/environ"),
                environment.range(of: marker) != nil
            else { return nil }
            return pid
        }
    }

    deinit { stop() }
}
