import FoundationEssentials
import Glibc
import SesameCore
import SesameSystem

/// The resource a set of scopes is for, as the identity service reads it: the part of a scope
/// before its last `/` (`https://outlook.office.com/IMAP.AccessAsUser.All` →
/// `https://outlook.office.com`, `499b84ac-…/.default` → `499b84ac-…`), or, for a plain scope
/// (`User.Read`), the account type's own resource (Microsoft Graph, for Entra): the empty string.
/// One token is for one resource, so one decision is for one resource.
public enum ScopeResource {
    /// The resource of one scope.
    public static func of(_ scope: String) -> String {
        guard let slash = scope.lastIndex(of: "/"), slash != scope.startIndex else { return "" }
        let resource = String(scope[..<slash]).lowercased()
        // Graph by its URL is Graph by default.
        return resource == "https://graph.microsoft.com" || resource == "00000003-0000-0000-c000-000000000000" ? "" : resource
    }

    /// The scopes a token carries, as a question shows them: OpenID Connect's own left out, once
    /// each (whatever their case), in a stable order.
    public static func shown(_ scopes: [String]) -> [String] {
        var seen: Set<String> = []
        var shown: [String] = []
        for scope in scopes where !["openid", "profile", "offline_access", "email"].contains(scope.lowercased()) {
            if seen.insert(scope.lowercased()).inserted { shown.append(scope) }
        }
        return shown.sorted { $0.lowercased() < $1.lowercased() }
    }

    /// One permission however it is written: case aside, a Graph scope by its URL
    /// (`https://graph.microsoft.com/User.Read`, as a program asks) is Graph's by its name
    /// (`User.Read`, as the identity service grants it).
    public static func same(_ scope: String) -> String {
        let scope = scope.lowercased()
        for graph in ["https://graph.microsoft.com/", "00000003-0000-0000-c000-000000000000/"] where scope.hasPrefix(graph) {
            return String(scope.dropFirst(graph.count))
        }
        return scope
    }
}

/// One question the user answers: may this program use this account for these permissions of
/// this resource? The scopes are what the token the program would get really carries (what the
/// identity service granted), not merely what the program named.
public struct AccessRequest: Sendable, Hashable {
    /// Who asks.
    public let program: ProgramIdentity
    /// The account's type (its settings).
    public let accountType: String
    /// The account, as the cache names it.
    public let homeAccountID: String
    /// The account's user name, for the question.
    public let username: String
    /// The resource the token is for (``ScopeResource``; empty: the account type's own).
    public let resource: String
    /// The permissions the token carries (``ScopeResource/shown(_:)``).
    public let scopes: [String]
    /// What the program was allowed before, when the token now carries more (the question says
    /// what is new); empty for a first question.
    public let previouslyAllowed: [String]
    /// The app registration (client id) the program signs in as, when it signs in as its own app
    /// through the identity broker; empty when it uses the account type's (Sesame's) app.
    public let app: String
    /// What the question shows of how the program asked (the script it says it runs, a command
    /// it ran): never part of the decision.
    public let context: ProgramContext

    /// A request; `scopes` are normalised (see ``scopes``).
    public init(
        program: ProgramIdentity, accountType: String, homeAccountID: String, username: String, resource: String, scopes: [String],
        previouslyAllowed: [String] = [], app: String = "", context: ProgramContext = ProgramContext()
    ) {
        self.program = program
        self.app = app
        self.context = context
        self.accountType = accountType
        self.homeAccountID = homeAccountID
        self.username = username
        self.resource = resource
        self.scopes = ScopeResource.shown(scopes)
        self.previouslyAllowed = ScopeResource.shown(previouslyAllowed)
    }

    /// A request for `account`.
    public init(
        program: ProgramIdentity, account: Account, resource: String, scopes: [String], previouslyAllowed: [String] = [], app: String = "",
        context: ProgramContext = ProgramContext()
    ) {
        self.init(
            program: program, accountType: account.accountType, homeAccountID: account.homeAccountID, username: account.username,
            resource: resource, scopes: scopes, previouslyAllowed: previouslyAllowed, app: app, context: context)
    }

    /// The permissions that were not allowed before (all of them for a first question).
    public var newScopes: [String] {
        let before = Set(previouslyAllowed.map { $0.lowercased() })
        return scopes.filter { !before.contains($0.lowercased()) }
    }

    /// Whether the user's "allow" to this request allows `other` too: the same program, account
    /// (by id, or by user name when this one was asked before the account had its id here) and
    /// resource, for no permission beyond these.
    func covers(_ other: AccessRequest) -> Bool {
        let allowed = Set(scopes.map(ScopeResource.same))
        return program == other.program && accountType == other.accountType && resource == other.resource
            && (homeAccountID == other.homeAccountID || username.equalsIgnoringCase(other.username))
            && other.scopes.allSatisfy { allowed.contains(ScopeResource.same($0)) }
    }

    /// The request as a program that may not know the account hears of it: no user name.
    var withoutUsername: AccessRequest {
        AccessRequest(
            program: program, accountType: accountType, homeAccountID: homeAccountID, username: "", resource: resource, scopes: scopes,
            previouslyAllowed: previouslyAllowed, app: app, context: context)
    }

    /// What a decision is kept under: the user name is only shown.
    var key: AccessKey { AccessKey(program: program, accountType: accountType, homeAccountID: homeAccountID, resource: resource) }
}

/// What a decision is kept under: program, account and resource.
struct AccessKey: Hashable, Sendable {
    let program: ProgramIdentity
    let accountType: String
    let homeAccountID: String
    let resource: String
}

/// The user's answer to "Allow <program> to use <account>?".
public enum AccessAnswer: String, Sendable, Hashable, CaseIterable {
    /// This request only; the next one asks again.
    case allowOnce
    /// This and every later request of the same program, account and resource, as long as the
    /// token carries no more than was shown (kept).
    case always
    /// No token, now and later, for this program, account and resource (kept).
    case deny
}

/// What is kept about a request: allowed (its permissions are within what the user allowed),
/// denied, or nothing yet — or allowed for less than the token now carries (ask again).
public enum AccessDecision: Sendable, Equatable {
    /// The user allowed this program these permissions (or more).
    case allowed
    /// The user denied this program this account's resource.
    case denied
    /// Nothing is kept: ask.
    case undecided
    /// The user allowed less than the token now carries: ask again, showing what is new.
    case grew(allowed: [String])
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
    /// The resource (wire field `resource`; empty: the account type's own).
    public let resource: String
    /// The permissions shown when the user decided, normalised as ``AccessRequest/scopes``
    /// (wire field `scopes`): for an allowed program, the most its tokens may carry.
    public let scopes: [String]
    /// Whether the program may (wire field `allowed`).
    public let allowed: Bool
    /// When the user decided (wire field `decidedAt`).
    public let decidedAt: Date

    var key: AccessKey { AccessKey(program: program, accountType: accountType, homeAccountID: homeAccountID, resource: resource) }
}

/// Which program may use which account: the user's kept answers ("Always", "Deny") per program,
/// account and resource, with the permissions the user saw, in a small owner-only JSON file
/// (`$XDG_DATA_HOME/sesame/program-access.json`) read as hostile input — a missing, oversized,
/// malformed or foreign file is no decision, and an entry that does not parse is dropped, never
/// trusted. "Allow once" is not kept, and nothing is kept about an unverified program. The
/// account service asks ``decision(for:)`` before every token, and the user when it is not
/// `.allowed` or `.denied`.
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
    /// The longest account type, user name, account id, resource or scope kept.
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

    /// What is kept about a request: allowed only while the token carries no permission beyond
    /// what the user saw when they allowed it.
    public func decision(for request: AccessRequest) -> AccessDecision {
        guard request.program.isVerified, let kept = decisions[request.key] else { return .undecided }
        guard kept.allowed else { return .denied }
        let allowed = Set(kept.scopes.map(ScopeResource.same))
        return request.scopes.allSatisfy { allowed.contains(ScopeResource.same($0)) } ? .allowed : .grew(allowed: kept.scopes)
    }

    /// Whether a program was allowed to use the account for any resource: it may see the account
    /// (listed, named in errors) and sign it out.
    public func maySee(_ program: ProgramIdentity, accountType: String, homeAccountID: String) -> Bool {
        program.isVerified
            && decisions.values.contains {
                $0.allowed && $0.program == program && $0.accountType == accountType && $0.homeAccountID == homeAccountID
            }
    }

    /// Whether a program was allowed to use any account of `accountType`.
    public func maySeeAny(_ program: ProgramIdentity, accountType: String) -> Bool {
        program.isVerified && decisions.values.contains { $0.allowed && $0.program == program && $0.accountType == accountType }
    }

    /// Every kept decision, by program name, then account, then resource.
    public var all: [ProgramDecision] {
        decisions.values.sorted {
            ($0.program.name, $0.program.id, $0.username, $0.resource) < ($1.program.name, $1.program.id, $1.username, $1.resource)
        }
    }

    /// Keeps the user's answer: "Always" the permissions shown, "Deny" the resource; "Allow once"
    /// and any answer about an unverified program keep nothing.
    public func record(_ answer: AccessAnswer, for request: AccessRequest) {
        guard answer != .allowOnce, request.program.isVerified, request.scopes.count <= Self.maximumScopes else { return }
        let decision = ProgramDecision(
            program: request.program, accountType: request.accountType, homeAccountID: request.homeAccountID,
            username: request.username, resource: request.resource, scopes: request.scopes, allowed: answer == .always,
            decidedAt: now())
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

    /// The file's shape: `{"version": 2, "decisions": [...]}`. Version 1 kept decisions per
    /// program, account and the scopes *asked for*; it is read as decisions per resource whose
    /// allowed set is what was asked — so a token that carries more asks again.
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
            // Version 1 kept the scopes lower-cased, sorted, once each: anything else is not Sesame's.
            if decision == nil, let old = try? VersionOne(from: decoder),
                old.scopes == Array(Set(old.scopes.map { $0.lowercased() })).sorted()
            {
                decision = ProgramDecision(
                    program: old.program, accountType: old.accountType, homeAccountID: old.homeAccountID, username: old.username,
                    resource: old.scopes.first.map(ScopeResource.of) ?? "", scopes: ScopeResource.shown(old.scopes),
                    allowed: old.allowed, decidedAt: old.decidedAt)
            }
        }

        func encode(to encoder: any Encoder) throws { try decision.encode(to: encoder) }
    }

    /// A version 1 entry (no `resource`).
    private struct VersionOne: Decodable {
        let program: ProgramIdentity
        let accountType: String
        let homeAccountID: String
        let username: String
        let scopes: [String]
        let allowed: Bool
        let decidedAt: Date
    }

    private func load(_ file: URL) {
        guard let data = Posix.readRegularFileOfThisUser(file.path, limit: Self.maximumFileSize),
            let stored = try? Self.decoder.decode(Stored.self, from: Data(data)), [1, 2].contains(stored.version)
        else { return }
        for decision in stored.decisions.compactMap(\.decision).prefix(Self.maximumDecisions) where Self.isSane(decision) {
            decisions[decision.key] = decision
        }
    }

    private static func isSane(_ decision: ProgramDecision) -> Bool {
        let fields = [decision.accountType, decision.homeAccountID, decision.username, decision.resource] + decision.scopes
        return !decision.accountType.isEmpty && !decision.homeAccountID.isEmpty && decision.scopes.count <= maximumScopes
            && fields.allSatisfy { $0.utf8.count <= maximumFieldLength && !DisplayText.hasHiddenCharacters($0) }
            && decision.scopes == ScopeResource.shown(decision.scopes)
            && decision.scopes.allSatisfy { ScopeResource.of($0) == decision.resource }
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
        guard let data = try? encoder.encode(Stored(version: 2, decisions: all.map(Lenient.init))) else { return }
        let temporary = folder.appending(path: ".\(file.lastPathComponent).\(UUID().uuidString)")
        do {
            let descriptor = try Posix.openOwnerOnly(temporary.path, O_WRONLY | O_CREAT | O_EXCL)
            defer { Posix.close(descriptor) }
            try Posix.writeAll(descriptor, data)
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
