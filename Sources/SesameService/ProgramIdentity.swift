import FoundationEssentials
import Glibc
import SesameCore
import SesameSystem

/// A program that asks Sesame's account service for a token, as the system identifies it — never
/// as the program describes itself: the executable the kernel says the caller's process runs
/// (`/proc/PID/exe`), or, for a Flatpak sandbox verified as xdg-desktop-portal verifies one, its
/// app id. A process in a mount namespace of its own that is not a verified Flatpak instance
/// could show Sesame any file at any path (an unprivileged `bwrap --bind` does), so it is an
/// *unverified* program: named by the path it claims, always asked, never remembered. A script
/// run by an interpreter (`python3 app.py`: every MSAL for Python app has the same executable) is
/// the script's file, as the interpreter's command line names it, run by that interpreter.
public struct ProgramIdentity: Sendable, Hashable, Codable, CustomStringConvertible {
    /// How the program is identified.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// By its executable's absolute path, in Sesame's own mount namespace.
        case executable
        /// By its Flatpak app id, of a verified instance.
        case flatpak
        /// By the executable path it claims, in a mount namespace Sesame cannot verify.
        case unverified
        /// By a script's absolute path and the interpreter that runs it (``interpreter``).
        case script
    }

    /// How the program is identified (wire field `kind`).
    public let kind: Kind
    /// The executable's absolute path, the Flatpak app id, or the script's path (wire field `id`).
    public let id: String
    /// The interpreter's absolute path, for a script (wire field `interpreter`); empty otherwise.
    public let interpreter: String

    /// The longest path or app id kept (Linux's `PATH_MAX`).
    public static let maximumLength = 4096

    /// An executable, by its absolute path; nil for a path that is not one.
    public static func executable(_ path: String) -> ProgramIdentity? {
        guard isAbsolutePath(path) else { return nil }
        return ProgramIdentity(kind: .executable, id: path)
    }

    /// A program in a mount namespace Sesame cannot verify, by the path it claims.
    public static func unverified(claiming path: String) -> ProgramIdentity? {
        guard isAbsolutePath(path) else { return nil }
        return ProgramIdentity(kind: .unverified, id: path)
    }

    /// A Flatpak app, by its app id (reverse DNS: letters, digits, `_`, `-` and dots); nil for
    /// anything else.
    public static func flatpak(_ appID: String) -> ProgramIdentity? {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
        guard (3...255).contains(appID.count), appID.contains("."), appID.allSatisfy(allowed.contains) else { return nil }
        return ProgramIdentity(kind: .flatpak, id: appID)
    }

    /// A script, by its absolute path and its interpreter's; nil for paths that are not ones.
    public static func script(_ path: String, interpreter: String) -> ProgramIdentity? {
        guard isAbsolutePath(path), isAbsolutePath(interpreter) else { return nil }
        return ProgramIdentity(kind: .script, id: path, interpreter: interpreter)
    }

    private static func isAbsolutePath(_ path: String) -> Bool {
        path.hasPrefix("/") && path.utf8.count <= maximumLength && !path.contains("\u{0}") && !path.contains("\n")
    }

    private init(kind: Kind, id: String, interpreter: String = "") {
        self.kind = kind
        self.id = id
        self.interpreter = interpreter
    }

    /// Whether the system vouches for the identity: a decision may be kept for it.
    public var isVerified: Bool { kind != .unverified }

    /// What the user is shown: the executable's file name, or the app id (raw: show it through
    /// ``DisplayText``).
    public var name: String {
        switch kind {
        case .executable, .unverified, .script: URL(filePath: id).lastPathComponent
        case .flatpak: id
        }
    }

    public var description: String { kind == .script ? "script:\(id) (\(interpreter))" : "\(kind.rawValue):\(id)" }

    private enum CodingKeys: String, CodingKey { case kind, id, interpreter }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(id, forKey: .id)
        if kind == .script { try container.encode(interpreter, forKey: .interpreter) }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(Kind.self, forKey: .kind)
        let id = try container.decode(String.self, forKey: .id)
        let made: ProgramIdentity? =
            switch kind {
            case .executable: .executable(id)
            case .flatpak: .flatpak(id)
            case .script: .script(id, interpreter: try container.decodeIfPresent(String.self, forKey: .interpreter) ?? "")
            // Nothing is kept about an unverified program: such an entry is not the user's.
            case .unverified: nil
            }
        guard let made else {
            throw DecodingError.dataCorruptedError(forKey: .id, in: container, debugDescription: "not a program identity")
        }
        self = made
    }
}

/// Who is calling, as the kernel tells it when the connection's first call arrives, and what
/// Sesame checks again on every later call: the same process (its start time: a process id the
/// kernel reused is another process), running the same executable (a caller that `exec`s another
/// program on the connection is not the program that was allowed).
public struct Caller: Sendable, Hashable {
    /// The program.
    public let program: ProgramIdentity
    /// The process id the bus daemon gave.
    public let processID: Int32
    /// What must not change between calls.
    public let fingerprint: ProcessFingerprint
}

/// What identifies one run of one program in a process: its start time since boot (field 22 of
/// `/proc/PID/stat`) and the device and inode of its executable.
public struct ProcessFingerprint: Sendable, Hashable {
    /// Clock ticks after boot at which the process started.
    public let startTime: UInt64
    /// The executable's device and inode, as `/proc/PID/exe` leads to them (nil when hidden).
    let executable: FileIdentity?
}

/// Reads who a process is from `/proc`, as `Caller` describes. `proc` and `runtimeDirectory` are
/// parameters so that tests can give a made-up `/proc` and `$XDG_RUNTIME_DIR`.
public struct ProcessIdentification: Sendable {
    /// Where `/proc` is.
    public let proc: String
    /// `$XDG_RUNTIME_DIR`: where Flatpak keeps each running instance's `bwrapinfo.json`.
    public let runtimeDirectory: String?

    /// Identification from the system's `/proc` and this session's runtime directory.
    public init(proc: String = "/proc", runtimeDirectory: String? = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"]) {
        self.proc = proc
        self.runtimeDirectory = runtimeDirectory
    }

    /// The caller behind process `pid`; nil when it cannot be read (the process ended, or belongs
    /// to another user).
    public func caller(_ pid: Int32) -> Caller? {
        guard pid > 0, let fingerprint = fingerprint(pid) else { return nil }
        guard let program = program(pid) else { return nil }
        // Read again after the program: the process that was identified is the one fingerprinted.
        guard self.fingerprint(pid) == fingerprint else { return nil }
        return Caller(program: program, processID: pid, fingerprint: fingerprint)
    }

    /// The program a `sesame token` in process `pid` runs for: its first ancestor that is not a
    /// shell running a command (`sh -c …`, as mail programs run a `PassCmd`) or a script. Nil when
    /// `pid` is not a `sesame token`, when an interactive shell started it (a person typed it: the
    /// command is theirs), or when an ancestor cannot be read (another user's, or gone).
    public func tokenCommandRequester(_ pid: Int32) -> Caller? {
        guard let arguments = commandLine(pid), arguments.count > 1, arguments[1] == "token" else { return nil }
        var current = pid
        // A few levels: `sh -c`, a wrapper script, a shell function.
        for _ in 0..<8 {
            guard let parent = parentProcessID(current), parent > 1,
                let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(proc)/\(parent)/exe")
            else { return nil }
            guard Self.shells.contains(URL(filePath: executable).lastPathComponent) else { return caller(parent) }
            guard let shellArguments = commandLine(parent), Self.runsACommand(shellArguments) else { return nil }
            current = parent
        }
        return nil
    }

    /// Shells, by their executable's name.
    static let shells: Set<String> = ["sh", "dash", "bash", "rbash", "zsh", "fish", "ksh", "mksh", "busybox"]

    /// Whether a shell's arguments make it run a command (`-c`) or a script rather than read
    /// what a person types.
    static func runsACommand(_ arguments: [String]) -> Bool {
        for argument in arguments.dropFirst() {
            if argument == "--" { continue }
            if argument.hasPrefix("--") { continue }
            if argument.hasPrefix("-") || argument.hasPrefix("+") {
                if argument.dropFirst().contains("c") { return true }
                continue
            }
            return true
        }
        return false
    }

    /// `/proc/PID/cmdline`, split at its NULs (bounded).
    private func commandLine(_ pid: Int32) -> [String]? {
        guard let bytes = Posix.readFile("\(proc)/\(pid)/cmdline", limit: 65_536), !bytes.isEmpty else { return nil }
        return bytes.split(separator: 0, omittingEmptySubsequences: false).dropLast(bytes.last == 0 ? 1 : 0)
            .map { String(decoding: $0, as: UTF8.self) }
    }

    /// Field 4 of `/proc/PID/stat`.
    private func parentProcessID(_ pid: Int32) -> Int32? {
        guard let stat = Posix.readFile("\(proc)/\(pid)/stat", limit: 4096) else { return nil }
        let text = String(decoding: stat, as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? Int32(fields[1]) : nil
    }

    /// What process `pid` is now, to compare with a caller's first call.
    public func fingerprint(_ pid: Int32) -> ProcessFingerprint? {
        guard let stat = Posix.readFile("\(proc)/\(pid)/stat", limit: 4096), let startTime = Self.startTime(ofStat: stat) else {
            return nil
        }
        return ProcessFingerprint(startTime: startTime, executable: Posix.identity(following: "\(proc)/\(pid)/exe"))
    }

    /// The program process `pid` runs. In Sesame's own mount namespace, its executable. In
    /// another one, a Flatpak app id when the instance checks out as xdg-desktop-portal checks it
    /// (the sandbox's `/.flatpak-info` names an instance whose `bwrapinfo.json`, which Flatpak
    /// writes in `$XDG_RUNTIME_DIR/.flatpak/` outside every sandbox, names a process in that
    /// same namespace); anything else there is unverified.
    func program(_ pid: Int32) -> ProgramIdentity? {
        guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(proc)/\(pid)/exe") else { return nil }
        let ours = mountNamespace("self")
        let theirs = mountNamespace("\(pid)")
        if let ours, ours == theirs { return script(pid, interpreter: executable) ?? .executable(executable) }
        if let theirs, let appID = verifiedFlatpakApp(pid, mountNamespace: theirs) { return .flatpak(appID) }
        return .unverified(claiming: executable)
    }

    /// The interpreters whose scripts are programs of their own: the first argument that is not
    /// an option is the script (as `python3 [options] app.py` runs it).
    static let interpreters = ["python", "perl", "ruby", "node", "nodejs"]

    /// The script process `pid` runs, when `interpreter` is one and its command line names a file
    /// (resolved against the process's own folder); nil otherwise (`python3 -c …`, a console).
    func script(_ pid: Int32, interpreter: String) -> ProgramIdentity? {
        let name = URL(filePath: interpreter).lastPathComponent
        guard
            Self.interpreters.contains(where: {
                name == $0 || (name.hasPrefix($0) && name.dropFirst($0.count).allSatisfy { $0.isNumber || $0 == "." })
            }),
            let arguments = commandLine(pid), let script = Self.scriptArgument(arguments)
        else { return nil }
        let folder = (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(proc)/\(pid)/cwd")) ?? "/"
        let path = script.hasPrefix("/") ? script : folder + "/" + script
        let resolved = URL(filePath: path).standardizedFileURL.resolvingSymlinksInPath().path
        guard let status = try? Posix.linkStatus(resolved), status.st_mode & S_IFMT == S_IFREG else { return nil }
        return .script(resolved, interpreter: interpreter)
    }

    /// The script among an interpreter's arguments: the first that is not an option (nor an
    /// option's value); nil when the code comes from `-c`, `-e`, `-m` or standard input.
    static func scriptArgument(_ arguments: [String]) -> String? {
        var rest = arguments.dropFirst()
        while let argument = rest.first {
            rest = rest.dropFirst()
            if ["-c", "-e", "-m", "-", "--eval", "--print", "-p", "-E"].contains(argument) { return nil }
            if ["-W", "-X", "-r", "--require", "-I"].contains(argument) {
                rest = rest.dropFirst()
                continue
            }
            if argument == "--" { return rest.first }
            if !argument.hasPrefix("-") { return argument.isEmpty ? nil : argument }
        }
        return nil
    }

    private func mountNamespace(_ process: String) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "\(proc)/\(process)/ns/mnt")
    }

    private func verifiedFlatpakApp(_ pid: Int32, mountNamespace: String) -> String? {
        guard let info = Posix.readFile("\(proc)/\(pid)/root/.flatpak-info", limit: 65_536),
            let flatpak = FlatpakInfo(String(decoding: info, as: UTF8.self)),
            let runtimeDirectory, runtimeDirectory.hasPrefix("/")
        else { return nil }
        let bwrapInfo = "\(runtimeDirectory)/.flatpak/\(flatpak.instance)/bwrapinfo.json"
        guard let data = Posix.readRegularFileOfThisUser(bwrapInfo, limit: 65_536),
            let childPID = (try? JSONDecoder().decode(BwrapInfo.self, from: Data(data)))?.childPID, childPID > 0,
            childPID <= Int(Int32.max),
            self.mountNamespace("\(childPID)") == mountNamespace
        else { return nil }
        return flatpak.appID
    }

    /// Field 22 of `/proc/PID/stat`, counted after the command name's closing parenthesis (the
    /// name itself may hold spaces and parentheses).
    static func startTime(ofStat stat: [UInt8]) -> UInt64? {
        let text = String(decoding: stat, as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, so start time (22) is the 20th.
        guard fields.count >= 20 else { return nil }
        return UInt64(fields[19])
    }
}

/// What Flatpak writes of a running instance in `$XDG_RUNTIME_DIR/.flatpak/<instance>/bwrapinfo.json`.
private struct BwrapInfo: Decodable {
    /// `child-pid`: the sandbox's first process.
    let childPID: Int

    enum CodingKeys: String, CodingKey {
        case childPID = "child-pid"
    }
}

/// The parts of a Flatpak sandbox's `/.flatpak-info` key file that identify it.
struct FlatpakInfo: Equatable {
    /// `[Application] name` (or `[Runtime] name`).
    let appID: String
    /// `[Instance] instance-id`: digits, as Flatpak makes them.
    let instance: String

    init?(_ keyFile: String) {
        var group = ""
        var values: [String: String] = [:]
        for line in keyFile.split(separator: "\n").map({ $0.trimmingWhitespace() }) {
            if line.hasPrefix("[") {
                group = line
            } else if let equals = line.firstIndex(of: "=") {
                let key = "\(group)\(line[..<equals])"
                if values[key] == nil { values[key] = String(line[line.index(after: equals)...]) }
            }
        }
        guard let name = values["[Application]name"] ?? values["[Runtime]name"], let appID = ProgramIdentity.flatpak(name)?.id,
            let instance = values["[Instance]instance-id"], (1...64).contains(instance.count),
            instance.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
        else { return nil }
        self.appID = appID
        self.instance = instance
    }
}
