import FoundationEssentials

/// A user name and password checked outside the pages (ROPC, a PRT requested with a password):
/// the same directory, lockout and changed passwords as the password page, with the token
/// endpoint's errors. A federated user's password is their identity provider's to check, and a
/// user whose sign-in needs MFA cannot pass with a password alone.
struct PasswordCheck: EmulatorController {
    let services: EmulatorServices

    func user(_ userName: String, password: String, tenant: Tenant) async throws(ServiceError) -> DirectoryUser {
        let wrong = ServiceError.entra("invalid_grant", 50126, "Error validating credentials due to invalid username or password.")
        guard tenant.kind == .workforce, let user = directory(for: tenant).user(signInName: userName) else { throw wrong }
        if services.federatedDomain(forUserName: user.userPrincipalName, in: tenant) != nil { throw wrong }
        let policy = await state.policy(for: tenant)
        if policy.accountState(of: user.userPrincipalName)?.state == .locked { throw RefusalErrors.accountLocked }
        let changed = await state.changedPassword(userID: user.id)
        guard changed.map({ $0 == password }) ?? user.checks(password: password) else { throw wrong }
        if user.requiresMFA { throw .mfaRequired(resource: ScopeRequest.graphAppID) }
        return user
    }
}
