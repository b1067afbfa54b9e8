import FoundationEssentials
import HTTPTypes
import Hummingbird

/// The sign-in pages' steps, one small function per page posted to `/{tenant}/login`: what the
/// form said, the transaction it belongs to, and what the service answers (the next page, the
/// finish or a refusal, through ``SignInFlow``). ``SignInController/login(_:tenantSegment:)``
/// picks the step by the form's `step`.
struct LoginSteps: EmulatorController {
    let services: EmulatorServices
    /// The posted form.
    let form: FormFields
    /// `ctx`: the transaction's id.
    let ctx: String
    var transaction: SignInTransaction
    /// The session cookie the browser sent, if any.
    let cookie: String?
    let now: Date
    var authorization: AuthorizeRequest { transaction.request }
    var endpoint: IdentityEndpoint { authorization.endpoint }
    /// Where the pages post.
    var action: String { SignInController(services: services).loginAction(endpoint) }
    var users: Directory { directory(for: endpoint.tenant) }
    var flow: SignInFlow { SignInFlow(services: services) }

    /// The user name: home realm discovery, another organization's user, or the password page.
    mutating func username() async -> Response {
        let policy = await state.policy(for: endpoint.tenant)
        if form["action"] == "sign-in-options" { return PasskeyController(services: services).signInOptions(transaction) }
        guard let name = form.nonEmpty(SignInPageIDs.Fields.userName) else {
            return .html(
                SignInPages.username(
                    action: action, ctx: ctx, hint: nil, error: "Enter a valid email address, phone number, or Skype name."))
        }
        transaction.passwordVerified = false
        transaction.federationVerified = false
        transaction.secondFactor = nil
        transaction.passwordlessMethod = nil
        transaction.fromSession = false
        // Home realm discovery: a federated domain's users sign in at their organisation's
        // identity provider, whether or not Entra knows them yet (the provider decides).
        if let domain = services.federatedDomain(forUserName: name, in: endpoint.tenant) {
            transaction.userID = users.user(signInName: name)?.id
            transaction.federatedUserName = name
            await state.update(transaction)
            return FederationController(services: services).homeRealmRedirect(transaction, to: domain)
        }
        transaction.federatedUserName = nil
        transaction.foreignUserName = nil
        if policy.isFromOtherTenant(name) {
            // Another organization's user: their own tenant asks the password, then this one refuses.
            transaction.userID = nil
            transaction.foreignUserName = name
            await state.update(transaction)
            return .html(SignInPages.password(action: action, ctx: ctx, username: name, error: nil))
        }
        guard let user = users.user(signInName: name) else {
            transaction.userID = nil
            await state.update(transaction)
            return .html(
                SignInPages.username(
                    action: action, ctx: ctx, hint: name,
                    error: "This username may be incorrect. Make sure you typed it correctly. Otherwise, contact your admin."))
        }
        transaction.userID = user.id
        await state.update(transaction)
        // A user with a Temporary Access Pass is asked for it in place of the password.
        if policy.authenticationMethods.enabled.contains(.temporaryAccessPass),
            await state.methods(of: user).usablePass(now: now) != nil
        {
            return .html(SecondFactorPages.temporaryAccessPass(action: action, ctx: ctx, username: user.userPrincipalName, error: nil))
        }
        return .html(SignInPages.password(action: action, ctx: ctx, username: user.userPrincipalName, error: nil))
    }

    /// Another organization's user typed a password: their tenant would check it; this one refuses them.
    func foreignPassword() async -> Response {
        let name = transaction.foreignUserName ?? ""
        await state.finish(ctx)
        let failure = RefusalErrors.userFromOtherTenant(
            name, home: Identifiers.guid(), tenant: endpoint.tenant, clientID: authorization.client.clientID,
            appName: authorization.client.name)
        return await flow.refusalPage(failure, transaction, username: name, now: now)
    }

    /// The password, checked (smart lockout, a disabled account, an expired password first).
    mutating func password() async -> Response {
        let policy = await state.policy(for: endpoint.tenant)
        // A federated user's password is the identity provider's to check, never Entra's.
        guard transaction.federatedUserName == nil, let user = transaction.userID.flatMap(users.user(id:)),
            services.federatedDomain(forUserName: user.userPrincipalName, in: endpoint.tenant) == nil
        else {
            return flow.restart(transaction, action: action)
        }
        if form["action"] == "back" {
            return .html(SignInPages.username(action: action, ctx: ctx, hint: user.userPrincipalName, error: nil))
        }
        guard let password = form[SignInPageIDs.Fields.password], !password.isEmpty else {
            return .html(
                SignInPages.password(action: action, ctx: ctx, username: user.userPrincipalName, error: "Please enter your password."))
        }
        let accountState = policy.accountState(of: user.userPrincipalName)
        if accountState?.state == .locked {
            // Smart lockout answers the same whatever the password: nothing to guess from.
            await state.finish(ctx)
            return await flow.refusalPage(RefusalErrors.accountLocked, transaction, username: user.userPrincipalName, now: now)
        }
        let changed = await state.changedPassword(userID: user.id)
        guard changed.map({ $0 == password }) ?? user.checks(password: password) else {
            return .html(
                SignInPages.password(
                    action: action, ctx: ctx, username: user.userPrincipalName,
                    error: "Your account or password is incorrect. If you don't remember your password, reset it now."))
        }
        if accountState?.state == .disabled {
            await state.finish(ctx)
            return await flow.refusalPage(RefusalErrors.accountDisabled, transaction, username: user.userPrincipalName, now: now)
        }
        if accountState?.state == .passwordExpired, changed == nil {
            transaction.passwordVerified = false
            await state.update(transaction)
            return .html(RefusalPages.updatePassword(action: action, ctx: ctx, username: user.userPrincipalName, error: nil))
        }
        transaction.passwordVerified = true
        return await flow.afterFirstFactor(transaction, user: user)
    }

    /// A new password for an expired one.
    mutating func passwordUpdate() async -> Response {
        guard let user = transaction.userID.flatMap(users.user(id:)) else { return flow.restart(transaction, action: action) }
        let (current, new) = (form[SignInPageIDs.Fields.currentPassword] ?? "", form[SignInPageIDs.Fields.newPassword] ?? "")
        func again(_ error: String) -> Response {
            .html(RefusalPages.updatePassword(action: action, ctx: ctx, username: user.userPrincipalName, error: error))
        }
        guard user.checks(password: current) else { return again("Your current password is incorrect.") }
        guard new == form[SignInPageIDs.Fields.confirmPassword] else { return again("The passwords don't match.") }
        guard new.count >= 8, new != current, new.contains(where: \.isNumber), new.contains(where: \.isLetter) else {
            return again("Your new password must be at least 8 characters, with letters and numbers, and not your current one.")
        }
        await state.changePassword(userID: user.id, to: new)
        transaction.passwordVerified = true
        return await flow.afterFirstFactor(transaction, user: user)
    }

    /// "More information required": the page to register a phone.
    func proofup() async -> Response {
        guard let user = transaction.userID.flatMap(users.user(id:)), transaction.firstFactorVerified else {
            return flow.restart(transaction, action: action)
        }
        return .html(RefusalPages.registerPhone(action: action, ctx: ctx, username: user.userPrincipalName, error: nil))
    }

    /// The phone registered: the sign-in goes on.
    func proofupPhone() async -> Response {
        guard let user = transaction.userID.flatMap(users.user(id:)), transaction.firstFactorVerified else {
            return flow.restart(transaction, action: action)
        }
        let digits = (form[SignInPageIDs.Fields.phoneNumber] ?? "").filter(\.isNumber)
        guard (6...15).contains(digits.count) else {
            return .html(
                RefusalPages.registerPhone(
                    action: action, ctx: ctx, username: user.userPrincipalName, error: "Enter a valid phone number."))
        }
        await state.updateMethods(of: user) { $0.sms = true }
        return await flow.afterFirstFactor(transaction, user: user)
    }

    /// A request for an administrator's approval, sent (or not): back to the app, refused.
    func adminRequest() async -> Response {
        guard let userID = transaction.userID, let user = users.user(id: userID) else { return flow.restart(transaction, action: action) }
        await state.finish(ctx)
        if form["approval"] == "request" {
            await state.requestAdminConsent(
                AdminConsentRequest(
                    clientID: authorization.client.clientID, appName: authorization.client.name,
                    userPrincipalName: user.userPrincipalName,
                    justification: String((form[SignInPageIDs.Fields.justification] ?? "").prefix(500)),
                    requestedAt: now))
        }
        return await flow.refuse(RefusalErrors.adminConsentRequestable, transaction: transaction, now: now)
    }

    /// "Stay signed in?" answered: the sign-in completes.
    mutating func kmsi() async -> Response {
        guard await flow.isAuthenticated(transaction, users: users) else { return flow.restart(transaction, action: action) }
        transaction.staySignedIn = form["kmsi"] == "yes"
        await state.update(transaction)
        return await flow.complete(transaction, session: nil, now: now)
    }

    /// The app's permissions accepted (or declined).
    mutating func consent() async -> Response {
        guard await flow.isAuthenticated(transaction, users: users) else { return flow.restart(transaction, action: action) }
        guard form["consent"] == "accept" else {
            await state.finish(ctx)
            return await flow.refuse(.userDeclinedConsent, transaction: transaction, now: now)
        }
        transaction.consentGiven = true
        await state.update(transaction)
        return await flow.complete(transaction, session: nil, now: now)
    }

    /// "Need admin approval": the only way on is back to the app.
    func adminApproval() async -> Response {
        // The only way on: back to the app without consent.
        await state.finish(ctx)
        return await flow.refuse(.adminConsentRequired, transaction: transaction, now: now)
    }

    /// An account picked on "Pick an account" (the session's), or another.
    func pick() async -> Response {
        if form["account"] == "session", let cookie, let session = await state.session(cookie: cookie) {
            return await SignInController(services: services).answerFromSession(transaction, session: session, now: now)
        }
        return .html(SignInPages.username(action: action, ctx: ctx, hint: nil, error: nil))
    }

    /// A device code sign-in confirmed (or cancelled) before the pages.
    func deviceConfirm() async -> Response {
        guard let device = transaction.deviceKey else { return flow.restart(transaction, action: action) }
        guard form["action"] != "cancel" else {
            await state.declineDevice(key: device)
            await state.finish(ctx)
            return .html(DeviceCodePages.declined(appName: authorization.client.name))
        }
        if let cookie, let session = await state.session(cookie: cookie), session.tenantID == endpoint.tenant.id,
            let user = users.user(id: session.userID)
        {
            await state.update(transaction)
            return .html(SignInPages.pickAccount(action: action, ctx: ctx, user: user))
        }
        return .html(
            SignInPages.username(
                action: action, ctx: ctx, hint: SignInController(services: services).demoAccount(for: endpoint.tenant), error: nil,
                demoNote: configuration.demoMode))
    }
}
