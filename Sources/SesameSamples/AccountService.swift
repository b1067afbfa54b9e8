import Foundation
import SesameCore

/// Asks the user whether a program may use an account: the window's question bar.
@MainActor
public protocol AccessQuestioner: AnyObject {
    /// Shows "Allow <program> to use <account> (<scopes>)?" and waits for the answer; nil when
    /// it could not be asked or was dismissed (no token, nothing kept).
    func ask(_ request: AccessRequest) async -> AccessAnswer?
}

/// Signs an account in interactively for the account service: the window's sign-in page.
@MainActor
public protocol ServiceSignIn: AnyObject {
    /// Signs someone in for `accountType` (the sample of that type); nil when the user closed it.
    func serviceSignIn(accountType: String) async -> Account?
}

/// What a program sees of an account: never a token.
public struct ServiceAccount: Sendable, Hashable {
    /// The account's type (its settings).
    public let accountType: String
    /// The user name (UPN or e-mail).
    public let username: String
    /// The display name.
    public let displayName: String
    /// The tenant (the cache's realm).
    public let tenant: String
    /// The account's id in the cache (home account id).
    public let homeAccountID: String
    /// Whether only an interactive sign-in can give it a token now.
    public let needsSignIn: Bool

    /// What a program sees of `account`.
    public init(_ account: Account) {
        accountType = account.accountType
        username = account.username
        displayName = account.displayName
        tenant = account.realm
        homeAccountID = account.homeAccountID
        needsSignIn = account.interactionRequired
    }
}

/// A token for a program: the secret and when it expires.
public struct ServiceToken: Sendable {
    /// The access token (a ``Secret``: it prints redacted).
    public let secret: Secret
    /// When it expires.
    public let expiresOn: Date
}

/// Why the account service said no: a D-Bus error name under `org.sesame.Accounts1.Error.` and a
/// sentence that never holds a token.
public struct AccountServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The error's kind; its raw value is the last part of the D-Bus error name.
    public enum Kind: String, Sendable, CaseIterable {
        /// The user said no (or did not answer), or the program may not do this.
        case accessDenied = "AccessDenied"
        /// The caller could not be identified by the system.
        case unknownCaller = "UnknownCaller"
        /// Only an interactive sign-in can give a token: call `SignIn`.
        case interactionRequired = "InteractionRequired"
        /// No account of that type and user name is signed in.
        case noSuchAccount = "NoSuchAccount"
        /// Sesame has no settings for that account type.
        case unknownAccountType = "UnknownAccountType"
        /// An argument is too long, empty where it may not be, or malformed.
        case invalidArgument = "InvalidArgument"
        /// The user closed the sign-in.
        case cancelled = "Cancelled"
        /// Anything else (the network, the identity service, the storage).
        case failed = "Failed"
    }

    /// The D-Bus error names' prefix.
    public static let namePrefix = "org.sesame.Accounts1.Error."

    /// The kind.
    public let kind: Kind
    /// What went wrong, for a person (no secret).
    public let message: String

    /// An error of `kind`.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The D-Bus error name, e.g. `org.sesame.Accounts1.Error.AccessDenied`.
    public var name: String { Self.namePrefix + kind.rawValue }

    public var description: String { "\(name): \(message)" }
}

/// Sesame's account service, without the bus: what `org.sesame.Accounts1` answers — the accounts
/// (never a token), a token for a program the user allowed, an interactive sign-in in the window,
/// a sign-out — over the window's own store, so a refresh is shared with the window and a
/// sign-out is seen by it at once. Every argument is hostile: bounded, checked, and answered with
/// a typed ``AccountServiceError``. The caller is whoever the system says it is
/// (``ProgramIdentity``), never what it says.
@MainActor
public final class AccountService {
    /// The longest account type, user name or scope accepted.
    public static let maximumArgumentLength = 512
    /// The most scopes one request may name.
    public static let maximumScopes = 32

    private let model: AppModel
    /// The user's kept decisions.
    public let access: ProgramAccess
    /// Programs that need no question: Sesame's own commands, which read the store directly anyway.
    private let trusted: Set<ProgramIdentity>
    /// Who asks the user (the window); nil: every undecided program is refused.
    public weak var questioner: (any AccessQuestioner)?
    /// Who signs in interactively (the window); nil: `SignIn` fails.
    public weak var signer: (any ServiceSignIn)?
    /// One question per program, account and scopes at a time: concurrent requests wait for it.
    private var questions: [AccessKey: Task<AccessAnswer?, Never>] = [:]
    private var listening: Task<Void, Never>?

    /// A service over `model`'s store; `trusted`: the programs that need no question. An account
    /// that signs out (here, in the window, or through the bus) takes its decisions with it: the
    /// user's next sign-in is asked about afresh.
    public init(model: AppModel, access: ProgramAccess, trusted: Set<ProgramIdentity>) {
        self.model = model
        self.access = access
        self.trusted = trusted
        listening = Task { [weak self, store = model.store] in
            for await event in await store.events() {
                guard let self else { return }
                if case .accountsDidChange(let accountType, .removed(let account)) = event {
                    self.access.forget(accountType: accountType, homeAccountID: account.homeAccountID)
                }
            }
        }
    }

    isolated deinit { listening?.cancel() }

    /// The signed-in accounts of every account type.
    public func accounts() async throws(AccountServiceError) -> [ServiceAccount] {
        var all: [ServiceAccount] = []
        for accountType in accountTypes {
            do {
                all += try await model.store.accounts(ofType: accountType).map(ServiceAccount.init)
            } catch {
                throw Self.failure(error)
            }
        }
        return all
    }

    /// A token for `program`, when the user allows it (asked the first time), without
    /// interaction otherwise.
    /// - Parameters:
    ///   - username: the account's user name; empty for the only account of the type.
    ///   - scopes: the scopes; empty for the account type's own.
    public func accessToken(
        for program: ProgramIdentity, accountType: String, username: String, scopes: [String]
    ) async throws(AccountServiceError) -> ServiceToken {
        try Self.check(accountType: accountType, username: username, scopes: scopes)
        let account = try await find(accountType: accountType, username: username)
        let wanted = try await scopesOrDefault(scopes, accountType: accountType)
        try await authorize(program, AccessRequest(program: program, account: account, scopes: wanted))
        model.trace.record("service-token-request", [("program", program.name), ("accountType", accountType)])
        do {
            let token = try await model.store.accessToken(for: account, scopes: scopes.isEmpty ? nil : scopes)
            return ServiceToken(secret: token.secret, expiresOn: token.expiresOn)
        } catch {
            throw Self.failure(error)
        }
    }

    /// Signs someone in for `accountType` in the window; returns once it finished.
    public func signIn(for program: ProgramIdentity, accountType: String) async throws(AccountServiceError) -> ServiceAccount {
        try Self.check(accountType: accountType, username: "", scopes: [])
        guard accountTypes.contains(accountType) else {
            throw AccountServiceError(.unknownAccountType, "Sesame has no settings for the account type \(accountType).")
        }
        guard let signer else { throw AccountServiceError(.failed, "Sesame's window cannot be shown here.") }
        model.trace.record("service-sign-in", [("program", program.name), ("accountType", accountType)])
        guard let account = await signer.serviceSignIn(accountType: accountType) else {
            throw AccountServiceError(.cancelled, "The sign-in was closed.")
        }
        return ServiceAccount(account)
    }

    /// Signs an account out, for a program the user allowed to use it ("Always").
    public func signOut(for program: ProgramIdentity, accountType: String, username: String) async throws(AccountServiceError) {
        try Self.check(accountType: accountType, username: username, scopes: [])
        let account = try await find(accountType: accountType, username: username)
        guard trusted.contains(program) || access.mayManage(program, accountType: accountType, homeAccountID: account.homeAccountID)
        else {
            throw AccountServiceError(
                .accessDenied, "\(program.name) may not sign \(account.username) out: it was never allowed to use it.")
        }
        do {
            try await model.store.remove(account)
        } catch {
            throw Self.failure(error)
        }
        model.trace.record("signed-out", [("accountType", accountType)])
    }

    // MARK: Deciding

    /// Passes when the program may have the token: trusted, allowed always, or the user says so now.
    private func authorize(_ program: ProgramIdentity, _ request: AccessRequest) async throws(AccountServiceError) {
        if trusted.contains(program) { return }
        switch access.decision(for: request) {
        case true?: return
        case false?: throw Self.denied(request)
        case nil: break
        }
        let answer = await question(request)
        // Another request's answer may have been kept meanwhile ("Always" for the same question).
        switch answer {
        case .allowOnce?, .always?: return
        case .deny?, nil: throw Self.denied(request)
        }
    }

    /// The user's answer to `request`, asked once however many identical requests wait.
    private func question(_ request: AccessRequest) async -> AccessAnswer? {
        if let asking = questions[request.key] { return await asking.value }
        guard let questioner else { return nil }
        model.trace.record("access-question", [("program", request.program.name), ("accountType", request.accountType)])
        let asking = Task { [access] in
            let answer = await questioner.ask(request)
            if let answer { access.record(answer, for: request) }
            return answer
        }
        questions[request.key] = asking
        let answer = await asking.value
        questions[request.key] = nil
        model.trace.record("access-answer", [("program", request.program.name), ("answer", answer?.rawValue ?? "none")])
        return answer
    }

    private static func denied(_ request: AccessRequest) -> AccountServiceError {
        AccountServiceError(.accessDenied, "\(request.program.name) may not use \(request.username): the user did not allow it.")
    }

    // MARK: Arguments

    private var accountTypes: [String] { model.samples.map(\.accountType) }

    private static func check(accountType: String, username: String, scopes: [String]) throws(AccountServiceError) {
        guard !accountType.isEmpty else { throw AccountServiceError(.invalidArgument, "The account type is empty.") }
        guard scopes.count <= maximumScopes else {
            throw AccountServiceError(.invalidArgument, "At most \(maximumScopes) scopes may be asked for at once.")
        }
        for value in [accountType, username] + scopes {
            guard value.utf8.count <= maximumArgumentLength else {
                throw AccountServiceError(.invalidArgument, "An argument is longer than \(maximumArgumentLength) bytes.")
            }
            guard !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw AccountServiceError(.invalidArgument, "An argument holds a control character.")
            }
        }
        guard scopes.allSatisfy({ !$0.isEmpty && !$0.contains(" ") }) else {
            throw AccountServiceError(.invalidArgument, "A scope is empty or holds a space.")
        }
    }

    /// The account of `accountType` named `username` (the only one when `username` is empty).
    private func find(accountType: String, username: String) async throws(AccountServiceError) -> Account {
        guard accountTypes.contains(accountType) else {
            throw AccountServiceError(.unknownAccountType, "Sesame has no settings for the account type \(accountType).")
        }
        let accounts: [Account]
        do {
            accounts = try await model.store.accounts(ofType: accountType)
        } catch {
            throw Self.failure(error)
        }
        if username.isEmpty {
            guard accounts.count == 1, let only = accounts.first else {
                throw AccountServiceError(
                    .noSuchAccount,
                    accounts.isEmpty
                        ? "Nobody is signed in for \(accountType)." : "\(accountType) has \(accounts.count) accounts: name one.")
            }
            return only
        }
        guard let match = accounts.first(where: { $0.username.caseInsensitiveCompare(username) == .orderedSame }) else {
            throw AccountServiceError(.noSuchAccount, "\(username) is not signed in for \(accountType).")
        }
        return match
    }

    private func scopesOrDefault(_ scopes: [String], accountType: String) async throws(AccountServiceError) -> [String] {
        if !scopes.isEmpty { return scopes }
        guard let configuration = await model.store.configuration(forAccountType: accountType) else {
            throw AccountServiceError(.unknownAccountType, "Sesame has no settings for the account type \(accountType).")
        }
        return configuration.scopes.filter { !["openid", "profile", "offline_access", "email"].contains($0.lowercased()) }
    }

    /// The store's error as the service's: its code decides the kind, its sentence (never a
    /// secret) the message.
    private static func failure(_ error: any Error) -> AccountServiceError {
        guard let error = error as? AccountStoreError else {
            return AccountServiceError(.failed, "The sign-in storage failed: \(error)")
        }
        switch error.code {
        case .interactionRequired: return AccountServiceError(.interactionRequired, error.message)
        case .accountNotFound: return AccountServiceError(.noSuchAccount, error.message)
        case .unknownAccountType: return AccountServiceError(.unknownAccountType, error.message)
        case .cancelled: return AccountServiceError(.cancelled, error.message)
        default: return AccountServiceError(.failed, error.message)
        }
    }
}
