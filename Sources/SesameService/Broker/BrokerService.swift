import FoundationEssentials
import SesameCore
import SesameSystem

/// Signs a user in for a program's own app: the window's sign-in page, for an account type the
/// broker configured with the program's client id and redirect URI.
@MainActor
public protocol BrokerSignIn: AnyObject {
    /// Signs someone in for `accountType` in the window (shown and raised), telling the user which
    /// program asked; `parameters` go on `/authorize` (`login_hint`, `claims`).
    func brokerSignIn(
        accountType: String, program: ProgramIdentity, parameters: [String: String]
    ) async throws(AccountStoreError)
        -> Account
    /// Closes the broker's sign-in on screen, if any (`cancelInteractiveFlow`).
    func cancelBrokerSignIn()
}

/// Sesame as the desktop's identity broker, without the bus: what `com.microsoft.identity.broker1`
/// answers for Microsoft's broker client (MSALRuntime, in MSAL for Python, .NET and Node, Edge,
/// Git Credential Manager). A program gets tokens for **its own** app registration (the client id
/// it presents), signed in in Sesame's window with the native-client redirect, kept in MSAL's
/// cache schema per account and client id beside Sesame's own sign-ins, and refreshed silently.
/// The user decides per program and app as for `org.sesame.Accounts1` (``AccountService``'s
/// questions, kept decisions and limits); a program sees only the accounts it was allowed.
///
/// Every failure is the broker client's error shape (``BrokerFailure``) with a sentence for the
/// app's user; nothing here answers with a D-Bus error, which the client would report as
/// "Something went wrong".
@MainActor
public final class BrokerService {
    /// Account types the broker configures: `app:<client id>`.
    public static let accountTypePrefix = "app:"
    /// Where the apps' tokens live (one group; MSAL's schema keeps them apart by client id).
    public static let storageGroup = "broker"
    /// The Microsoft clouds' sign-in hosts a program may name as its authority.
    public static let microsoftHosts: Set<String> = [
        "login.microsoftonline.com", "login.microsoft.com", "login.windows.net", "login.microsoftonline.us",
        "login.partner.microsoftonline.cn", "login.chinacloudapi.cn",
    ]
    /// The redirect URI Microsoft's broker client always presents.
    public static let nativeClientRedirect = "https://login.microsoftonline.com/common/oauth2/nativeclient"
    /// The most apps configured at once (each program names its own; hostile callers could name many).
    static let maximumApps = 256

    private let store: AccountStore
    private let service: AccountService
    private let trace: FlowTrace
    private let version: String
    /// Sign-in hosts besides Microsoft's (the emulator the app is pointed at), as `host` (port
    /// 443) or `host:port`.
    private let extraHosts: Set<String>
    /// Who signs in (the window); nil: interactive requests fail with a sentence.
    public weak var signer: (any BrokerSignIn)?
    /// The authority each app was last configured with.
    private var authorities: [String: URL] = [:]
    /// Where the latest calls are kept for `sesame doctor` (nil: nowhere).
    private let callLog: URL?
    /// Whose sign-in the window shows.
    private let turn = BrokerSignInTurn()

    /// A broker over the account service's store, decisions and questions.
    /// - Parameters:
    ///   - version: what `getLinuxBrokerVersion` answers.
    ///   - extraHosts: sign-in hosts trusted besides Microsoft's (those of Sesame's own settings).
    ///   - callLog: where the latest calls (time, program, method, app, outcome; never a token) are
    ///     kept for `sesame doctor`.
    public init(
        service: AccountService, store: AccountStore, trace: FlowTrace, version: String, extraHosts: Set<String>, callLog: URL? = nil
    ) {
        self.callLog = callLog
        self.service = service
        self.store = store
        self.trace = trace
        self.version = version
        self.extraHosts = Set(extraHosts.map { $0.lowercased() })
    }

    /// The sign-in hosts of Sesame's own settings (an emulator the app is pointed at, say), with
    /// their ports (`127.0.0.1:8443`): a program may name them as its authority too.
    public static func settingsHosts(of store: AccountStore, accountTypes: [String]) async -> Set<String> {
        var hosts: Set<String> = []
        for accountType in accountTypes {
            guard let url = await store.configuration(forAccountType: accountType)?.authorizationURL, let host = url.host?.lowercased()
            else { continue }
            hosts.insert(url.port.map { "\(host):\($0)" } ?? host)
        }
        return hosts
    }

    /// The reply to `request` from `program`: a JSON string, the broker client's success or error
    /// shape (it may hold tokens: it goes to the caller only).
    public func answer(_ request: BrokerRequest, from program: ProgramIdentity, context: ProgramContext = ProgramContext()) async -> String
    {
        let reply = await reply(request, from: program, context: context)
        if let callLog { BrokerCallLog(file: callLog).append(request, program: program, reply: reply) }
        return reply
    }

    private func reply(_ request: BrokerRequest, from program: ProgramIdentity, context: ProgramContext) async -> String {
        do throws(BrokerFailure) {
            switch request {
            case .version:
                return BrokerReply.version(version)
            case .accounts(let clientID):
                var accounts = try await accounts(clientID: clientID, authority: nil, for: program).map(BrokerAccount.init)
                // This computer's user, for a browser's single sign-on the user allows (asked once).
                if BrokerSingleSignOn.browserClients.contains(clientID.lowercased()), let (device, _) = await singleSignOn.deviceAccount(),
                    !accounts.contains(where: { $0.homeAccountID == device.homeAccountID }),
                    (try? await singleSignOn.authorize(program, account: device, context: context, asking: true)) != nil
                {
                    accounts.append(device)
                }
                return BrokerReply.accounts(accounts)
            case .silent(let parameters):
                return try await silentToken(parameters, for: program, context: context).reply
            case .interactive(let parameters):
                return try await interactiveToken(parameters, for: program, context: context).reply
            case .removeAccount(let clientID, let account):
                try await remove(clientID: clientID, account: account, for: program)
                return BrokerReply.empty
            case .cancelInteractiveFlow:
                // Only the program whose sign-in is on screen may end it.
                guard turn.owner == program else {
                    throw BrokerFailure(.unexpected, tag: 0x5E5A_0112, "This program has no sign-in open in Sesame to cancel.")
                }
                signer?.cancelBrokerSignIn()
                return BrokerReply.empty
            case .prtSsoCookie(let request):
                return try await singleSignOn.cookie(request, for: program, context: context)
            case .signedHTTPRequest:
                // The same answer whether or not this computer is registered: no program learns that here.
                throw BrokerFailure(
                    .unexpected, tag: 0x5E5A_0018, "Sesame does not sign HTTP requests (proof-of-possession) yet: ask for a bearer token.")
            }
        } catch {
            trace.record("broker-refused", [("program", program.name), ("status", String(error.status.rawValue))])
            return error.reply
        }
    }

    // MARK: The methods

    private var singleSignOn: BrokerSingleSignOn { BrokerSingleSignOn(store: store, service: service, trace: trace) }

    private func accounts(clientID: String, authority: URL?, for program: ProgramIdentity) async throws(BrokerFailure) -> [Account] {
        let accountType = try await configure(clientID: clientID, authority: authority, redirectURI: nil, scopes: [])
        do {
            return try await store.accounts(ofType: accountType).filter {
                service.isTrusted(program) || service.access.maySee(program, accountType: accountType, homeAccountID: $0.homeAccountID)
            }
        } catch {
            throw BrokerFailure.from(error)
        }
    }

    private func silentToken(
        _ parameters: BrokerAuthParameters, for program: ProgramIdentity, context: ProgramContext
    ) async throws(BrokerFailure)
        -> BrokerTokenReply
    {
        let accountType = try await configure(parameters)
        let visible = try await accounts(clientID: parameters.clientID, authority: parameters.authority, for: program)
        guard let account = parameters.pick(from: visible) else {
            throw BrokerFailure(
                .interactionRequired, tag: 0x5E5A_0102,
                "Sesame has no sign-in for this app that this program may use without asking: sign in interactively.")
        }
        return try await token(for: account, accountType: accountType, parameters, program: program, context: context)
    }

    private func interactiveToken(
        _ parameters: BrokerAuthParameters, for program: ProgramIdentity, context: ProgramContext
    ) async throws(BrokerFailure)
        -> BrokerTokenReply
    {
        let accountType = try await configure(parameters)
        let decisions = service.access.all.filter { $0.program == program && $0.accountType == accountType }
        if !decisions.isEmpty, decisions.allSatisfy({ !$0.allowed }) {
            // Asked before and denied: no sign-in page for a program the user said no to.
            throw Self.denied
        }
        guard let signer else {
            throw BrokerFailure(.unexpected, tag: 0x5E5A_0103, "Sesame's window cannot be shown here, so it cannot sign you in.")
        }
        var query: [String: String] = [:]
        if !parameters.username.isEmpty { query["login_hint"] = parameters.username }
        if !parameters.claims.isEmpty { query["claims"] = parameters.claims }
        // This computer's PRT signs in with no page: only once the program is allowed (asked first).
        let allowedNow = try await deviceSignIn(accountType, parameters, query: query, program: program, context: context)
        if let account = allowedNow.account {
            return try await token(
                for: account, accountType: accountType, parameters, program: program, context: context, allowedNow: allowedNow.allowed)
        }
        do {
            try service.beginWaiting(program)
        } catch {
            throw BrokerFailure(.unexpected, tag: 0x5E5A_0104, error.message)
        }
        trace.record("broker-sign-in", [("program", program.name), ("clientId", parameters.clientID)])
        let account: Account
        await turn.take(for: program)
        do {
            account = try await signer.brokerSignIn(accountType: accountType, program: program, parameters: query)
        } catch {
            turn.release()
            service.waiting.remove(program)
            throw BrokerFailure.from(error)
        }
        turn.release()
        service.waiting.remove(program)
        return try await token(
            for: account, accountType: accountType, parameters, program: program, context: context, allowedNow: allowedNow.allowed)
    }

    /// The PRT's sign-in for an interactive request, the program asked about first
    /// (``AccountService/askBeforeDeviceSignIn(_:parameters:asking:)``): a refused program causes
    /// none. No account (the PRT cannot serve it): the window's page signs in, and the answer
    /// given here covers the token's question for the same user and permissions.
    private func deviceSignIn(
        _ accountType: String, _ parameters: BrokerAuthParameters, query: [String: String], program: ProgramIdentity,
        context: ProgramContext
    ) async throws(BrokerFailure) -> (account: Account?, allowed: AccessRequest?) {
        let resources = Set(ScopeResource.shown(parameters.requestedScopes).map(ScopeResource.of))
        let asked = AccessRequest(
            program: program, accountType: accountType, homeAccountID: "", username: parameters.username,
            resource: resources.count == 1 ? resources.first ?? "" : "", scopes: parameters.requestedScopes, app: parameters.clientID,
            context: context)
        let (applies, allowed): (Bool, AccessRequest?)
        do {
            (applies, allowed) = try await service.askBeforeDeviceSignIn(asked, parameters: query)
        } catch {
            throw error.kind == .busy ? BrokerFailure(.unexpected, tag: 0x5E5A_0104, error.message) : Self.denied
        }
        guard applies else { return (nil, nil) }
        // A policy's refusal is the window's to say, on its page.
        return ((try? await store.signInWithDevice(accountType: accountType, parameters: query)) ?? nil, allowed)
    }

    private func remove(clientID: String, account: BrokerAccount?, for program: ProgramIdentity) async throws(BrokerFailure) {
        let visible = try await accounts(clientID: clientID, authority: nil, for: program)
        guard let account, let match = visible.first(where: { $0.homeAccountID == account.homeAccountID }) else { return }
        do {
            // This app's tokens only: the user's other sign-ins (Sesame's, other apps') stay.
            try await store.remove(match)
        } catch {
            throw BrokerFailure.from(error)
        }
        trace.record("broker-signed-out", [("program", program.name), ("clientId", clientID)])
    }

    /// A token for `account` of the app, once the user allowed `program` what it carries.
    private func token(
        for account: Account, accountType: String, _ parameters: BrokerAuthParameters, program: ProgramIdentity,
        context: ProgramContext, allowedNow: AccessRequest? = nil
    ) async throws(BrokerFailure) -> BrokerTokenReply {
        let token: AccessToken
        do {
            token = try await store.accessToken(for: account, scopes: parameters.requestedScopes)
        } catch {
            throw BrokerFailure.from(error)
        }
        let granted = ScopeResource.shown(token.scopes).isEmpty ? parameters.requestedScopes : token.scopes
        let resources = Set(ScopeResource.shown(granted).map(ScopeResource.of))
        let request = AccessRequest(
            program: program, account: account, resource: resources.count == 1 ? resources.first ?? "" : "", scopes: granted,
            app: parameters.clientID, context: context)
        do {
            try await service.authorize(program, request, allowedNow: allowedNow)
        } catch {
            throw error.kind == .busy ? BrokerFailure(.unexpected, tag: 0x5E5A_0104, error.message) : Self.denied
        }
        let idToken: Secret?
        do {
            idToken = try await store.idToken(for: account)
        } catch {
            throw BrokerFailure.from(error)
        }
        guard let idToken, let claims = try? JSONWebToken(compact: idToken).claims else {
            throw BrokerFailure(.unexpected, tag: 0x5E5A_0105, "The identity service sent no ID token for this sign-in.")
        }
        var described = BrokerAccount(account)
        described.localAccountID = claims["oid"]?.stringValue ?? described.localAccountID
        described.realm = claims["tid"]?.stringValue ?? described.realm
        // Everything the app asked for that the grant covers, as the client checks it: the
        // identity service names Graph's scopes without their resource.
        let covered = parameters.requestedScopes.filter { wanted in
            token.scopes.isEmpty || token.scopes.contains { $0.equalsIgnoringCase(wanted) } || wanted.hasSuffix("/.default")
                || token.scopes.contains { "https://graph.microsoft.com/\($0)".equalsIgnoringCase(wanted) }
        }
        trace.record("broker-token", [("program", program.name), ("clientId", parameters.clientID)])
        return BrokerTokenReply(
            accessToken: token.secret, expiresOn: token.expiresOn, idToken: idToken, clientInfo: described.clientInfo,
            grantedScopes: Array(Set(token.scopes + covered)).sorted(), account: described)
    }

    // MARK: Apps

    /// Configures the store for the app `parameters` name (checked) and returns its account type.
    private func configure(_ parameters: BrokerAuthParameters) async throws(BrokerFailure) -> String {
        try await configure(
            clientID: parameters.clientID, authority: parameters.authority, redirectURI: parameters.redirectURI,
            scopes: parameters.requestedScopes)
    }

    private func configure(
        clientID: String, authority: URL?, redirectURI: String?, scopes: [String]
    ) async throws(BrokerFailure)
        -> String
    {
        guard Self.isClientID(clientID) else {
            throw BrokerFailure(.incorrectConfiguration, tag: 0x5E5A_0109, "The app's client id is not an application id (a GUID).")
        }
        let accountType = Self.accountTypePrefix + clientID.lowercased()
        let authority =
            try authority.map { url throws(BrokerFailure) in try checked(url) } ?? authorities[accountType]
            ?? URL(string: "https://login.microsoftonline.com/organizations")!
        if authorities[accountType] == nil, authorities.count >= Self.maximumApps { authorities.removeAll() }
        authorities[accountType] = authority
        let redirect = redirectURI.flatMap { URL(string: $0) }.flatMap { $0.scheme == nil ? nil : $0 }
        let configuration = AccountConfiguration(
            clientID: clientID.lowercased(),
            scopes: ["openid", "profile", "offline_access"]
                + scopes.filter { !["openid", "profile", "offline_access"].contains($0.lowercased()) },
            authorizationURL: authority.appending(path: "oauth2/v2.0/authorize"), tokenURL: authority.appending(path: "oauth2/v2.0/token"),
            redirectURL: redirect ?? URL(string: Self.nativeClientRedirect)!, storageGroup: Self.storageGroup)
        await store.setConfiguration(configuration, forAccountType: accountType)
        return accountType
    }

    /// `authority` when it is a Microsoft cloud's (or Sesame's own provider's) organizational
    /// authority, in its canonical form: `https://<host>/<tenant>` — https, no user name or
    /// password, the default port (a provider of Sesame's settings: the port it is configured
    /// with), no query or fragment, and the tenant one path segment of letters, digits, `.`, `-`
    /// and `_` once percent-decoded (so `a%2F..%2Fx` cannot climb out of it).
    func checked(_ authority: URL) throws(BrokerFailure) -> URL {
        guard let parts = URLComponents(url: authority, resolvingAgainstBaseURL: false) else {
            throw BrokerFailure.notCanonical("it is not an address")
        }
        let host = parts.host?.lowercased() ?? ""
        let segments = parts.percentEncodedPath.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            .filter { !$0.isEmpty }.map { FormEncoding.unescape($0) ?? "" }
        if host.hasSuffix(".b2clogin.com") || segments.first?.lowercased() == "tfp" {
            throw BrokerFailure(
                .incorrectConfiguration, tag: 0x5E5A_0107,
                "Azure AD B2C sign-ins do not go through the identity broker: let the app sign in with the browser instead.")
        }
        if segments.first?.lowercased() == "adfs" {
            throw BrokerFailure(
                .incorrectConfiguration, tag: 0x5E5A_0107,
                "AD FS sign-ins do not go through the identity broker: let the app sign in with the browser instead.")
        }
        guard parts.scheme?.lowercased() == "https" else { throw BrokerFailure.notCanonical("it is not an https address") }
        guard parts.user == nil, parts.password == nil else { throw BrokerFailure.notCanonical("it names a user before the host") }
        guard parts.query == nil, parts.fragment == nil else { throw BrokerFailure.notCanonical("it carries a query or a fragment") }
        let origin = parts.port.map { "\(host):\($0)" } ?? host
        let isMicrosoft = Self.microsoftHosts.contains(host) && (parts.port == nil || parts.port == 443)
        guard isMicrosoft || extraHosts.contains(origin) || (parts.port == 443 && extraHosts.contains(host)) else {
            if Self.microsoftHosts.contains(host) || extraHosts.contains(where: { $0.hasPrefix(host + ":") || $0 == host }) {
                throw BrokerFailure.notCanonical("it names port \(parts.port.map(String.init) ?? "") of the sign-in host")
            }
            throw BrokerFailure(
                .incorrectConfiguration, tag: 0x5E5A_0108,
                "Sesame signs in to Microsoft's identity platform only; this app names another authority (\(host)).")
        }
        guard segments.count == 1, let tenant = segments.first, (1...256).contains(tenant.utf8.count), tenant != ".", tenant != "..",
            tenant.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) })
        else { throw BrokerFailure.notCanonical("its tenant is not one name of letters, digits, dots, hyphens and underscores") }
        let port = isMicrosoft || parts.port == 443 ? "" : parts.port.map { ":\($0)" } ?? ""
        return URL(string: "https://\(host)\(port)/\(tenant)")!
    }

    private static func isClientID(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        return parts.map(\.count) == [8, 4, 4, 4, 12] && parts.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }

    private static let denied = BrokerFailure(.userCanceled, tag: 0x5E5A_0101, "You did not allow this program to use your account.")
}

extension BrokerAuthParameters {
    /// The account a token request is for: the one it names (by home or local account id, or user
    /// name), else the only one the program may see; nil: ask the user to sign in.
    func pick(from accounts: [Account]) -> Account? {
        if let named = account {
            return accounts.first {
                $0.homeAccountID == named.homeAccountID || (!named.localAccountID.isEmpty && $0.localAccountID == named.localAccountID)
                    || (!named.username.isEmpty && $0.username.equalsIgnoringCase(named.username))
            }
        }
        if !username.isEmpty { return accounts.first { $0.username.equalsIgnoringCase(username) } }
        return accounts.count == 1 ? accounts.first : nil
    }
}

extension BrokerFailure {
    /// An authority not in the canonical form, and why.
    static func notCanonical(_ reason: String) -> BrokerFailure {
        BrokerFailure(
            .incorrectConfiguration, tag: 0x5E5A_0111,
            "The app's authority is not a sign-in address Sesame accepts (https://login.microsoftonline.com/<tenant>): \(reason).")
    }

    /// The store's error as the client reads it: interaction required (the client then signs in
    /// interactively), the user's cancel, no network, or unexpected with Sesame's sentence.
    static func from(_ error: any Error) -> BrokerFailure {
        guard let error = error as? AccountStoreError else {
            return BrokerFailure(.unexpected, tag: 0x5E5A_0100, "Sesame's sign-in storage failed.")
        }
        let code = Int(error.serviceCode?.filter(\.isNumber) ?? "") ?? 0
        switch error.code {
        case .interactionRequired: return BrokerFailure(.interactionRequired, errorCode: code, tag: 0x5E5A_0102, error.message)
        case .cancelled: return BrokerFailure(.userCanceled, tag: 0x5E5A_0106, error.message)
        case .network: return BrokerFailure(.noNetwork, tag: 0x5E5A_0103, error.message)
        default: return BrokerFailure(.unexpected, errorCode: code, tag: 0x5E5A_0100, error.message)
        }
    }
}
