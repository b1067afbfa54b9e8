import FoundationEssentials
import SesameCore
import SesameSystem

/// Asks the user whether a program may use an account: the window's access question.
@MainActor
public protocol AccessQuestioner: AnyObject {
    /// Shows "Allow <program> to use your account?" with what the token carries, and waits for
    /// the answer; nil when it could not be asked or was dismissed (no token, nothing kept).
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

/// A token for a program: the secret, when it expires, and the permissions it carries.
public struct ServiceToken: Sendable {
    /// The access token (a ``Secret``: it prints redacted).
    public let secret: Secret
    /// When it expires.
    public let expiresOn: Date
    /// The permissions it carries (the identity service's grant).
    public let scopes: [String]
}

/// Why the account service said no: a D-Bus error name under `org.sesame.Accounts1.Error.` and a
/// sentence that never holds a token — nor an account's name, for a program that may not see it.
public struct AccountServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The error's kind; its raw value is the last part of the D-Bus error name.
    public enum Kind: String, Sendable, CaseIterable {
        /// The user said no (or did not answer), or the program may not do this.
        case accessDenied = "AccessDenied"
        /// The caller could not be identified by the system, or changed since its first call.
        case unknownCaller = "UnknownCaller"
        /// Only an interactive sign-in can give a token: call `SignIn`.
        case interactionRequired = "InteractionRequired"
        /// No account of that type (and user name, for a program that may see the account type)
        /// is signed in.
        case noSuchAccount = "NoSuchAccount"
        /// Sesame has no settings for that account type.
        case unknownAccountType = "UnknownAccountType"
        /// An argument is too long, empty where it may not be, or malformed.
        case invalidArgument = "InvalidArgument"
        /// The program already has a question open, or too many programs are waiting for the
        /// user: try again once the user has answered.
        case busy = "Busy"
        /// The user closed the sign-in.
        case cancelled = "Cancelled"
        /// The keyring holding the sign-ins is locked (its prompt dismissed): unlock it, ask again.
        case keyringLocked = "KeyringLocked"
        /// The sign-ins are in the desktop keyring, and no keyring daemon answers.
        case noKeyring = "NoKeyring"
        /// The disk holding the sign-ins is full; nothing was lost.
        case diskFull = "DiskFull"
        /// The folder holding the sign-ins cannot be written.
        case readOnlyStorage = "ReadOnlyStorage"
        /// Anything else (the network, the identity service, the storage).
        case failed = "Failed"

        /// The kind for a storage problem.
        init(_ problem: TokenStorageError.Problem) {
            switch problem {
            case .keyringLocked: self = .keyringLocked
            case .keyringUnavailable: self = .noKeyring
            case .diskFull: self = .diskFull
            case .readOnly: self = .readOnlyStorage
            case .other: self = .failed
            }
        }
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
/// a program was allowed to see (never a token), a token for a program the user allowed, an
/// interactive sign-in in the window, a sign-out — over the window's own store, so a refresh is
/// shared with the window and a sign-out is seen by it at once. Every argument is hostile:
/// bounded, checked, and answered with a typed ``AccountServiceError``. The caller is whoever the
/// system says it is (``ProgramIdentity``), never what it says.
///
/// What the user is asked is what the program gets: the token is fetched first (silently; it
/// stays with Sesame), and the question names the permissions it really carries. A decision is
/// kept per program, account and resource with the permissions the user saw; a later token that
/// carries more asks again. One question per program is open at a time and only a few across
/// programs; other requests meanwhile are answered `Busy`.
@MainActor
public final class AccountService {
    /// The longest account type, user name or scope accepted.
    public static let maximumArgumentLength = 512
    /// The most scopes one request may name.
    public static let maximumScopes = 32
    /// The most programs waiting for the user at once (each with one question).
    public static let maximumPendingQuestions = 4

    private let store: AccountStore
    private let trace: FlowTrace
    /// The account types it serves (those the app has settings for).
    private let accountTypes: [String]
    /// The user's kept decisions.
    public let access: ProgramAccess
    /// Programs that need no question: Sesame's own commands, which read the store directly anyway.
    private let trusted: Set<ProgramIdentity>
    /// Who asks the user (the window); nil: every undecided program is refused.
    public weak var questioner: (any AccessQuestioner)?
    /// Who signs in interactively (the window); nil: `SignIn` fails.
    public weak var signer: (any ServiceSignIn)?
    /// The programs waiting for the user (a question, or a sign-in they asked for).
    var waiting: Set<ProgramIdentity> = []
    private var listening: Task<Void, Never>?

    /// A service over `store` for its configured `accountTypes`, recording to `trace`;
    /// `trusted`: the programs that need no question. An account that signs out (here, in the
    /// window, or through the bus) takes its decisions with it: the user's next sign-in is asked
    /// about afresh.
    public init(store: AccountStore, accountTypes: [String], trace: FlowTrace, access: ProgramAccess, trusted: Set<ProgramIdentity>) {
        self.store = store
        self.accountTypes = accountTypes
        self.trace = trace
        self.access = access
        self.trusted = trusted
        listening = Task { [weak self, store] in
            for await event in await store.events() {
                guard let self else { return }
                if case .accountsDidChange(let accountType, .removed(let account)) = event {
                    self.access.forget(accountType: accountType, homeAccountID: account.homeAccountID)
                }
            }
        }
    }

    isolated deinit { listening?.cancel() }

    /// The signed-in accounts `program` was allowed to use (every one for Sesame's own commands);
    /// none for a program the user has not decided about.
    public func accounts(for program: ProgramIdentity) async throws(AccountServiceError) -> [ServiceAccount] {
        var all: [ServiceAccount] = []
        for accountType in accountTypes {
            do {
                all += try await store.accounts(ofType: accountType).filter { maySee(program, $0) }.map(ServiceAccount.init)
            } catch {
                throw AccountServiceError.failure(error)
            }
        }
        return all
    }

    /// A token for `program`, when the user allows it (asked the first time, and whenever the
    /// token carries more than the user saw), without interaction otherwise.
    /// - Parameters:
    ///   - username: the account's user name; empty for the only account of the type.
    ///   - scopes: the scopes, of one resource; empty for the account type's own.
    ///   - asking: told when the user is asked about the request (so the caller can say it
    ///     waits); its user name is empty unless the program named it or may see the account.
    public func accessToken(
        for program: ProgramIdentity, context: ProgramContext = ProgramContext(), accountType: String, username: String,
        scopes: [String], asking: Asking? = nil
    ) async throws(AccountServiceError) -> ServiceToken {
        try await tokenAndAccount(
            for: program, context: context, accountType: accountType, username: username, scopes: scopes, asking: asking
        )
        .token
    }

    /// Told about the request while the user is asked about it (the user name only as the program may know it).
    public typealias Asking = @MainActor (AccessRequest) -> Void

    private func tokenAndAccount(
        for program: ProgramIdentity, context: ProgramContext, accountType: String, username: String, scopes: [String], asking: Asking?
    ) async throws(AccountServiceError) -> (token: ServiceToken, account: Account) {
        try AccountServiceError.check(accountType: accountType, username: username, scopes: scopes)
        guard accountTypes.contains(accountType) else {
            throw AccountServiceError(.unknownAccountType, "Sesame has no settings for the account type \(accountType).")
        }
        let wanted = try await scopesOrDefault(scopes, accountType: accountType)
        let resource = try Self.resource(of: wanted)
        let asked = AccessRequest(
            program: program, accountType: accountType, homeAccountID: "", username: username, resource: resource, scopes: wanted,
            context: context)
        let (account, allowedNow) = try await find(asked, asking: asking)
        let token: AccessToken
        // The token is fetched first, to ask the user about what it really carries; it stays here
        // until the program may have it.
        trace.record("service-token-request", [("program", program.name), ("accountType", accountType)])
        do {
            token = try await store.accessToken(for: account, scopes: scopes.isEmpty ? nil : scopes)
        } catch {
            let failure = AccountServiceError.failure(error)
            // A program that may not see the account learns of it only once the user allowed it.
            if failure.kind == .interactionRequired, !maySee(program, account) {
                try await authorize(
                    program, AccessRequest(program: program, account: account, resource: resource, scopes: wanted, context: context),
                    allowedNow: allowedNow, named: username, asking: asking)
            }
            throw maySee(program, account) ? failure : AccountServiceError.unnamed(failure)
        }
        let granted = ScopeResource.shown(token.scopes).isEmpty ? wanted : token.scopes
        try await authorize(
            program, AccessRequest(program: program, account: account, resource: resource, scopes: granted, context: context),
            allowedNow: allowedNow, named: username, asking: asking)
        return (ServiceToken(secret: token.secret, expiresOn: token.expiresOn, scopes: ScopeResource.shown(granted)), account)
    }

    /// The account of `accountType` for `program`: one it may see is answered at once; otherwise
    /// the user is asked (as for a token of the type's own scopes), and with nobody signed in, the
    /// window signs someone in first. Returns once it finished.
    public func signIn(
        for program: ProgramIdentity, context: ProgramContext = ProgramContext(), accountType: String
    ) async throws(AccountServiceError) -> ServiceAccount {
        try AccountServiceError.check(accountType: accountType, username: "", scopes: [])
        guard accountTypes.contains(accountType) else {
            throw AccountServiceError(.unknownAccountType, "Sesame has no settings for the account type \(accountType).")
        }
        let accounts: [Account]
        do {
            accounts = try await store.accounts(ofType: accountType)
        } catch {
            throw AccountServiceError.failure(error)
        }
        if let seen = accounts.first(where: { maySee(program, $0) }) { return ServiceAccount(seen) }
        if let only = accounts.first {
            _ = try await accessToken(for: program, context: context, accountType: accountType, username: only.username, scopes: [])
            return ServiceAccount(only)
        }
        // Nobody signed in: this computer's PRT, once the program is allowed (asked first), else the window.
        do {
            let (_, account) = try await tokenAndAccount(
                for: program, context: context, accountType: accountType, username: "", scopes: [], asking: nil)
            return ServiceAccount(account)
        } catch  where error.kind == .noSuchAccount {}
        guard let signer else { throw AccountServiceError(.failed, "Sesame's window cannot be shown here.") }
        try beginWaiting(program)
        trace.record("service-sign-in", [("program", program.name), ("accountType", accountType)])
        let account = await signer.serviceSignIn(accountType: accountType)
        waiting.remove(program)
        guard let account else { throw AccountServiceError(.cancelled, "The sign-in was closed.") }
        _ = try await accessToken(for: program, context: context, accountType: accountType, username: account.username, scopes: [])
        return ServiceAccount(account)
    }

    /// Signs an account out, for a program the user allowed to use it ("Always").
    public func signOut(for program: ProgramIdentity, accountType: String, username: String) async throws(AccountServiceError) {
        try AccountServiceError.check(accountType: accountType, username: username, scopes: [])
        guard accountTypes.contains(accountType) else {
            throw AccountServiceError(.unknownAccountType, "Sesame has no settings for the account type \(accountType).")
        }
        let asked = AccessRequest(
            program: program, accountType: accountType, homeAccountID: "", username: username, resource: "", scopes: [])
        let (account, _) = try await find(asked, signingIn: false, asking: nil)
        guard maySee(program, account) else {
            throw AccountServiceError(.accessDenied, "This program may not sign that account out: it was never allowed to use it.")
        }
        do {
            try await store.remove(account)
        } catch {
            throw AccountServiceError.failure(error)
        }
        trace.record("signed-out", [("accountType", accountType)])
    }

    // MARK: Deciding

    /// Whether `program` is one of Sesame's own, which need no question.
    public func isTrusted(_ program: ProgramIdentity) -> Bool { trusted.contains(program) }

    private func maySee(_ program: ProgramIdentity, _ account: Account) -> Bool {
        maySee(program, account.homeAccountID, account.accountType)
    }

    private func maySee(_ program: ProgramIdentity, _ homeAccountID: String, _ accountType: String) -> Bool {
        trusted.contains(program) || access.maySee(program, accountType: accountType, homeAccountID: homeAccountID)
    }

    /// Before this computer's PRT signs `asked`'s account type in for a program with no page: the
    /// program is asked first about the registration's user (named by the registration, with the
    /// permissions it asks for), so that a program the user refuses causes no sign-in — no token
    /// minted, nothing stored, no account named to it. `applies`: the PRT would sign in (for this
    /// program: allowed, or trusted); `allowed`: the question answered now, which the token's
    /// own question may then skip. A registration too old to name its user's ids signs nobody in
    /// for a program (only the window's page can).
    func askBeforeDeviceSignIn(
        _ asked: AccessRequest, parameters: [String: String], asking: Asking? = nil
    ) async throws(AccountServiceError) -> (applies: Bool, allowed: AccessRequest?) {
        guard let status = await store.deviceSignInUser(accountType: asked.accountType, parameters: parameters) else { return (false, nil) }
        if trusted.contains(asked.program) { return (true, nil) }
        guard let username = status.userPrincipalName, let objectID = status.userObjectID, let tenantID = status.tenantID else {
            return (false, nil)
        }
        let request = AccessRequest(
            program: asked.program, accountType: asked.accountType, homeAccountID: "\(objectID).\(tenantID)", username: username,
            resource: asked.resource, scopes: asked.scopes, app: asked.app, context: asked.context)
        try await authorize(asked.program, request, named: asked.username, asking: asking)
        return (true, request)
    }

    /// Passes when the program may have the token: trusted, allowed for what it carries (kept, or
    /// `allowedNow`: answered in this call, before a sign-in), or the user says so now (the broker's
    /// requests too). `named`: the user name the program gave (it may hear it back while asked).
    func authorize(
        _ program: ProgramIdentity, _ request: AccessRequest, allowedNow: AccessRequest? = nil, named: String = "",
        asking: Asking? = nil
    ) async throws(AccountServiceError) {
        if trusted.contains(program) || allowedNow?.covers(request) == true { return }
        var asked = request
        switch access.decision(for: request) {
        case .allowed: return
        case .denied: throw Self.denied
        case .undecided: break
        case .grew(let allowed):
            asked = AccessRequest(
                program: program, accountType: request.accountType, homeAccountID: request.homeAccountID, username: request.username,
                resource: request.resource, scopes: request.scopes, previouslyAllowed: allowed, app: request.app,
                context: request.context)
        }
        // A program learns the user name while it waits only when it named it or may see the account.
        let told = named.equalsIgnoringCase(request.username) || maySee(program, request.homeAccountID, request.accountType)
        switch try await question(asked, asking: { asking?(told ? asked : asked.withoutUsername) }) {
        case .allowOnce?, .always?: return
        case .deny?, nil: throw Self.denied
        }
    }

    /// The user's answer to `request`. A program with a question (or a sign-in) open, or one
    /// asking while too many programs wait, is told to try again later.
    private func question(
        _ request: AccessRequest, asking: @MainActor () -> Void
    ) async throws(AccountServiceError) -> AccessAnswer? {
        guard let questioner else { return nil }
        try beginWaiting(request.program)
        defer { waiting.remove(request.program) }
        asking()
        trace.record(
            "access-question",
            [
                ("program", request.program.name), ("verified", request.program.isVerified ? "yes" : "no"),
                ("accountType", request.accountType),
            ])
        let answer = await questioner.ask(request)
        if let answer { access.record(answer, for: request) }
        trace.record("access-answer", [("program", request.program.name), ("answer", answer?.rawValue ?? "none")])
        return answer
    }

    func beginWaiting(_ program: ProgramIdentity) throws(AccountServiceError) {
        guard !waiting.contains(program) else {
            throw AccountServiceError(.busy, "This program is already waiting for the user's answer; ask again once it has one.")
        }
        guard waiting.count < Self.maximumPendingQuestions else {
            throw AccountServiceError(.busy, "Too many programs are waiting for the user's answer; ask again later.")
        }
        waiting.insert(program)
    }

    static let denied = AccountServiceError(.accessDenied, "The user did not allow this program to use that account.")

    // MARK: Arguments

    /// The one resource `scopes` are for: a token is for one resource.
    private static func resource(of scopes: [String]) throws(AccountServiceError) -> String {
        let resources = Set(ScopeResource.shown(scopes).map(ScopeResource.of))
        guard resources.count <= 1 else {
            throw AccountServiceError(.invalidArgument, "The scopes name \(resources.count) resources: ask for one resource's at a time.")
        }
        return resources.first ?? ""
    }

    /// The type's signed-in accounts; with none, the one this computer's Primary Refresh Token
    /// signs in with no page — once the program is allowed (``askBeforeDeviceSignIn(_:parameters:asking:)``),
    /// with the user's answer.
    private func signedIn(
        _ asked: AccessRequest, signingIn: Bool, asking: Asking?
    ) async throws(AccountServiceError) -> ([Account], AccessRequest?) {
        do {
            let accounts = try await store.accounts(ofType: asked.accountType)
            guard accounts.isEmpty, signingIn else { return (accounts, nil) }
            let parameters = asked.username.isEmpty ? [:] : ["login_hint": asked.username]
            let (applies, allowed) = try await askBeforeDeviceSignIn(asked, parameters: parameters, asking: asking)
            guard applies, let account = try await store.signInWithDevice(accountType: asked.accountType, parameters: parameters) else {
                return ([], nil)
            }
            return ([account], allowed)
        } catch let error as AccountServiceError {
            throw error
        } catch {
            throw AccountServiceError.failure(error)
        }
    }

    /// The account of `asked`'s type named by its user name (the only one when empty), and the
    /// question answered on the way, if any. A user name that is not signed in is named in the
    /// error only to a program allowed to see the type's accounts: to others it is the same
    /// refusal as an account they may not use.
    private func find(
        _ asked: AccessRequest, signingIn: Bool = true, asking: Asking?
    ) async throws(AccountServiceError) -> (Account, AccessRequest?) {
        let (accountType, username, program) = (asked.accountType, asked.username, asked.program)
        let (accounts, allowedNow) = try await signedIn(asked, signingIn: signingIn, asking: asking)
        if username.isEmpty {
            guard accounts.count == 1, let only = accounts.first else {
                throw AccountServiceError(
                    .noSuchAccount,
                    accounts.isEmpty ? "Nobody is signed in for \(accountType)." : "\(accountType) has several accounts: name one.")
            }
            return (only, allowedNow)
        }
        guard let match = accounts.first(where: { $0.username.equalsIgnoringCase(username) }) else {
            guard trusted.contains(program) || access.maySeeAny(program, accountType: accountType) else { throw Self.denied }
            throw AccountServiceError(.noSuchAccount, "\(username) is not signed in for \(accountType).")
        }
        return (match, allowedNow)
    }

    private func scopesOrDefault(_ scopes: [String], accountType: String) async throws(AccountServiceError) -> [String] {
        if !scopes.isEmpty { return scopes }
        guard let configuration = await store.configuration(forAccountType: accountType) else {
            throw AccountServiceError(.unknownAccountType, "Sesame has no settings for the account type \(accountType).")
        }
        return configuration.scopes.filter { !["openid", "profile", "offline_access", "email"].contains($0.lowercased()) }
    }

}

extension AccountServiceError {
    /// Checks a request's arguments: bounded, no hidden characters, scopes without spaces.
    @MainActor
    static func check(accountType: String, username: String, scopes: [String]) throws(AccountServiceError) {
        guard !accountType.isEmpty else { throw AccountServiceError(.invalidArgument, "The account type is empty.") }
        guard scopes.count <= AccountService.maximumScopes else {
            throw AccountServiceError(.invalidArgument, "At most \(AccountService.maximumScopes) scopes may be asked for at once.")
        }
        for value in [accountType, username] + scopes {
            guard value.utf8.count <= AccountService.maximumArgumentLength else {
                throw AccountServiceError(.invalidArgument, "An argument is longer than \(AccountService.maximumArgumentLength) bytes.")
            }
            guard !DisplayText.hasHiddenCharacters(value) else {
                throw AccountServiceError(
                    .invalidArgument, "An argument holds a control, format or invisible character (bidirectional or zero-width).")
            }
        }
        guard scopes.allSatisfy({ !$0.isEmpty && !$0.contains(" ") }) else {
            throw AccountServiceError(.invalidArgument, "A scope is empty or holds a space.")
        }
    }

    /// `error` as a program that may not see the account is told it: the store's sentences may
    /// name the account.
    static func unnamed(_ error: AccountServiceError) -> AccountServiceError {
        switch error.kind {
        case .interactionRequired:
            AccountServiceError(.interactionRequired, "Only an interactive sign-in can give a token now: call SignIn.")
        case .noSuchAccount: AccountServiceError(.noSuchAccount, "That account is no longer signed in.")
        default: AccountServiceError(error.kind, "Sesame could not get a token: its window or `sesame doctor` says why.")
        }
    }

    /// The store's error as the service's: its code decides the kind, its sentence (never a
    /// secret) the message.
    static func failure(_ error: any Error) -> AccountServiceError {
        if let error = error as? TokenStorageError {
            return failure(AccountStoreError.from(error))
        }
        guard let error = error as? AccountStoreError else {
            return AccountServiceError(.failed, "The sign-in storage failed: \(error)")
        }
        // A tenant's refusal: Sesame's sentence, then the details the program's user can hand
        // their help desk, one a line (``RefusalMessage``: `sesame token` reads them back).
        let message = RefusalMessage(error)?.text ?? error.message
        switch error.code {
        case .interactionRequired: return AccountServiceError(.interactionRequired, message)
        case .accountNotFound: return AccountServiceError(.noSuchAccount, message)
        case .unknownAccountType: return AccountServiceError(.unknownAccountType, message)
        case .cancelled: return AccountServiceError(.cancelled, message)
        case .storageUnavailable: return AccountServiceError(.init(error.storageProblem ?? .other), message)
        default: return AccountServiceError(.failed, message)
        }
    }
}

/// A tenant's refusal as the account service words it for a program: Sesame's sentence, then the
/// details for the IT help desk one a line, as ``HelpDeskDetails/text`` writes them (`Error code:
/// AADSTS53003`, `Request Id: …`, `Correlation Id: …`, `Timestamp: …`). Readable as it is, and
/// read back by `sesame token`, which prints and records it exactly as it does a refusal it met
/// itself.
public struct RefusalMessage: Sendable, Equatable {
    /// The store's sentence.
    public let sentence: String
    /// What the help desk needs.
    public let details: HelpDeskDetails

    /// The message for `error`, when it is a tenant's refusal.
    public init?(_ error: AccountStoreError) {
        guard TenantRefusal(serviceCode: error.serviceCode) != nil else { return nil }
        sentence = error.message
        details = HelpDeskDetails(error, configuration: nil)
    }

    /// The message read back from a service's error text; nil when it names no tenant's refusal.
    public init?(text: String) {
        let lines = text.prefix(8192).split(separator: "\n", maxSplits: 1)
        guard let first = lines.first else { return nil }
        let details = HelpDeskDetails(troubleshooting: lines.count > 1 ? String(lines[1]) : "")
        guard TenantRefusal(serviceCode: details.errorCode) != nil else { return nil }
        sentence = String(first)
        self.details = details
    }

    /// The text a program reads.
    public var text: String { sentence + "\n" + details.text }

    /// The store's error again, as `code` (the service's kind): what ``RefusalNotice`` is made from.
    public func storeError(_ code: AccountStoreError.Code) -> AccountStoreError {
        var error = AccountStoreError(code, sentence)
        error.serviceCode = details.errorCode
        error.errorDescription = details.text
        return error
    }
}
