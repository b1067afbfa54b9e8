import FoundationEssentials
import Hummingbird

/// The second-factor pages' steps: a code (texted, or from an authenticator app), "Verify your
/// identity", Microsoft Authenticator's approval, a Temporary Access Pass, and the registration
/// interrupt's steps ("Keep your account secure"). Made from the page's ``LoginSteps``.
struct SecondFactorSteps: EmulatorController {
    let services: EmulatorServices
    /// The posted form.
    let form: FormFields
    /// `ctx`: the transaction's id.
    let ctx: String
    var transaction: SignInTransaction
    let now: Date

    init(_ steps: LoginSteps) {
        services = steps.services
        form = steps.form
        ctx = steps.ctx
        transaction = steps.transaction
        now = steps.now
    }

    private var endpoint: IdentityEndpoint { transaction.request.endpoint }
    private var action: String { SignInController(services: services).loginAction(endpoint) }
    private var users: Directory { directory(for: endpoint.tenant) }
    private var flow: SignInFlow { SignInFlow(services: services) }
    private var second: SecondFactorFlow { SecondFactorFlow(services: services) }
    private var user: DirectoryUser? { transaction.userID.flatMap(users.user(id:)) }

    /// The steps these pages post (`step`), or nil for another page's.
    static let steps: Set<String> = [
        "otc", "verify-identity", "sas", "sas-retry", "tap", "proofup-app", "proofup-app-scanned", "proofup-app-test", "proofup-done",
    ]

    /// Answers the page's `step` (one of ``steps``).
    mutating func answer(_ step: String) async -> Response {
        switch step {
        case "otc": await otc()
        case "verify-identity": await verifyIdentity()
        case "sas": await sas()
        case "sas-retry": await sasRetry()
        case "tap": await temporaryAccessPass()
        case "proofup-app": await proofupApp()
        case "proofup-app-scanned": await proofupAppScanned()
        case "proofup-app-test": await proofupAppTest()
        default: await proofupDone()
        }
    }

    /// A code: the texted one, or the authenticator app's (TOTP, each code once); Back; or "Sign
    /// in another way".
    private mutating func otc() async -> Response {
        guard let user, transaction.firstFactorVerified,
            let method = transaction.pendingMethod ?? (transaction.smsCode != nil ? .sms : nil),
            [.sms, .softwareOath].contains(method)
        else {
            return flow.restart(transaction, action: action)
        }
        switch form["action"] {
        case "back":
            transaction.passwordVerified = false
            if transaction.federationVerified {
                // Back from a federated sign-in's code page: the user name again (then the provider).
                transaction.federationVerified = false
                await state.update(transaction)
                return .html(SignInPages.username(action: action, ctx: ctx, hint: user.userPrincipalName, error: nil))
            }
            await state.update(transaction)
            return .html(SignInPages.password(action: action, ctx: ctx, username: user.userPrincipalName, error: nil))
        case "another-way":
            return await second.verifyIdentity(transaction, user: user)
        default: break
        }
        let typed = form.nonEmpty(SignInPageIDs.Fields.smsCode) ?? ""
        let accepted: Bool
        if method == .sms {
            accepted = transaction.smsCode.map { typed == $0 } ?? false
        } else {
            accepted = await checkAppCode(typed, user: user)
        }
        guard accepted else {
            let policy = await state.policy(for: endpoint.tenant)
            let others = await second.usableMethods(user, transaction, policy: policy).count > 1
            return .html(
                SecondFactorPages.enterCode(
                    action: action, ctx: ctx, username: user.userPrincipalName, method: method, maskedPhone: user.maskedMobile,
                    demoCode: configuration.demoMode && method == .sms ? transaction.smsCode : nil,
                    error: "You didn't enter the expected verification code. Please try again.", others: others))
        }
        transaction.secondFactor = method
        return await second.afterSecondFactor(transaction, user: user)
    }

    /// Checks an authenticator app's code (the current 30-second step or one either side) and
    /// remembers its step, so it is not accepted again.
    private func checkAppCode(_ typed: String, user: DirectoryUser) async -> Bool {
        let registered = await state.methods(of: user)
        guard let text = registered.softwareOathSecret, let secret = try? TOTPSecret(base32: text) else { return false }
        var checker = AuthenticatorAppCode(secret: secret, lastAcceptedStep: registered.softwareOathLastStep)
        guard case .accepted(let step) = checker.verify(typed, now: now) else { return false }
        await state.updateMethods(of: user) { $0.softwareOathLastStep = max(step, $0.softwareOathLastStep ?? step) }
        return true
    }

    /// "Verify your identity": the method chosen (one the user can use now), or Cancel.
    private mutating func verifyIdentity() async -> Response {
        guard let user, transaction.firstFactorVerified else { return flow.restart(transaction, action: action) }
        if form["action"] == "back" {
            transaction.passwordVerified = false
            await state.update(transaction)
            return .html(SignInPages.password(action: action, ctx: ctx, username: user.userPrincipalName, error: nil))
        }
        let policy = await state.policy(for: endpoint.tenant)
        let methods = await second.usableMethods(user, transaction, policy: policy)
        guard let method = form[SignInPageIDs.Fields.authMethodID].flatMap(AuthenticationMethod.init(authMethodID:)),
            methods.contains(method)
        else {
            return await second.verifyIdentity(transaction, user: user)
        }
        await authenticator.endPush(transactionID: ctx)
        return await second.challenge(method, transaction, user: user, others: methods.count > 1)
    }

    /// "Approve sign in request" ended: the phone approved with the right number, denied it, reported
    /// it, or did not answer; or "I can't use my Microsoft Authenticator app right now".
    private mutating func sas() async -> Response {
        guard let user, transaction.firstFactorVerified, transaction.pendingMethod == .microsoftAuthenticator else {
            return flow.restart(transaction, action: action)
        }
        if form["action"] == "another-way" {
            await authenticator.endPush(transactionID: ctx)
            return await second.verifyIdentity(transaction, user: user)
        }
        switch await authenticator.pushOutcome(transactionID: ctx, now: now, timeout: second.authenticatorTimeout) {
        case .approved?:
            await authenticator.endPush(transactionID: ctx)
            transaction.secondFactor = .microsoftAuthenticator
            return await second.afterSecondFactor(transaction, user: user)
        case .pending?:
            // Posted before the phone answered (a browser without scripts): the same number again.
            let push = await authenticator.push(transactionID: ctx)
            return .html(
                SecondFactorPages.approveSignIn(
                    action: action, ctx: ctx, username: user.userPrincipalName, number: push?.number ?? 0,
                    endAuth: "/\(endpoint.tenant.domain)/SAS/EndAuth"))
        case .fraudReported?:
            await authenticator.endPush(transactionID: ctx)
            await state.finish(ctx)
            return await flow.refusalPage(RefusalErrors.fraudReported, transaction, username: user.userPrincipalName, now: now)
        case let outcome?:
            return .html(SecondFactorPages.requestNotApproved(action: action, ctx: ctx, username: user.userPrincipalName, outcome: outcome))
        case nil:
            return await second.challenge(.microsoftAuthenticator, transaction, user: user, others: false)
        }
    }

    /// "Send another request to my Microsoft Authenticator app", or "Sign in another way".
    private mutating func sasRetry() async -> Response {
        guard let user, transaction.firstFactorVerified, transaction.pendingMethod == .microsoftAuthenticator else {
            return flow.restart(transaction, action: action)
        }
        if form["action"] == "another-way" { return await second.verifyIdentity(transaction, user: user) }
        return await second.sendPush(transaction, user: user, step: "sas", title: nil)
    }

    /// A Temporary Access Pass typed in place of the password (or "Use your password instead").
    private mutating func temporaryAccessPass() async -> Response {
        guard let user else { return flow.restart(transaction, action: action) }
        if form["action"] == "password" {
            return .html(SignInPages.password(action: action, ctx: ctx, username: user.userPrincipalName, error: nil))
        }
        let pass = form.nonEmpty(SignInPageIDs.Fields.accessPass) ?? ""
        let policy = await state.policy(for: endpoint.tenant)
        guard policy.authenticationMethods.enabled.contains(.temporaryAccessPass), pass.count <= 64,
            await state.redeemPass(pass, user: user, now: now)
        else {
            return .html(
                SecondFactorPages.temporaryAccessPass(
                    action: action, ctx: ctx, username: user.userPrincipalName,
                    error: "Your Temporary Access Pass is incorrect, expired or already used. Ask your admin for a new one."))
        }
        transaction.passwordlessMethod = .temporaryAccessPass
        await state.update(transaction)
        return await flow.afterFirstFactor(transaction, user: user)
    }

    // MARK: "Keep your account secure"

    /// "Start by getting the app" → Next (the QR code), or the campaign's "Skip for now".
    private mutating func proofupApp() async -> Response {
        guard let user, await flow.isAuthenticated(transaction, users: users) else { return flow.restart(transaction, action: action) }
        if form["action"] == "skip" {
            let days = await state.policy(for: endpoint.tenant).authenticationMethods.registrationCampaign.snoozeDurationInDays
            let until = now.addingTimeInterval(Double(days) * 86_400)
            await state.updateMethods(of: user) { $0.campaignSnoozedUntil = until }
            return await second.afterSecondFactor(transaction, user: user)
        }
        let activation = await authenticator.beginActivation(userID: user.id, base: root, now: now)
        return .html(
            RegistrationPages.scanQRCode(action: action, ctx: ctx, username: user.userPrincipalName, activation: activation, error: nil))
    }

    /// "Scan the QR code" → Next: once the phone activated, the test notification.
    private mutating func proofupAppScanned() async -> Response {
        guard let user, await flow.isAuthenticated(transaction, users: users) else { return flow.restart(transaction, action: action) }
        guard await authenticator.activatedAuthenticator(userID: user.id) != nil else {
            let activation = await authenticator.beginActivation(userID: user.id, base: root, now: now)
            return .html(
                RegistrationPages.scanQRCode(
                    action: action, ctx: ctx, username: user.userPrincipalName, activation: activation,
                    error: "We couldn't find your account in the app. Scan the QR code with the Microsoft Authenticator app, then "
                        + "choose Next."))
        }
        return await second.sendPush(transaction, user: user, step: "proofup-app-test", title: "Let's try it out")
    }

    /// The test notification answered: approved, the app is registered; otherwise another one.
    private mutating func proofupAppTest() async -> Response {
        guard let user, await flow.isAuthenticated(transaction, users: users),
            let activation = await authenticator.activatedAuthenticator(userID: user.id)
        else { return flow.restart(transaction, action: action) }
        let outcome = await authenticator.pushOutcome(transactionID: ctx, now: now, timeout: second.authenticatorTimeout)
        guard outcome == .approved else {
            return await second.sendPush(transaction, user: user, step: "proofup-app-test", title: "Let's try it out")
        }
        await authenticator.endPush(transactionID: ctx)
        await authenticator.endActivation(userID: user.id)
        let device = activation.device ?? "Phone"
        await state.updateMethods(of: user) { $0.authenticatorDevice = device }
        return .html(RegistrationPages.success(action: action, ctx: ctx, username: user.userPrincipalName))
    }

    /// "Success!" → Done: the sign-in goes on.
    private mutating func proofupDone() async -> Response {
        guard let user, await flow.isAuthenticated(transaction, users: users) else { return flow.restart(transaction, action: action) }
        return await second.afterSecondFactor(transaction, user: user)
    }
}
