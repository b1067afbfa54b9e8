import FoundationEssentials

/// Everything the identity service remembers between requests, one owner per domain: sign-in
/// transactions (``SignInTransactions``), authorization codes (``AuthorizationCodes``), refresh
/// tokens and revocations (``RefreshTokens``), the pages' sessions (``BrowserSessions``), users'
/// consents and B2C sign-ups (``UserGrants``), the tenants' rules (``TenantRules``) and device
/// authorizations (``DeviceAuthorizations``). This actor serializes them and saves what survives
/// a restart — refresh tokens, sessions, consents, revocations, sign-ups — when a state directory
/// is given. Codes, tokens and session cookies are kept only as SHA-256 digests.
actor IdentityState {
    typealias CodeRecord = AuthorizationCodes.Record
    typealias CodeOutcome = AuthorizationCodes.Outcome
    typealias RefreshRecord = RefreshTokens.Record
    typealias RefreshOutcome = RefreshTokens.Outcome

    /// Codes live about ten minutes.
    static let codeLifetime = AuthorizationCodes.lifetime
    /// Refresh tokens expire after 90 days without use (Entra), 14 days for B2C by default.
    static let refreshInactivity = RefreshTokens.inactivity
    static let b2cRefreshLifetime = RefreshTokens.b2cLifetime

    /// What the state file holds: the persisted domains, their keys side by side as the file has
    /// always had them (`refreshTokens`, `tokensValidFrom`, `revokedFamilies`, `sessions`,
    /// `consents`, `signedUpUsers`).
    private struct Persisted: Codable {
        var refreshTokens = RefreshTokens()
        var sessions = BrowserSessions()
        var grants = UserGrants()
        var methods = MethodRegistrations()
        var passkeys = PasskeyCredentials()

        init() {}

        init(from decoder: any Decoder) throws {
            refreshTokens = try RefreshTokens(from: decoder)
            sessions = try BrowserSessions(from: decoder)
            grants = try UserGrants(from: decoder)
            methods = try MethodRegistrations(from: decoder)
            passkeys = try PasskeyCredentials(from: decoder)
        }

        func encode(to encoder: any Encoder) throws {
            try refreshTokens.encode(to: encoder)
            try sessions.encode(to: encoder)
            try grants.encode(to: encoder)
            try methods.encode(to: encoder)
            try passkeys.encode(to: encoder)
        }
    }

    private let file: URL?
    private var persisted = Persisted()
    private var transactions = SignInTransactions()
    private var codes = AuthorizationCodes()
    private var rules: TenantRules
    private var devices = DeviceAuthorizations()
    /// The passkey challenges issued and not yet answered (single use, five minutes).
    private var passkeyChallenges = PasskeyChallenges()
    /// The `AssertionID`s of federated providers' assertions already accepted, until they expire.
    private var acceptedAssertions: [String: Date] = [:]
    /// Token requests still to answer 429 (throttling on command), and the Retry-After they send.
    private var throttle: (requests: Int, retryAfter: Int) = (0, 0)
    /// Warnings about state files that could not be read.
    private(set) var warnings: [String] = []

    init(stateDirectory: URL?, policies: TenantPolicies = TenantPolicies()) {
        rules = TenantRules(policies: policies)
        file = stateDirectory?.appending(path: "identity-state.json")
        if let file {
            let (value, warning) = StateFile.read(Persisted.self, from: file)
            if let value { persisted = value }
            if let warning { warnings.append(warning) }
        }
    }

    /// Runs `change` on the persisted domains and saves them.
    private func persisting<T>(_ change: (inout Persisted) -> T) -> T {
        let result = change(&persisted)
        guard let file else { return result }
        do {
            try StateFile.writeAtomically(JSONEncoder.state.encode(persisted), to: file)
        } catch {
            warnings.append("Could not save \(file.path): \(error)")
        }
        return result
    }

    // MARK: Transactions and codes

    func begin(_ request: AuthorizeRequest, now: Date) -> SignInTransaction { transactions.begin(request, now: now) }
    func transaction(_ id: String) -> SignInTransaction? { transactions[id] }
    func update(_ transaction: SignInTransaction) { transactions.update(transaction) }
    func finish(_ id: String) { transactions.finish(id) }

    func issueCode(_ record: CodeRecord) -> String { codes.issue(record) }
    /// Redeems a code once: a second attempt is `alreadyRedeemed`, a late one `expired`.
    func redeemCode(_ code: String, now: Date) -> CodeOutcome { codes.redeem(code, now: now) }

    /// Records an assertion accepted for a sign-in; false when it was accepted before (a replay).
    func acceptAssertion(id: String, expiresAt: Date, now: Date) -> Bool {
        acceptedAssertions = acceptedAssertions.filter { $0.value > now }
        guard acceptedAssertions[id] == nil else { return false }
        acceptedAssertions[id] = expiresAt
        return true
    }

    // MARK: Refresh tokens and sessions

    /// A new refresh token for `grant`, in `family` (a rotation's) or a new one (a sign-in's).
    func issueRefreshToken(for grant: Grant, now: Date, family: String? = nil) -> String {
        persisting { $0.refreshTokens.issue(for: grant, now: now, family: family) }
    }

    /// ``RefreshTokens/use(_:now:strict:)`` (`strict`: `--refresh-token-reuse revoke-family`).
    func useRefreshToken(_ token: String, now: Date, strict: Bool = false) -> RefreshOutcome {
        persisting { $0.refreshTokens.use(token, now: now, strict: strict) }
    }

    /// Revokes every refresh token and session of a user (Graph's `revokeSignInSessions`).
    func revokeSignInSessions(userID: String, now: Date) {
        persisting {
            $0.refreshTokens.revoke(userID: userID, now: now)
            $0.sessions.end(userID: userID)
        }
    }

    func createSession(_ session: SignInSession) -> String { persisting { $0.sessions.create(session) } }
    func session(cookie: String) -> SignInSession? { persisted.sessions[cookie: cookie] }
    func endSession(cookie: String) { persisting { $0.sessions.end(cookie: cookie) } }

    // MARK: Consents and B2C sign-ups

    func consentedPermissions(userID: String, clientID: String) -> Set<String> {
        persisted.grants.consented(userID: userID, clientID: clientID)
    }

    func grantConsent(_ permissions: Set<String>, userID: String, clientID: String) {
        persisting { $0.grants.consent(permissions, userID: userID, clientID: clientID) }
    }

    /// B2C users created by sign-up in earlier runs.
    var signedUpUsers: [DirectoryUser] { persisted.grants.signedUpUsers }
    func recordSignUp(_ user: DirectoryUser) { persisting { $0.grants.signedUp(user) } }
    func recordPasswordChange(_ user: DirectoryUser) { persisting { $0.grants.passwordChanged(user) } }

    // MARK: Throttling

    func startThrottling(requests: Int, retryAfter: Int) { throttle = (requests, retryAfter) }

    /// The Retry-After to answer this token request with, when it is throttled.
    func takeThrottle() -> Int? {
        guard throttle.requests > 0 else { return nil }
        throttle.requests -= 1
        return throttle.retryAfter
    }

    // MARK: The tenants' rules (kept in memory)

    func policy(for tenant: Tenant) -> TenantPolicy { rules.policies.policy(for: tenant) }
    func replacePolicies(_ new: TenantPolicies) { rules.replacePolicies(new) }
    func changedPassword(userID: String) -> String? { rules.changedPassword(userID: userID) }
    func changePassword(userID: String, to password: String) { rules.changePassword(userID: userID, to: password) }
    func demandMFA(userID: String) { rules.demandMFA(userID: userID) }
    func isMFADemanded(userID: String) -> Bool { rules.isMFADemanded(userID: userID) }
    func mfaSatisfied(userID: String) { rules.mfaSatisfied(userID: userID) }
    func adminConsentedPermissions(clientID: String) -> Set<String> { rules.adminConsented(clientID: clientID) }
    func grantAdminConsent(_ permissions: Set<String>, clientID: String) { rules.grantAdminConsent(permissions, clientID: clientID) }
    func requestAdminConsent(_ request: AdminConsentRequest) { rules.requestAdminConsent(request) }
    /// Users who asked an administrator to approve an app (the admin consent workflow).
    var adminConsentRequests: [AdminConsentRequest] { rules.adminConsentRequests }

    // MARK: Users' authentication methods (kept in the state file)

    /// What `user` registered (the directory's default when nothing was).
    func methods(of user: DirectoryUser) -> UserMethods { persisted.methods.methods(of: user) }

    /// Changes what `user` registered.
    func updateMethods(of user: DirectoryUser, _ change: @Sendable (inout UserMethods) -> Void) {
        persisting { $0.methods.update(user, change) }
    }

    /// Whether `user` registered any method for MFA (what "More information required" asks for).
    func isRegisteredForMFA(_ user: DirectoryUser, now: Date) -> Bool {
        !persisted.methods.methods(of: user).methods(now: now, hasPasskey: hasPasskey(userID: user.id)).isEmpty
    }

    /// Uses a Temporary Access Pass of `user`; false when none matches or it is no longer usable.
    func redeemPass(_ pass: String, user: DirectoryUser, now: Date) -> Bool {
        persisting { $0.methods.redeemPass(pass, user: user, now: now) }
    }

    // MARK: Passkeys

    /// Whether `userID` registered a passkey.
    func hasPasskey(userID: String) -> Bool { !passkeys(userID: userID).isEmpty }

    /// `userID`'s passkeys, oldest first.
    func passkeys(userID: String) -> [PasskeyCredential] {
        persisted.passkeys.credentials(forUser: PasskeyCredentials.userHandle(userID: userID))
    }

    /// Removes one of `userID`'s passkeys (`id`: ``PasskeyCredential/id``, base64url); false when it has none by that id.
    func deletePasskey(userID: String, id: String) -> Bool {
        guard let bytes = WebAuthnBase64URL.decode(id), let credential = persisted.passkeys.credential(id: bytes),
            credential.userHandle.elementsEqual(PasskeyCredentials.userHandle(userID: userID))
        else { return false }
        return persisting { $0.passkeys.remove(id: bytes) }
    }

    /// A fresh challenge for a registration or a sign-in (`userID` nil: username-less).
    func issuePasskeyChallenge(for ceremony: PasskeyChallenges.Ceremony, userID: String?, now: Date) -> PasskeyChallenges.Issued {
        passkeyChallenges.issue(for: ceremony, userHandle: userID.map(PasskeyCredentials.userHandle), now: now)
    }

    /// Verifies a registration with `relyingParty` and keeps the credential.
    func registerPasskey(
        _ response: RegistrationResponseJSON, relyingParty: WebAuthnRelyingParty, displayName: String, now: Date
    )
        throws(WebAuthnRefusal) -> PasskeyCredential
    {
        var passkeys = persisted.passkeys
        let kept = try passkeys.register(
            response, relyingParty: relyingParty, challenges: &passkeyChallenges, displayName: displayName, now: now)
        persisting { $0.passkeys = passkeys }
        return kept
    }

    /// Verifies a sign-in with `relyingParty` and keeps the credential's new counter.
    func verifyPasskeyAssertion(
        _ response: AuthenticationResponseJSON, relyingParty: WebAuthnRelyingParty, now: Date
    )
        throws(WebAuthnRefusal) -> VerifiedAssertion
    {
        var credentials = persisted.passkeys
        let verified = try relyingParty.verifyAssertion(response, challenges: &passkeyChallenges, credentials: &credentials, now: now)
        persisting { $0.passkeys = credentials }
        return verified
    }

    // MARK: Device authorizations (RFC 8628)

    /// Starts a device authorization; returns its `device_code` (kept only as a digest).
    func beginDeviceAuthorization(_ authorization: DeviceAuthorization) -> String { devices.begin(authorization) }

    /// The pending device authorization a typed `user_code` names, with its key.
    func deviceAuthorization(userCode: String, now: Date) -> (key: String, authorization: DeviceAuthorization)? {
        devices.find(userCode: userCode, now: now)
    }

    func approveDevice(key: String, grant: Grant) { devices.approve(key: key, grant: grant) }
    func declineDevice(key: String, refusal: ServiceError? = nil) { devices.decline(key: key, refusal: refusal) }
    func pollDevice(deviceCode: String, now: Date) -> DevicePoll { devices.poll(deviceCode: deviceCode, now: now) }
}
