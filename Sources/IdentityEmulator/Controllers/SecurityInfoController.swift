import FoundationEssentials
import Hummingbird
import Synchronization

/// "Security info" (Microsoft's My Sign-Ins, https://mysignins.microsoft.com/security-info),
/// served at the emulator's own `/security-info`: the signed-in user's methods, with Delete on
/// each and "+ Add sign-in method" (Microsoft Authenticator, an authenticator app's TOTP, a phone
/// for texts, a passkey or security key).
///
/// Who is signed in is the browser's Entra session (`ESTSAUTH`) at contoso; without one the page
/// starts a sign-in for Microsoft's "My Signins" app, whose code comes back here. As Entra does, a
/// change needs a session that passed MFA (unless the user has nothing registered yet, to onboard),
/// and a passkey one that passed it within five minutes. Every form carries the session's
/// anti-forgery value (`token`).
struct SecurityInfoController: EmulatorController {
    let services: EmulatorServices
    /// The setups under way (an app's secret not yet confirmed, a texted code, a test notification).
    let setups: SecurityInfoSetups

    init(services: EmulatorServices, setups: SecurityInfoSetups = SecurityInfoSetups()) {
        self.services = services
        self.setups = setups
    }

    static let path = "/security-info"
    /// How long a passkey registration may follow the MFA that allows it (Entra: "within the past
    /// five minutes").
    static let passkeyMFAWindow: TimeInterval = 5 * 60
    /// The built-in "Multifactor authentication" strength, named in the claims of a sign-in again.
    static let mfaClaims = #"{"access_token":{"capolids":{"essential":true,"values":["00000000-0000-0000-0000-000000000002"]}}}"#

    /// The signed-in user of a request: the contoso session's, with the page's anti-forgery value.
    struct SignedIn: Sendable {
        let user: DirectoryUser
        let session: SignInSession
        /// The `token` field every form carries: a digest of the session cookie, so another site
        /// (which cannot read the cookie) cannot make one.
        let token: String
    }

    /// The contoso session the browser's `ESTSAUTH` cookie names, or nil.
    func signedIn(_ request: Request) async -> SignedIn? {
        guard let cookie = request.cookies[SignInController.workforceCookie]?.value, cookie.count <= 256,
            let session = await state.session(cookie: cookie), session.tenantID == contoso.tenant.id,
            let user = contoso.user(id: session.userID)
        else { return nil }
        return SignedIn(user: user, session: session, token: Identifiers.digest("security-info|" + cookie))
    }

    /// Whether `sent` is the session's anti-forgery value (compared in constant time).
    func tokenMatches(_ sent: String?, _ signedIn: SignedIn) -> Bool {
        guard let sent, sent.utf8.count == signedIn.token.utf8.count else { return false }
        return zip(sent.utf8, signedIn.token.utf8).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// Why `signedIn` may not register a passkey now (its sign-in did not pass MFA within the
    /// last five minutes), or nil when it may.
    func passkeyRefusal(_ signedIn: SignedIn) -> String? {
        guard signedIn.session.methods.contains("mfa"),
            clock.now.timeIntervalSince(signedIn.session.authTime) <= Self.passkeyMFAWindow
        else { return SecurityInfoPages.passkeyNeedsRecentMFA }
        return nil
    }

    /// Why `signedIn` may not change its methods (its sign-in did not pass MFA, and it has
    /// something registered already), or nil when it may.
    func changeRefusal(_ signedIn: SignedIn, adding: Bool) async -> String? {
        if signedIn.session.methods.contains("mfa") { return nil }
        let registered = await registeredMethods(signedIn.user).filter { $0 != .temporaryAccessPass }
        return adding && registered.isEmpty ? nil : SecurityInfoPages.needsMFA
    }

    /// Where the browser signs in first (or again, demanding MFA): Microsoft's "My Signins" app at
    /// contoso, its code coming back to `/security-info`.
    func signInLocation(again user: DirectoryUser? = nil) -> String {
        var fields = FormFields([
            ("client_id", ClientRegistration.mySignInsClientID), ("response_type", "code"), ("redirect_uri", root + Self.path),
            ("scope", "openid profile"), ("response_mode", "query"), ("state", Identifiers.opaque(bytes: 16)),
        ])
        if let user {
            fields.append("prompt", "login")
            fields.append("login_hint", user.userPrincipalName)
            fields.append("claims", Self.mfaClaims)
        }
        return "/\(contoso.tenant.domain)/oauth2/v2.0/authorize?\(fields.encoded)"
    }

    // MARK: GET /security-info

    /// The methods, or the sign-in first. The `code` a sign-in brings back is not needed: the
    /// session cookie it set says who this is.
    func show(_ request: Request) async -> Response {
        if services.isFederationHost(request) { return ADFSController.notFound(services: services) }
        guard let signedIn = await signedIn(request) else { return .found(signInLocation()) }
        return await overview(signedIn, notice: nil, error: nil)
    }

    // MARK: POST /security-info

    /// A form of the page: `action` = `add` | `delete` | `authenticator-scanned` |
    /// `authenticator-test` | `app-scanned` | `app-verify` | `phone-number` | `phone-verify` |
    /// `cancel`, with `token`.
    func change(_ request: Request) async throws -> Response {
        if services.isFederationHost(request) { return ADFSController.notFound(services: services) }
        guard let signedIn = await signedIn(request) else { return .found(Self.path) }
        let form = FormFields(encoded: try await request.bodyText(limit: 8 * 1024))
        guard tokenMatches(form["token"], signedIn) else {
            return .html(SecurityInfoPages.forged(), status: .forbidden)
        }
        let action = form["action"] ?? ""
        let method = form["method"] ?? ""
        let adding = SecurityInfoAdding(controller: self)
        switch action {
        case "add": return await adding.add(method, signedIn)
        case "delete": return await delete(method, signedIn)
        case "authenticator-scanned": return await adding.authenticatorScanned(signedIn)
        case "authenticator-test": return await adding.authenticatorTest(signedIn)
        case "app-scanned": return await adding.appScanned(signedIn)
        case "app-verify": return await adding.appVerify(form.nonEmpty("otc") ?? "", signedIn)
        case "phone-number": return await adding.phoneNumber(form.nonEmpty("phone") ?? "", signedIn)
        case "phone-verify": return await adding.phoneVerify(form.nonEmpty("otc") ?? "", signedIn)
        default:
            adding.cancelSetups(signedIn)
            return await overview(signedIn, notice: nil, error: nil)
        }
    }

    /// `POST /security-info/authenticator/status` (form `token`): where the test notification
    /// stands, as `EndAuth` answers (`{"ResultValue": "AuthenticationPending"}`…), for the page's script.
    func authenticatorStatus(_ request: Request) async throws -> Response {
        guard let signedIn = await signedIn(request) else { return .json(.object([("ResultValue", .string("InvalidSession"))])) }
        let form = FormFields(encoded: try await request.bodyText(limit: 4 * 1024))
        guard tokenMatches(form["token"], signedIn) else { return .json(.object([("ResultValue", .string("InvalidSession"))])) }
        let outcome = await authenticator.pushOutcome(
            transactionID: SecurityInfoAdding(controller: self).pushID(signedIn), now: clock.now,
            timeout: configuration.authenticatorTimeout)
        let value =
            switch outcome {
            case .pending?: "AuthenticationPending"
            case .approved?: "Success"
            case .denied?: "PhoneAppDenied"
            case .fraudReported?: "PhoneAppFraudReported"
            case .timedOut?: "PhoneAppNoResponse"
            case nil: "InvalidSession"
            }
        return .json(.object([("ResultValue", .string(value))]))
    }

    // MARK: The list

    func registeredMethods(_ user: DirectoryUser) async -> [AuthenticationMethod] {
        let hasPasskey = await state.hasPasskey(userID: user.id)
        return await state.methods(of: user).methods(now: clock.now, hasPasskey: hasPasskey)
    }

    func overview(_ signedIn: SignedIn, notice: String?, error: String?, signInAgain: Bool = false) async -> Response {
        let user = signedIn.user
        let now = clock.now
        let registered = await state.methods(of: user)
        let policy = await state.policy(for: contoso.tenant).authenticationMethods
        var rows: [SecurityInfoPages.Row] = []
        if registered.sms { rows.append(.init(method: .sms, detail: user.maskedMobile)) }
        if let device = registered.authenticatorDevice { rows.append(.init(method: .microsoftAuthenticator, detail: device)) }
        if registered.softwareOathSecret != nil { rows.append(.init(method: .softwareOath, detail: nil)) }
        if let pass = registered.usablePass(now: now) {
            let expiry = pass.startDateTime.addingTimeInterval(Double(pass.lifetimeInMinutes) * 60)
            rows.append(.init(method: .temporaryAccessPass, detail: "Expires \(expiry.entraTimestamp)"))
        }
        for passkey in await state.passkeys(userID: user.id) {
            rows.append(.init(method: .fido2, detail: passkey.displayName, key: "passkey:" + passkey.id))
        }
        rows.sort { $0.method < $1.method }
        let preferred = rows.map(\.method).filter { $0 != .temporaryAccessPass }.min()
        var offered = AuthenticationMethod.allCases.filter { policy.enabled.contains($0) && $0 != .temporaryAccessPass }
        if registered.sms { offered.removeAll { $0 == .sms } }
        return .html(
            SecurityInfoPages.overview(
                username: user.userPrincipalName, token: signedIn.token, rows: rows,
                defaultMethod: preferred.map { SecurityInfoPages.defaultText($0, maskedPhone: user.maskedMobile) },
                offered: offered, onlyPass: rows.allSatisfy { $0.method == .temporaryAccessPass }, notice: notice, error: error,
                signInAgain: signInAgain ? signInLocation(again: user) : nil))
    }

    /// The list again with why the change was refused, and a sign-in that passes MFA.
    func refused(_ sentence: String, _ signedIn: SignedIn) async -> Response {
        var response = await overview(signedIn, notice: nil, error: sentence, signInAgain: true)
        response.status = .forbidden
        return response
    }

    // MARK: Deleting

    static let notRegistered = "That sign-in method isn't registered for your account."

    private func delete(_ name: String, _ signedIn: SignedIn) async -> Response {
        if let sentence = await changeRefusal(signedIn, adding: false) { return await refused(sentence, signedIn) }
        let user = signedIn.user
        let registered = await state.methods(of: user)
        let notice: String
        switch name {
        case "sms" where registered.sms:
            await state.updateMethods(of: user) { $0.sms = false }
            notice = "Phone deleted"
        case "microsoftAuthenticator" where registered.authenticatorDevice != nil:
            await state.updateMethods(of: user) { $0.authenticatorDevice = nil }
            notice = "Microsoft Authenticator deleted"
        case "softwareOath" where registered.softwareOathSecret != nil:
            await state.updateMethods(of: user) {
                $0.softwareOathSecret = nil
                $0.softwareOathLastStep = nil
            }
            notice = "Authenticator app deleted"
        case "temporaryAccessPass" where !registered.temporaryAccessPasses.isEmpty:
            await state.updateMethods(of: user) { $0.temporaryAccessPasses = [] }
            notice = "Temporary Access Pass deleted"
        case let key where key.hasPrefix("passkey:"):
            guard key.count <= 1_100, await state.deletePasskey(userID: user.id, id: String(key.dropFirst("passkey:".count))) else {
                return await overview(signedIn, notice: nil, error: Self.notRegistered)
            }
            notice = "Passkey deleted"
        default:
            return await overview(signedIn, notice: nil, error: Self.notRegistered)
        }
        return await overview(signedIn, notice: notice, error: nil)
    }
}

/// The setups Security info has under way, by session (its anti-forgery value): an authenticator
/// app's secret waiting for its first code, a texted code waiting to be typed. In memory only; a
/// setup is forgotten after 15 minutes.
final class SecurityInfoSetups: Sendable {
    /// One session's setup.
    struct Setup: Sendable {
        var appSecret: TOTPSecret?
        var phoneCode: String?
        var phoneAttempts = 0
        var startedAt: Date
    }

    static let lifetime: TimeInterval = 15 * 60
    /// At most this many setups are kept (the oldest go first).
    static let capacity = 1_000

    private let setups = Mutex<[String: Setup]>([:])

    init() {}

    func setup(_ key: String, now: Date) -> Setup? {
        setups.withLock { all in
            guard let setup = all[key], now.timeIntervalSince(setup.startedAt) < Self.lifetime else { return nil }
            return setup
        }
    }

    func update(_ key: String, now: Date, _ change: (inout Setup) -> Void) {
        setups.withLock { all in
            all = all.filter { now.timeIntervalSince($0.value.startedAt) < Self.lifetime }
            if all[key] == nil, all.count >= Self.capacity, let oldest = all.min(by: { $0.value.startedAt < $1.value.startedAt }) {
                all[oldest.key] = nil
            }
            var setup = all[key] ?? Setup(startedAt: now)
            change(&setup)
            all[key] = setup
        }
    }

    func end(_ key: String) { _ = setups.withLock { $0.removeValue(forKey: key) } }
}
