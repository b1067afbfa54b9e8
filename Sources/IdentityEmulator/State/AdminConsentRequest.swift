import FoundationEssentials

/// A user's request that an administrator approve an app ("Request approval" on "Approval
/// required", when the tenant's admin consent workflow is on).
struct AdminConsentRequest: Sendable, Equatable {
    let clientID: String
    let appName: String
    let userPrincipalName: String
    /// The user's reason, as typed (bounded).
    let justification: String
    let requestedAt: Date
}
