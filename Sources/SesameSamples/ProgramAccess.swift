import Foundation
import SesameCore

/// A program that asks Sesame's account service for a token, as the system identifies it — never
/// as the program describes itself: the executable the kernel says the caller's process runs
/// (`/proc/PID/exe`, links resolved), or, for a Flatpak sandbox, the app id its instance was
/// started as (`/proc/PID/root/.flatpak-info`, which the sandbox cannot change).
public struct ProgramIdentity: Sendable, Hashable, Codable, CustomStringConvertible {
    /// How the program is identified.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// By its executable's absolute path.
        case executable
        /// By its Flatpak app id.
        case flatpak
    }

    /// How the program is identified (wire field `kind`).
    public let kind: Kind
    /// The executable's absolute path, or the Flatpak app id (wire field `id`).
    public let id: String

    /// The longest path or app id kept (Linux's `PATH_MAX`).
    public static let maximumLength = 4096

    /// An executable, by its absolute path; nil for a path that is not one.
    public static func executable(_ path: String) -> ProgramIdentity? {
        guard path.hasPrefix("/"), path.utf8.count <= maximumLength, !path.contains("\u{0}"), !path.contains("\n") else { return nil }
        return ProgramIdentity(kind: .executable, id: path)
    }

    /// A Flatpak app, by its app id (reverse DNS: letters, digits, `_`, `-` and dots); nil for
    /// anything else.
    public static func flatpak(_ appID: String) -> ProgramIdentity? {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
        guard (3...255).contains(appID.count), appID.contains("."), appID.allSatisfy(allowed.contains) else { return nil }
        return ProgramIdentity(kind: .flatpak, id: appID)
    }

    private init(kind: Kind, id: String) {
        self.kind = kind
        self.id = id
    }

    /// What the user is shown: the executable's file name, or the app id.
    public var name: String {
        switch kind {
        case .executable: URL(filePath: id).lastPathComponent
        case .flatpak: id
        }
    }

    /// Where it comes from, for the user to tell two programs of one name apart: the executable's
    /// folder, or "Flatpak".
    public var origin: String {
        switch kind {
        case .executable: URL(filePath: id).deletingLastPathComponent().path
        case .flatpak: "Flatpak"
        }
    }

    public var description: String { "\(kind.rawValue):\(id)" }

    /// The program process `pid` runs, as the kernel says: a Flatpak app id when the process is
    /// in a Flatpak sandbox (`/proc/PID/root/.flatpak-info`, which the sandbox cannot write),
    /// else its executable (`/proc/PID/exe`); nil when neither can be read (the process ended,
    /// or belongs to another user).
    public static func ofProcess(_ pid: Int32, proc: String = "/proc") -> ProgramIdentity? {
        guard pid > 0 else { return nil }
        if let info = FileManager.default.contents(atPath: "\(proc)/\(pid)/root/.flatpak-info"), info.count < 65_536,
            let appID = flatpakAppID(String(decoding: info, as: UTF8.self))
        {
            return .flatpak(appID)
        }
        guard let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(proc)/\(pid)/exe") else { return nil }
        return .executable(path)
    }

    /// The `name` of the `[Application]` group of a `.flatpak-info` key file.
    static func flatpakAppID(_ keyFile: String) -> String? {
        var group = ""
        for line in keyFile.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line.hasPrefix("[") {
                group = line
            } else if group == "[Application]", line.hasPrefix("name=") {
                return flatpak(String(line.dropFirst(5)))?.id
            }
        }
        return nil
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(Kind.self, forKey: .kind)
        let id = try container.decode(String.self, forKey: .id)
        let made: ProgramIdentity? =
            switch kind {
            case .executable: .executable(id)
            case .flatpak: .flatpak(id)
            }
        guard let made else {
            throw DecodingError.dataCorruptedError(forKey: .id, in: container, debugDescription: "not a program identity")
        }
        self = made
    }
}

/// One question the user answers: may this program use this account for these scopes?
public struct AccessRequest: Sendable, Hashable {
    /// Who asks.
    public let program: ProgramIdentity
    /// The account's type (its settings).
    public let accountType: String
    /// The account, as the cache names it.
    public let homeAccountID: String
    /// The account's user name, for the question.
    public let username: String
    /// The scopes, in one order whatever order they were asked in (lower-cased, sorted, once each).
    public let scopes: [String]

    /// A request; `scopes` are normalised (see ``scopes``).
    public init(program: ProgramIdentity, accountType: String, homeAccountID: String, username: String, scopes: [String]) {
        self.program = program
        self.accountType = accountType
        self.homeAccountID = homeAccountID
        self.username = username
        self.scopes = Array(Set(scopes.map { $0.lowercased() })).sorted()
    }

    /// A request for `account`.
    public init(program: ProgramIdentity, account: Account, scopes: [String]) {
        self.init(
            program: program, accountType: account.accountType, homeAccountID: account.homeAccountID, username: account.username,
            scopes: scopes)
    }

    /// What a decision is kept under: the user name is only shown.
    var key: AccessKey { AccessKey(program: program, accountType: accountType, homeAccountID: homeAccountID, scopes: scopes) }
}

/// What a decision is kept under: program, account and scopes.
struct AccessKey: Hashable, Sendable {
    let program: ProgramIdentity
    let accountType: String
    let homeAccountID: String
    let scopes: [String]
}

/// The user's answer to "Allow <program> to use <account> (<scopes>)?".
public enum AccessAnswer: String, Sendable, Hashable, CaseIterable {
    /// This request only; the next one asks again.
    case allowOnce
    /// This and every later request of the same program, account and scopes (kept).
    case always
    /// No token, now and later (kept).
    case deny
}

/// A kept answer, as the account menu's "Programs with access" lists it.
public struct ProgramDecision: Sendable, Hashable, Codable {
    /// Who asked (wire field `program`).
    public let program: ProgramIdentity
    /// The account's type (wire field `accountType`).
    public let accountType: String
    /// The account, as the cache names it (wire field `homeAccountID`).
    public let homeAccountID: String
    /// The account's user name when it was decided (wire field `username`).
    public let username: String
    /// The scopes, normalised as ``AccessRequest/scopes`` (wire field `scopes`).
    public let scopes: [String]
    /// Whether the program may (wire field `allowed`).
    public let allowed: Bool
    /// When the user decided (wire field `decidedAt`).
    public let decidedAt: Date

    var key: AccessKey { AccessKey(program: program, accountType: accountType, homeAccountID: homeAccountID, scopes: scopes) }
}

/// Which program may use which account: the user's kept answers ("Always", "Deny") per program,
/// account and scopes, in a small owner-only JSON file (`$XDG_DATA_HOME/sesame/program-access.json`)
/// read as hostile input — a missing, oversized, malformed or foreign file is no decision, and an
/// entry that does not parse is dropped, never trusted. "Allow once" is not kept. The account
/// service asks ``decision(for:)`` before every token, and the window asks the user when it is nil.
@MainActor
public final class ProgramAccess {
    /// The file decisions are kept in (nil: kept in memory only).
    public let file: URL?
    private var decisions: [AccessKey: ProgramDecision] = [:]
    private var observers: [UUID: @MainActor () -> Void] = [:]
    private let now: () -> Date

    /// The largest file read, and the most decisions kept: beyond that the file is not the user's.
    public static let maximumFileSize = 1 << 20
    /// The most decisions kept.
    public static let maximumDecisions = 2000
    /// The longest account type, user name, account id or scope kept.
    public static let maximumFieldLength = 1024
    /// The most scopes of one decision.
    public static let maximumScopes = 64

    /// The decisions kept in `file` (none when it is missing or cannot be used).
    public init(file: URL?, now: @escaping () -> Date = { Date() }) {
        self.file = file
        self.now = now
        if let file { load(file) }
    }

    /// Where decisions are kept: `$XDG_DATA_HOME/sesame/program-access.json`.
    public static func defaultFile(environment: [String: String]) -> URL {
        FileTokenStorage.defaultDirectory(environment: environment).appending(path: "program-access.json")
    }

    /// The kept decision for a request: true (always), false (deny), nil (ask the user).
    public func decision(for request: AccessRequest) -> Bool? {
        decisions[request.key]?.allowed
    }

    /// Every kept decision, by program name, then account, then scopes.
    public var all: [ProgramDecision] {
        decisions.values.sorted {
            ($0.program.name, $0.program.id, $0.username, $0.scopes.joined(separator: " "))
                < ($1.program.name, $1.program.id, $1.username, $1.scopes.joined(separator: " "))
        }
    }

    /// Keeps the user's answer ("Allow once" keeps nothing).
    public func record(_ answer: AccessAnswer, for request: AccessRequest) {
        guard answer != .allowOnce, request.scopes.count <= Self.maximumScopes else { return }
        let decision = ProgramDecision(
            program: request.program, accountType: request.accountType, homeAccountID: request.homeAccountID,
            username: request.username, scopes: request.scopes, allowed: answer == .always, decidedAt: now())
        decisions[request.key] = decision
        if decisions.count > Self.maximumDecisions, let oldest = decisions.values.min(by: { $0.decidedAt < $1.decidedAt }) {
            decisions[oldest.key] = nil
        }
        changed()
    }

    /// Takes a decision back: the program's next request asks again.
    public func revoke(_ decision: ProgramDecision) {
        guard decisions.removeValue(forKey: decision.key) != nil else { return }
        changed()
    }

    /// Forgets every decision about an account (it signed out: a new sign-in of the same user
    /// asks again).
    public func forget(accountType: String, homeAccountID: String) {
        let before = decisions.count
        decisions = decisions.filter { !($0.key.accountType == accountType && $0.key.homeAccountID == homeAccountID) }
        if decisions.count != before { changed() }
    }

    /// Whether a program holds an "Always" for the account, whatever the scopes (what signing
    /// the account out through the service needs).
    public func mayManage(_ program: ProgramIdentity, accountType: String, homeAccountID: String) -> Bool {
        decisions.values.contains {
            $0.allowed && $0.program == program && $0.accountType == accountType && $0.homeAccountID == homeAccountID
        }
    }

    /// Calls `action` after every change (the account menu's list); until the returned token is
    /// passed to ``stopObserving(_:)``.
    @discardableResult
    public func observe(_ action: @escaping @MainActor () -> Void) -> UUID {
        let id = UUID()
        observers[id] = action
        return id
    }

    /// Stops calling an observer.
    public func stopObserving(_ id: UUID) { observers[id] = nil }

    private func changed() {
        save()
        for observer in observers.values { observer() }
    }

    // MARK: The file

    /// The file's shape: `{"version": 1, "decisions": [...]}`.
    private struct Stored: Codable {
        var version: Int
        var decisions: [Lenient]
    }

    /// One entry, or nothing when it does not parse (the others are kept).
    private struct Lenient: Codable {
        var decision: ProgramDecision?

        init(_ decision: ProgramDecision) { self.decision = decision }

        init(from decoder: any Decoder) throws {
            decision = try? ProgramDecision(from: decoder)
        }

        func encode(to encoder: any Encoder) throws { try decision.encode(to: encoder) }
    }

    private func load(_ file: URL) {
        guard let data = Self.readOwnerOnly(file), let stored = try? Self.decoder.decode(Stored.self, from: data), stored.version == 1
        else { return }
        for decision in stored.decisions.compactMap(\.decision).prefix(Self.maximumDecisions) where Self.isSane(decision) {
            decisions[decision.key] = decision
        }
    }

    private static func isSane(_ decision: ProgramDecision) -> Bool {
        let fields = [decision.accountType, decision.homeAccountID, decision.username] + decision.scopes
        return !decision.accountType.isEmpty && !decision.homeAccountID.isEmpty && decision.scopes.count <= maximumScopes
            && fields.allSatisfy { $0.utf8.count <= maximumFieldLength }
            && decision.scopes == Array(Set(decision.scopes.map { $0.lowercased() })).sorted()
    }

    /// The file's bytes when it is a regular file of this user's (not a link) and not too large.
    private static func readOwnerOnly(_ file: URL) -> Data? {
        guard let descriptor = try? Posix.openOwnerOnly(file.path, O_RDONLY) else { return nil }
        defer { Posix.close(descriptor) }
        guard Posix.isRegularFileOfThisUser(descriptor) else { return nil }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
        guard let data = try? handle.read(upToCount: maximumFileSize + 1), data.count <= maximumFileSize else { return nil }
        return data
    }

    /// Replaces the file whole (a new owner-only file renamed over it); a failure keeps the
    /// decisions for this run.
    private func save() {
        guard let file else { return }
        let folder = file.deletingLastPathComponent()
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        encoder.dateEncodingStrategy = .iso8601
        guard let data = try? encoder.encode(Stored(version: 1, decisions: all.map(Lenient.init))) else { return }
        let temporary = folder.appending(path: ".\(file.lastPathComponent).\(UUID().uuidString)")
        do {
            let descriptor = try Posix.openOwnerOnly(temporary.path, O_WRONLY | O_CREAT | O_EXCL)
            let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
            defer { Posix.close(descriptor) }
            try handle.write(contentsOf: data)
            try Posix.rename(temporary.path, to: file.path)
        } catch {
            Posix.removeFile(temporary.path)
        }
    }

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}
