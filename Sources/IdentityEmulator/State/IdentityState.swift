import FoundationEssentials

/// Everything the identity service remembers between requests: sign-in transactions,
/// authorization codes, refresh tokens, sessions, consents and revocations. Codes, tokens and
/// session cookies are kept only as SHA-256 digests. Refresh tokens, sessions, consents,
/// revocations and B2C sign-ups survive a restart when a state directory is given.
actor IdentityState {
    /// An issued authorization code.
    struct CodeRecord: Sendable {
        var grant: Grant
        /// `redirect_uri` as sent on /authorize: the token request must send the same.
        var redirectURI: String
        var nonce: String?
        var codeChallenge: String?
        var codeChallengeMethod: String
        var issuedAt: Date
    }

    /// An issued refresh token.
    struct RefreshRecord: Codable, Sendable {
        var grant: Grant
        var issuedAt: Date
        var lastUsed: Date
        /// The chain of rotations it belongs to (one per sign-in).
        var family: String?
        /// Whether it was redeemed (strict rotation refuses it after that).
        var used: Bool?
    }

    enum CodeOutcome: Sendable {
        case valid(CodeRecord)
        case unknown
        case alreadyRedeemed
        case expired(CodeRecord)
    }

    enum RefreshOutcome: Sendable {
        case valid(RefreshRecord)
        case unknown
        case inactive(RefreshRecord)
        case revoked(RefreshRecord, validFrom: Date)
        /// Strict rotation: redeemed before, so its whole family is revoked now.
        case reused(RefreshRecord)
    }

    /// Codes live about ten minutes.
    static let codeLifetime: TimeInterval = 600
    /// Refresh tokens expire after 90 days without use (Entra), 14 days for B2C by default.
    static let refreshInactivity: TimeInterval = 90 * 86_400
    static let b2cRefreshLifetime: TimeInterval = 14 * 86_400
    static let transactionLifetime: TimeInterval = 3600

    private struct Persisted: Codable {
        var refreshTokens: [String: RefreshRecord] = [:]
        var sessions: [String: SignInSession] = [:]
        /// "userID|clientID" → consented permission keys.
        var consents: [String: Set<String>] = [:]
        /// userID → tokens issued before this are revoked (Graph's revokeSignInSessions).
        var tokensValidFrom: [String: Date] = [:]
        var signedUpUsers: [DirectoryUser] = []
        /// Rotation families revoked because one of their tokens was redeemed twice.
        var revokedFamilies: Set<String>?
    }

    private let file: URL?
    private var persisted = Persisted()
    private var transactions: [String: SignInTransaction] = [:]
    private var codes: [String: CodeRecord] = [:]
    private var redeemedCodes: [String: Date] = [:]
    /// Device authorizations (RFC 8628) by the digest of their `device_code`.
    var deviceAuthorizations: [String: DeviceAuthorization] = [:]
    /// Warnings about state files that could not be read.
    private(set) var warnings: [String] = []

    init(stateDirectory: URL?, policies: TenantPolicies = TenantPolicies()) {
        self.policies = policies
        file = stateDirectory?.appending(path: "identity-state.json")
        if let file {
            let (value, warning) = StateFile.read(Persisted.self, from: file)
            if let value { persisted = value }
            if let warning { warnings.append(warning) }
        }
    }

    /// B2C users created by sign-up in earlier runs.
    var signedUpUsers: [DirectoryUser] { persisted.signedUpUsers }

    private func save() {
        guard let file else { return }
        do {
            try StateFile.writeAtomically(JSONEncoder.state.encode(persisted), to: file)
        } catch {
            warnings.append("Could not save \(file.path): \(error)")
        }
    }

    // MARK: Transactions

    func begin(_ request: AuthorizeRequest, now: Date) -> SignInTransaction {
        transactions = transactions.filter { now.timeIntervalSince($0.value.createdAt) < Self.transactionLifetime }
        let transaction = SignInTransaction(id: Identifiers.opaque(bytes: 24), request: request, createdAt: now)
        transactions[transaction.id] = transaction
        return transaction
    }

    func transaction(_ id: String) -> SignInTransaction? { transactions[id] }

    func update(_ transaction: SignInTransaction) { transactions[transaction.id] = transaction }

    func finish(_ id: String) { transactions[id] = nil }

    // MARK: Federation

    /// The `AssertionID`s of federated providers' assertions already accepted, until they expire.
    private var acceptedAssertions: [String: Date] = [:]

    /// Records an assertion accepted for a sign-in; false when it was accepted before (a replay).
    func acceptAssertion(id: String, expiresAt: Date, now: Date) -> Bool {
        acceptedAssertions = acceptedAssertions.filter { $0.value > now }
        guard acceptedAssertions[id] == nil else { return false }
        acceptedAssertions[id] = expiresAt
        return true
    }

    // MARK: Codes

    func issueCode(_ record: CodeRecord) -> String {
        // Entra's codes start "0.A"; B2C's look like a JWE. Both are opaque to clients.
        let prefix =
            record.grant.policy == nil
            ? "0.A" : "eyJraWQiOiJjcGltY29yZV8wOTI1MjAxNSIsInZlciI6IjEuMCIsInppcCI6IkRlZmxhdGUiLCJzZXIiOiIxLjAifQ."
        let code = prefix + Identifiers.opaque(bytes: 48)
        codes[Identifiers.digest(code)] = record
        return code
    }

    /// Redeems a code once: a second attempt is `alreadyRedeemed`, a late one `expired`.
    func redeemCode(_ code: String, now: Date) -> CodeOutcome {
        let digest = Identifiers.digest(code)
        if redeemedCodes[digest] != nil { return .alreadyRedeemed }
        guard let record = codes.removeValue(forKey: digest) else { return .unknown }
        redeemedCodes[digest] = now
        redeemedCodes = redeemedCodes.filter { now.timeIntervalSince($0.value) < 86_400 }
        if now.timeIntervalSince(record.issuedAt) > Self.codeLifetime { return .expired(record) }
        return .valid(record)
    }

    // MARK: Refresh tokens

    /// A new refresh token for `grant`, in `family` (a rotation's) or a new one (a sign-in's).
    func issueRefreshToken(for grant: Grant, now: Date, family: String? = nil) -> String {
        let token =
            (grant.policy == nil ? "1.A" : "eyJraWQiOiJjcGltY29yZV8wOTI1MjAxNSIsInZlciI6IjEuMCIsInppcCI6IkRlZmxhdGUiLCJzZXIiOiIxLjAifQ.")
            + Identifiers.opaque(bytes: 64)
        persisted.refreshTokens[Identifiers.digest(token)] = RefreshRecord(
            grant: grant, issuedAt: now, lastUsed: now, family: family ?? Identifiers.opaque(bytes: 12), used: false)
        save()
        return token
    }

    /// Looks a refresh token up and marks it used. The old token stays valid after rotation, as on
    /// Entra; with `strict` rotation (`--refresh-token-reuse revoke-family`) a token works once,
    /// and redeeming it again revokes its whole family, as servers with reuse detection do.
    func useRefreshToken(_ token: String, now: Date, strict: Bool = false) -> RefreshOutcome {
        let digest = Identifiers.digest(token)
        guard var record = persisted.refreshTokens[digest] else { return .unknown }
        if let validFrom = persisted.tokensValidFrom[record.grant.userID], record.issuedAt < validFrom {
            return .revoked(record, validFrom: validFrom)
        }
        if let family = record.family, persisted.revokedFamilies?.contains(family) == true { return .reused(record) }
        if strict, record.used == true {
            if let family = record.family { persisted.revokedFamilies = (persisted.revokedFamilies ?? []).union([family]) }
            save()
            return .reused(record)
        }
        let limit = record.grant.policy == nil ? Self.refreshInactivity : Self.b2cRefreshLifetime
        let reference = record.grant.policy == nil ? record.lastUsed : record.issuedAt
        if now.timeIntervalSince(reference) > limit { return .inactive(record) }
        record.lastUsed = now
        record.used = true
        persisted.refreshTokens[digest] = record
        save()
        return .valid(record)
    }

    /// Revokes every refresh token and session of a user (Graph's `revokeSignInSessions`). The
    /// records stay, so a revoked token is told apart from a made-up one.
    func revokeSignInSessions(userID: String, now: Date) {
        persisted.tokensValidFrom[userID] = now
        persisted.sessions = persisted.sessions.filter { $0.value.userID != userID }
        save()
    }

    // MARK: Sessions

    func createSession(_ session: SignInSession) -> String {
        let cookie = Identifiers.opaque(bytes: 32)
        persisted.sessions[Identifiers.digest(cookie)] = session
        save()
        return cookie
    }

    func session(cookie: String) -> SignInSession? { persisted.sessions[Identifiers.digest(cookie)] }

    func endSession(cookie: String) {
        persisted.sessions[Identifiers.digest(cookie)] = nil
        save()
    }

    // MARK: Consent

    func consentedPermissions(userID: String, clientID: String) -> Set<String> {
        persisted.consents["\(userID)|\(clientID)"] ?? []
    }

    func grantConsent(_ permissions: Set<String>, userID: String, clientID: String) {
        persisted.consents["\(userID)|\(clientID)", default: []].formUnion(permissions)
        save()
    }

    /// Token requests still to answer 429 (throttling on command), and the Retry-After they send.
    private var throttle: (requests: Int, retryAfter: Int) = (0, 0)

    func startThrottling(requests: Int, retryAfter: Int) { throttle = (requests, retryAfter) }

    /// The Retry-After to answer this token request with, when it is throttled.
    func takeThrottle() -> Int? {
        guard throttle.requests > 0 else { return nil }
        throttle.requests -= 1
        return throttle.retryAfter
    }

    // MARK: The tenants' policies (kept in memory)

    private var policies: TenantPolicies
    /// Passwords changed after they expired, by user id (the directory's stay as generated).
    private var changedPasswords: [String: String] = [:]
    /// Users who registered for MFA (a phone) when a policy demanded it.
    private var mfaRegistered: Set<String> = []
    /// Users who asked an administrator to approve an app (the admin consent workflow).
    private(set) var adminConsentRequests: [AdminConsentRequest] = []

    func policy(for tenant: Tenant) -> TenantPolicy { policies.policy(for: tenant) }
    func replacePolicies(_ new: TenantPolicies) { policies = new }

    func changedPassword(userID: String) -> String? { changedPasswords[userID] }
    func changePassword(userID: String, to password: String) { changedPasswords[userID] = password }

    func isRegisteredForMFA(userID: String) -> Bool { mfaRegistered.contains(userID) }
    func registerForMFA(userID: String) { mfaRegistered.insert(userID) }

    func requestAdminConsent(_ request: AdminConsentRequest) {
        if adminConsentRequests.count < 1000 { adminConsentRequests.append(request) }
    }

    /// Users whose next refresh answers AADSTS50076 until they sign in with MFA (kept in memory).
    private var mfaDemanded: Set<String> = []

    func demandMFA(userID: String) { mfaDemanded.insert(userID) }
    func isMFADemanded(userID: String) -> Bool { mfaDemanded.contains(userID) }
    func mfaSatisfied(userID: String) { mfaDemanded.remove(userID) }

    /// Permissions an administrator granted a client for the whole tenant (kept in memory).
    private var adminConsents: [String: Set<String>] = [:]

    func adminConsentedPermissions(clientID: String) -> Set<String> {
        adminConsents[clientID] ?? []
    }

    func grantAdminConsent(_ permissions: Set<String>, clientID: String) {
        adminConsents[clientID, default: []].formUnion(permissions)
    }

    // MARK: B2C sign-up

    func recordSignUp(_ user: DirectoryUser) {
        persisted.signedUpUsers.append(user)
        save()
    }

    func recordPasswordChange(_ user: DirectoryUser) {
        if let index = persisted.signedUpUsers.firstIndex(where: { $0.id == user.id }) {
            persisted.signedUpUsers[index] = user
        } else {
            persisted.signedUpUsers.append(user)
        }
        save()
    }
}
