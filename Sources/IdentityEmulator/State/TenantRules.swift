import FoundationEssentials

/// What the tenants' administrators decided and what their users did about it, in memory: the
/// policies, passwords changed after they expired, users asked for MFA on their next refresh,
/// permissions an administrator granted an app for the whole tenant, and the users' requests for
/// that approval.
struct TenantRules: Sendable {
    private(set) var policies: TenantPolicies
    /// Passwords changed after they expired, by user id (the directory's stay as generated).
    private var changedPasswords: [String: String] = [:]
    /// Users whose next refresh answers AADSTS50076 until they sign in with MFA.
    private var mfaDemanded: Set<String> = []
    /// Permissions an administrator granted a client for the whole tenant.
    private var adminConsents: [String: Set<String>] = [:]
    /// Users who asked an administrator to approve an app (the admin consent workflow).
    private(set) var adminConsentRequests: [AdminConsentRequest] = []

    init(policies: TenantPolicies) { self.policies = policies }

    mutating func replacePolicies(_ new: TenantPolicies) { policies = new }

    func changedPassword(userID: String) -> String? { changedPasswords[userID] }
    mutating func changePassword(userID: String, to password: String) { changedPasswords[userID] = password }

    func isMFADemanded(userID: String) -> Bool { mfaDemanded.contains(userID) }
    mutating func demandMFA(userID: String) { mfaDemanded.insert(userID) }
    mutating func mfaSatisfied(userID: String) { mfaDemanded.remove(userID) }

    func adminConsented(clientID: String) -> Set<String> { adminConsents[clientID] ?? [] }
    mutating func grantAdminConsent(_ permissions: Set<String>, clientID: String) {
        adminConsents[clientID, default: []].formUnion(permissions)
    }

    /// Keeps a user's request for an administrator's approval (the first thousand).
    mutating func requestAdminConsent(_ request: AdminConsentRequest) {
        if adminConsentRequests.count < 1000 { adminConsentRequests.append(request) }
    }
}
