import FoundationEssentials
import SesameCore
import SesameSystem

/// `acquirePrtSsoCookie`, typed: the URL the browser is about to load (`ssoUrl`: Entra's sign-in
/// host, with the `sso_nonce` Entra asked for, or none), the account it names and the app it asks
/// as (linux-entra-sso: `d7b530a4-…`; Edge: `ecd6b820-…`).
public struct BrokerSSORequest: Sendable, Hashable {
    /// `ssoUrl`.
    public var ssoURL: URL
    /// `account.username` (or `authParameters.username`), when named.
    public var username: String?
    /// `authParameters.clientId`, when given.
    public var clientID: String?

    public init(ssoURL: URL, username: String?, clientID: String?) {
        self.ssoURL = ssoURL
        self.username = username
        self.clientID = clientID
    }

    static func parse(_ json: [String: JSONValue]) throws(BrokerFailure) -> BrokerSSORequest {
        guard let text = try BrokerRequest.string(json["ssoUrl"], "ssoUrl"), let url = URL(string: text),
            ["https", "http"].contains(url.scheme?.lowercased() ?? ""), url.host != nil, url.user == nil
        else { throw .contract("ssoUrl is missing or not a web address") }
        var parameters: [String: JSONValue] = [:]
        if case .object(let fields)? = json["authParameters"] { parameters = fields }
        var username = try BrokerAccount(json["account"])?.username
        if username == nil { username = try BrokerRequest.string(parameters["username"], "username") }
        return BrokerSSORequest(
            ssoURL: url, username: username.flatMap { $0.isEmpty ? nil : $0 },
            clientID: try BrokerRequest.string(parameters["clientId"], "clientId"))
    }
}

extension BrokerReply {
    /// `acquirePrtSsoCookie`'s answer, in both shapes clients read: `cookieItems` (brokers after
    /// 2.0.1) and the single `cookieName`/`cookieContent` (it holds the cookie: to the caller only).
    static func cookie(_ content: Secret) -> String {
        let item: [String: JSONValue] = [
            "cookieName": .string("x-ms-RefreshTokenCredential"), "cookieContent": .string(content.revealed),
        ]
        return BrokerJSON.text(.object(item.merging(["cookieItems": .array([.object(item)])]) { first, _ in first }))
    }
}

/// The broker's single sign-on as this computer (its Primary Refresh Token): the device's user
/// for a browser's `getAccounts`, and `acquirePrtSsoCookie`, each for a program the user allowed.
@MainActor
public struct BrokerSingleSignOn {
    let store: AccountStore
    let service: AccountService
    let trace: FlowTrace

    /// The question a program's first single sign-on request asks: one decision for every site of
    /// the organization, since a browser asks for the cookie wherever the user signs in. It is kept
    /// under the account type `device` (no account type of the settings is named so).
    public static let accountType = "device"
    public static let singleSignOnPermission = "Sign you in to every site and app of your organization as this computer (single sign-on)"

    /// The app ids browsers' single sign-on asks as (`getAccounts` then `acquirePrtSsoCookie`):
    /// linux-entra-sso's and Microsoft Edge's. To them `getAccounts` names this computer's user,
    /// once the user allowed the program; MSAL's programs find the user by signing in (the PRT
    /// signs them in with no page).
    static let browserClients: Set<String> = ["d7b530a4-7680-4c23-a8bf-c52c121d2e87", "ecd6b820-32c2-49b6-98a6-444530e5a77a"]

    /// The device's user, as the broker client knows an account; nil when this computer is not
    /// registered (or its registration predates the user's ids).
    func deviceAccount() async -> (BrokerAccount, DeviceIdentity.Status)? {
        guard let device = store.device, let status = try? await device.status(), let upn = status.userPrincipalName,
            let objectID = status.userObjectID, let tenantID = status.tenantID
        else { return nil }
        var account = BrokerAccount(
            homeAccountID: "\(objectID).\(tenantID)", localAccountID: objectID, environment: status.authority.host ?? "",
            realm: tenantID, username: upn)
        account.clientInfo = Base64URL.encode(Data(#"{"uid":"\#(objectID)","utid":"\#(tenantID)"}"#.utf8))
        return (account, status)
    }

    /// Whether `program` may have this computer's single sign-on: allowed before, or the user says
    /// so now (the access question, one per program).
    func authorize(
        _ program: ProgramIdentity, account: BrokerAccount, context: ProgramContext, asking: Bool
    ) async throws(BrokerFailure) {
        let request = AccessRequest(
            program: program, accountType: Self.accountType, homeAccountID: account.homeAccountID, username: account.username,
            resource: "", scopes: [Self.singleSignOnPermission], context: context)
        if !asking, !service.isTrusted(program) {
            guard case .allowed = service.access.decision(for: request) else {
                throw BrokerFailure(.userCanceled, tag: 0x5E5A_0120, "You did not allow this program to sign you in as this computer.")
            }
        }
        do {
            try await service.authorize(program, request)
        } catch {
            throw error.kind == .busy
                ? BrokerFailure(.unexpected, tag: 0x5E5A_0104, error.message)
                : BrokerFailure(.userCanceled, tag: 0x5E5A_0120, "You did not allow this program to sign you in as this computer.")
        }
    }

    /// `acquirePrtSsoCookie`: the PRT's cookie for the sign-in service's URL the browser loads, once
    /// the user allowed the program; never for another host.
    func cookie(
        _ request: BrokerSSORequest, for program: ProgramIdentity, context: ProgramContext
    ) async throws(BrokerFailure) -> String {
        guard let device = store.device, let (account, status) = await deviceAccount() else { throw Self.notRegistered }
        if let username = request.username, !username.equalsIgnoringCase(account.username) {
            throw BrokerFailure(.accountNotFound, tag: 0x5E5A_0121, "This computer is registered by another user than \(username).")
        }
        try await authorize(program, account: account, context: context, asking: true)
        // Checked here, not only by the device identity: its check is for the window's own view.
        guard Self.isSignInService(request.ssoURL, registeredWith: status.authority) else {
            throw BrokerFailure(
                .unexpected, tag: 0x5E5A_0123,
                "This computer's sign-in cookie is only for its sign-in service, \(status.authority.scheme ?? "https")://"
                    + "\(status.authority.host ?? "?"), not \(DisplayText.escaped(request.ssoURL.redactingQuery)).")
        }
        do {
            let cookie = try await device.ssoCookie(for: request.ssoURL)
            trace.record("broker-sso-cookie", [("program", program.name), ("host", request.ssoURL.host ?? "")])
            return BrokerReply.cookie(cookie)
        } catch {
            throw BrokerFailure(error.code == .refused ? .unexpected : .deviceNotRegistered, tag: 0x5E5A_0122, error.description)
        }
    }

    /// Whether `url` is on the origin of the sign-in service this computer is registered with
    /// (`authority`), the only place its cookie may go: `https` (plain `http` only where the
    /// authority itself is `http` on loopback: the emulator), no user name, the authority's host,
    /// and its port (a scheme's default port written out is the same port).
    public static func isSignInService(_ url: URL, registeredWith authority: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased(), scheme == authority.scheme?.lowercased(),
            scheme == "https" || (scheme == "http" && authority.isLoopback),
            url.user == nil, url.password == nil,
            let host = url.host?.lowercased(), host == authority.host?.lowercased()
        else { return false }
        let standard = scheme == "https" ? 443 : 80
        return (url.port ?? standard) == (authority.port ?? standard)
    }

    static let notRegistered = BrokerFailure(
        .deviceNotRegistered, tag: 0x5E5A_0017,
        "This computer is not registered with your organization, so Sesame has no device token (PRT) for single sign-on "
            + "cookies or signed requests: `sesame device register` registers it.")
}
