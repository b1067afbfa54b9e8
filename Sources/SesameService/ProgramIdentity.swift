import FoundationEssentials
import Glibc
import SesameCore
import SesameSystem

/// A program that asks Sesame's account service for a token, as the kernel vouches for it —
/// never as the program describes itself: the executable the kernel says the caller's process runs
/// (`/proc/PID/exe`), or, for a Flatpak sandbox verified as xdg-desktop-portal verifies one, its
/// app id. A process in a mount namespace of its own that is not a verified Flatpak instance
/// could show Sesame any file at any path (an unprivileged `bwrap --bind` does), so it is an
/// *unverified* program: named by the path it claims, always asked, never remembered.
///
/// A script run by an interpreter (`python3 app.py`) is that interpreter: its command line, which
/// names the script, is written by the process itself (`/proc/self/mem`, `exec -a`, `-c` code
/// that names a file in a comment) and can name any script. A decision for `python3` is therefore
/// a decision for every Python program the user runs, and the question says so in words
/// (``reach``); the script's name is shown beside it as the program's own claim
/// (``ProgramContext``), never kept.
public struct ProgramIdentity: Sendable, Hashable, Codable, CustomStringConvertible {
    /// How the program is identified.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// By its executable's absolute path, in Sesame's own mount namespace.
        case executable
        /// By its Flatpak app id, of a verified instance.
        case flatpak
        /// By the executable path it claims, in a mount namespace Sesame cannot verify.
        case unverified
    }

    /// How the program is identified (wire field `kind`).
    public let kind: Kind
    /// The executable's absolute path, or the Flatpak app id (wire field `id`).
    public let id: String
    /// For an interpreter a web browser started — an extension's native messaging host, such as
    /// linux-entra-sso's, which runs under `python3` —, the browser's executable as the kernel
    /// names the interpreter's parent process (`/proc/PPID/exe`); nil otherwise (wire field
    /// `startedBy`). Part of the identity: a decision for "python3 started by firefox" does not
    /// cover a Python program started by a shell, nor the other way round.
    public let startedBy: String?

    /// The longest path or app id kept (Linux's `PATH_MAX`).
    public static let maximumLength = 4096

    /// An executable, by its absolute path; nil for a path that is not one.
    public static func executable(_ path: String) -> ProgramIdentity? {
        guard isAbsolutePath(path) else { return nil }
        return ProgramIdentity(kind: .executable, id: path)
    }

    /// An interpreter started by a web browser (an extension's native messaging host), by the two
    /// executables' absolute paths; nil when either is not one, or `path` is no interpreter.
    public static func executable(_ path: String, startedBy browser: String) -> ProgramIdentity? {
        guard isAbsolutePath(path), isAbsolutePath(browser) else { return nil }
        let made = ProgramIdentity(kind: .executable, id: path, startedBy: browser)
        return made.reach == .interpreter ? made : nil
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

    private static func isAbsolutePath(_ path: String) -> Bool {
        path.hasPrefix("/") && path.utf8.count <= maximumLength && !path.contains("\u{0}") && !path.contains("\n")
    }

    private init(kind: Kind, id: String, startedBy: String? = nil) {
        self.kind = kind
        self.id = id
        self.startedBy = startedBy
    }

    /// Whether the system vouches for the identity: a decision may be kept for it.
    public var isVerified: Bool { kind != .unverified }

    /// What the user is shown: the executable's file name (with the browser's that started it,
    /// `python3.11 (firefox-esr)`), or the app id (raw: show it through ``DisplayText``).
    public var name: String {
        switch kind {
        case .executable, .unverified:
            let own = URL(filePath: id).lastPathComponent
            return startedBy.map { "\(own) (\(URL(filePath: $0).lastPathComponent))" } ?? own
        case .flatpak: return id
        }
    }

    /// The file name of the executable itself (`python3.11`), without the browser's (raw).
    public var executableName: String { URL(filePath: id).lastPathComponent }

    /// What a decision for this program covers besides the program itself: an interpreter runs
    /// whatever program it is given, a shell whatever commands — told by the executable's name,
    /// which the kernel vouches for (`/usr/bin/python3.11`).
    public var reach: ProgramReach {
        guard kind == .executable else { return .itself }
        let name = executableName
        if ProgramReach.shells.contains(name) { return .shell }
        let isInterpreter = ProgramReach.interpreters.contains {
            name == $0 || (name.hasPrefix($0) && name.dropFirst($0.count).allSatisfy { $0.isNumber || $0 == "." })
        }
        return isInterpreter ? .interpreter : .itself
    }

    public var description: String { "\(kind.rawValue):\(id)" + (startedBy.map { " started by \($0)" } ?? "") }

    private enum CodingKeys: String, CodingKey { case kind, id, startedBy }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(id, forKey: .id)
        try container.encodeIfPresent(startedBy, forKey: .startedBy)
    }

    /// Reads a kept identity. Kinds Sesame no longer keeps — `script`, an earlier version's
    /// identity read from the interpreter's command line — and `unverified` do not decode: the
    /// decision they carried is dropped, and the program is asked again.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(Kind.self, forKey: .kind)
        let id = try container.decode(String.self, forKey: .id)
        let startedBy = try container.decodeIfPresent(String.self, forKey: .startedBy)
        let made: ProgramIdentity? =
            switch kind {
            case .executable: startedBy.map { .executable(id, startedBy: $0) } ?? .executable(id)
            case .flatpak: .flatpak(id)
            // Nothing is kept about an unverified program: such an entry is not the user's.
            case .unverified: nil
            }
        guard let made else {
            throw DecodingError.dataCorruptedError(forKey: .id, in: container, debugDescription: "not a program identity")
        }
        self = made
    }
}

/// What a decision for a program covers beyond the program itself, as the question says it.
public enum ProgramReach: String, Sendable, Hashable, Codable {
    /// The program alone.
    case itself
    /// An interpreter (Python, Perl, Ruby, Node.js): every program it runs.
    case interpreter
    /// A shell: every command it runs.
    case shell

    /// Shells, by their executable's name.
    public static let shells: Set<String> = ["sh", "dash", "bash", "rbash", "zsh", "fish", "ksh", "mksh", "busybox", "tcsh", "csh"]
    /// Interpreters, by their executable's name (`python`, `python3`, `python3.11`, …).
    public static let interpreters = ["python", "perl", "ruby", "node", "nodejs", "php", "lua", "tclsh", "wish", "osascript"]
    /// Web browsers that start their extensions' native messaging hosts, by their main process's
    /// executable name (Debian's and the vendors' packages).
    public static let browsers: Set<String> = [
        "firefox", "firefox-esr", "firefox-bin", "librewolf", "waterfox", "chrome", "google-chrome", "chromium", "chromium-browser",
        "msedge", "microsoft-edge", "brave", "vivaldi-bin", "opera",
    ]
}

/// What Sesame knows of how a program asked that is not who it is: shown in the question, never
/// part of a decision's key.
public struct ProgramContext: Sendable, Hashable, Codable {
    /// The script an interpreter's command line names (`/home/u/app.py`), as the program itself
    /// wrote it: a hint for the person, never checked, never kept (wire field `claimedScript`;
    /// empty when there is none).
    public var claimedScript: String
    /// Whether the program asked by running a command — `sesame token` as msmtp's `passwordeval`
    /// or mbsync's `PassCmd` runs it — so that a decision for it covers whatever commands it runs
    /// (wire field `ranCommand`).
    public var ranCommand: Bool

    /// A context; nothing known by default.
    public init(claimedScript: String = "", ranCommand: Bool = false) {
        self.claimedScript = String(claimedScript.prefix(ProgramIdentity.maximumLength))
        self.ranCommand = ranCommand
    }

    /// Reads a context from the window's wire, bounded.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            claimedScript: try container.decodeIfPresent(String.self, forKey: .claimedScript) ?? "",
            ranCommand: try container.decodeIfPresent(Bool.self, forKey: .ranCommand) ?? false)
    }

    private enum CodingKeys: String, CodingKey { case claimedScript, ranCommand }
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
    /// What the question may show besides (the script an interpreter says it runs; whether it
    /// asked through a command): never part of a decision.
    public var context = ProgramContext()
}

/// Who asked for the token a `sesame token` process prints.
public enum TokenCommandRequester: Sendable, Equatable {
    /// A person, at a terminal: the shell that started the command reads a terminal and runs no
    /// command of its own (`bash` in a terminal window; through `ssh` too).
    case person
    /// A program: mbsync's `PassCmd`, msmtp's `passwordeval`, a script, or a shell that reads its
    /// commands from a pipe or a file (`echo … | bash`) — then the program that feeds it.
    case program(Caller)
    /// Neither could be told: an ancestor is another user's, gone, or too far up.
    case unknown
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
        guard var program = program(pid) else { return nil }
        if program.reach == .interpreter, let browser = startingBrowser(pid) {
            program = .executable(program.id, startedBy: browser) ?? program
        }
        let context = ProgramContext(claimedScript: claimedScript(pid, program: program))
        // Read again after the program: the process that was identified is the one fingerprinted.
        guard self.fingerprint(pid) == fingerprint else { return nil }
        return Caller(program: program, processID: pid, fingerprint: fingerprint, context: context)
    }

    /// Who asked for the token a `sesame token` in process `pid` prints; nil when `pid` is not a
    /// `sesame token`. Its ancestors are read up to the first that is not a shell running a
    /// command (`sh -c …`, as mail programs run a `PassCmd`), a shell running a script, or a shell
    /// reading its commands from a pipe or a file: that program is the requester, and a decision
    /// for it covers the commands it runs. A shell that reads a terminal and runs nothing of its
    /// own is a person typing. (A program that drives a terminal of its own — `script`, a
    /// pseudo-terminal — can pass for a person: same-user programs outside a sandbox can act as
    /// the user; docs/SECURITY.md.)
    public func tokenCommandRequester(_ pid: Int32) -> TokenCommandRequester? {
        guard let arguments = commandLine(pid), arguments.count > 1, arguments[1] == "token" else { return nil }
        var current = pid
        // A few levels: `sh -c`, a wrapper script, a shell function, `echo … | bash`.
        for _ in 0..<8 {
            guard let parent = parentProcessID(current), parent > 1,
                let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(proc)/\(parent)/exe")
            else { return .unknown }
            guard ProgramReach.shells.contains(URL(filePath: executable).lastPathComponent) else {
                guard var requester = caller(parent) else { return .unknown }
                requester.context.ranCommand = true
                return .program(requester)
            }
            guard let shellArguments = commandLine(parent) else { return .unknown }
            if !Self.runsACommand(shellArguments), Posix.isTerminal("\(proc)/\(parent)/fd/0") { return .person }
            current = parent
        }
        return .unknown
    }

    /// Whether a shell's arguments make it run a command (`-c`) or a script rather than read
    /// what comes on its standard input.
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

    /// The web browser that started process `pid` — its parent, a browser's executable in
    /// Sesame's own mount namespace, as `/proc/PPID/exe` names it —, or nil. The parent is read
    /// again after its executable: one that ended meanwhile (its child handed to a reaper, its
    /// process id free for another program) is not believed. A process cannot choose its parent.
    func startingBrowser(_ pid: Int32) -> String? {
        guard let parent = parentProcessID(pid), parent > 1,
            let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(proc)/\(parent)/exe"),
            ProgramReach.browsers.contains(URL(filePath: executable).lastPathComponent),
            let ours = mountNamespace("self"), mountNamespace("\(parent)") == ours,
            parentProcessID(pid) == parent
        else { return nil }
        return executable
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
        if let ours, ours == theirs { return .executable(executable) }
        if let theirs, let appID = verifiedFlatpakApp(pid, mountNamespace: theirs) { return .flatpak(appID) }
        return .unverified(claiming: executable)
    }

    /// The script an interpreter's command line names, as the question shows it beside the
    /// interpreter: the first argument that is not an option (nor an option's value), made
    /// absolute against the process's folder. Only a hint — the process wrote it — and empty when
    /// there is none (`-c`, `-m`, a console).
    func claimedScript(_ pid: Int32, program: ProgramIdentity) -> String {
        guard program.reach == .interpreter, let arguments = commandLine(pid), let script = Self.scriptArgument(arguments) else {
            return ""
        }
        if script.hasPrefix("/") { return script }
        let folder = (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(proc)/\(pid)/cwd")) ?? ""
        return folder.isEmpty ? script : URL(filePath: folder).appending(path: script).standardizedFileURL.path
    }

    /// The script among an interpreter's arguments: the first that is not an option (nor an
    /// option's value); nil when the code comes from `-c`, `-e`, `-m` or standard input
    /// (combined flags such as `-Sc` included).
    static func scriptArgument(_ arguments: [String]) -> String? {
        var rest = arguments.dropFirst()
        while let argument = rest.first {
            rest = rest.dropFirst()
            if ["-", "--eval", "--print", "-E"].contains(argument) { return nil }
            if argument == "--" { return rest.first }
            if argument.hasPrefix("--") { continue }
            if argument.hasPrefix("-") {
                let flags = argument.dropFirst()
                if flags.contains(where: { "cemp".contains($0) }) { return nil }
                if ["W", "X", "r"].contains(String(flags)) { rest = rest.dropFirst() }
                continue
            }
            return argument.isEmpty ? nil : argument
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
