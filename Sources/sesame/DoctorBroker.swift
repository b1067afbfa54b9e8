import FoundationEssentials
import SesameGIO
import SesameService

/// `sesame doctor`'s identity broker section: who serves `com.microsoft.identity.broker1` on this
/// session bus (Sesame, Microsoft's broker, Himmelblau, nobody), whether D-Bus starts one on
/// demand, and the latest calls Sesame's broker answered (`BrokerCallLog`; never a token).
@MainActor
struct DoctorBroker {
    struct Line: Sendable {
        let mark: String
        let subject: String
        let text: String
    }

    /// The folders D-Bus reads session activation files from, the user's first.
    let serviceFolders: [String]
    let calls: BrokerCallLog

    init(environment: [String: String]) {
        let home = environment["HOME"] ?? "/"
        let dataHome = environment["XDG_DATA_HOME"] ?? home + "/.local/share"
        let dataDirectories = (environment["XDG_DATA_DIRS"] ?? "/usr/local/share:/usr/share").split(separator: ":").map(String.init)
        serviceFolders = ([dataHome] + dataDirectories).map { $0 + "/dbus-1/services" }
        calls = BrokerCallLog(file: BrokerCallLog.defaultFile(environment: environment))
    }

    func lines() -> [Line] {
        var lines: [Line] = []
        let activation = activationFile()
        switch owner() {
        case .none:
            let started = activation.map { "D-Bus starts \($0.exec) when a program calls (\($0.path))" }
            lines.append(
                Line(
                    mark: "--", subject: "identity broker",
                    text: started
                        ?? "nobody serves com.microsoft.identity.broker1: programs using MSAL's broker fall back to the browser. To make "
                        + "Sesame the broker, copy /usr/share/sesame/dbus-1/com.microsoft.identity.broker1.service to "
                        + "~/.local/share/dbus-1/services/ (docs/BROKER.md)"))
        case .some(let executable):
            let who =
                executable.hasSuffix("/sesame-service") || executable.hasSuffix("/sesame")
                ? "Sesame (\(executable))"
                : executable.contains("microsoft-identity-broker")
                    ? "Microsoft's identity broker (\(executable))"
                    : executable.contains("himmelblau") ? "Himmelblau (\(executable))" : executable
            lines.append(Line(mark: "OK", subject: "identity broker", text: "com.microsoft.identity.broker1 is served by \(who)"))
        }
        let recent = calls.lines.suffix(10)
        if recent.isEmpty {
            lines.append(Line(mark: "--", subject: "broker calls", text: "Sesame's broker has answered no program yet"))
        } else {
            lines += recent.map { Line(mark: "OK", subject: "broker call", text: $0) }
        }
        return lines
    }

    /// The executable of the name's owner; nil when nobody owns it (or there is no bus).
    private func owner() -> String? {
        guard let bus = DBusClient() else { return nil }
        let daemon = ("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus")
        guard
            let unique = try? bus.call(
                daemon.0, path: daemon.1, interface: daemon.2, method: "GetNameOwner", arguments: [.string(BrokerProtocol.busName)],
                startService: false, timeout: .seconds(5)
            ).first?.string,
            case .uint32(let pid)? = try? bus.call(
                daemon.0, path: daemon.1, interface: daemon.2, method: "GetConnectionUnixProcessID", arguments: [.string(unique)],
                startService: false, timeout: .seconds(5)
            ).first
        else { return nil }
        return (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) ?? "process \(pid)"
    }

    /// The activation file D-Bus would use for the broker's name, and its `Exec`.
    private func activationFile() -> (path: String, exec: String)? {
        for folder in serviceFolders {
            let path = folder + "/" + BrokerProtocol.busName + ".service"
            guard let data = FileManager.default.contents(atPath: path), data.count < 16_384 else { continue }
            let exec = String(decoding: data, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("Exec=") }?.dropFirst(5)
            return (path, exec.map(String.init) ?? "?")
        }
        return nil
    }
}
