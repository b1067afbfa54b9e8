import FoundationEssentials
import Hummingbird

/// The second factor of a sign-in, as Entra asks for it: the methods a user can use now
/// (registered, enabled by the tenant, meeting the rule's authentication strength), the strongest
/// first when system-preferred MFA is on; the challenge for each; and what follows MFA — the
/// registration interrupt ("Keep your account secure") for a user who signed in with a Temporary
/// Access Pass and has nothing else, or whom the registration campaign nudges — then "Stay signed
/// in?".
struct SecondFactorFlow: EmulatorController {
    let services: EmulatorServices
    private var flow: SignInFlow { SignInFlow(services: services) }

    /// How long a Microsoft Authenticator notification waits for the phone (Entra answers
    /// `PhoneAppNoResponse` after about 55 seconds).
    var authenticatorTimeout: TimeInterval { configuration.authenticatorTimeout }

    /// The methods `user` can use for this sign-in's second factor, strongest first (or the
    /// user's registration order when system-preferred MFA is off; then SMS first, as before it).
    func usableMethods(_ user: DirectoryUser, _ transaction: SignInTransaction, policy: TenantPolicy) async -> [AuthenticationMethod] {
        let now = clock.now
        let hasPasskey = await state.hasPasskey(userID: user.id)
        var methods = await state.methods(of: user).methods(now: now, hasPasskey: hasPasskey)
            .filter { policy.authenticationMethods.enabled.contains($0) && $0 != .temporaryAccessPass }
        if let strength = transaction.requiredStrength { methods = methods.filter(strength.satisfyingMethods.contains) }
        return policy.authenticationMethods.systemPreferred ? methods.sorted() : methods.sorted { $0 == .sms && $1 != .sms }
    }

    /// The page that asks for `method`: the texted code, the app's code, the number to approve on
    /// the phone, or the passkey.
    func challenge(_ method: AuthenticationMethod, _ input: SignInTransaction, user: DirectoryUser, others: Bool) async -> Response {
        var transaction = input
        let action = SignInController(services: services).loginAction(transaction.request.endpoint)
        transaction.pendingMethod = method
        switch method {
        case .sms:
            let code = Identifiers.oneTimeCode()
            transaction.smsCode = code
            await state.update(transaction)
            configuration.announce("mfa-code \(user.userPrincipalName) \(code)")
            return .html(
                SecondFactorPages.enterCode(
                    action: action, ctx: transaction.id, username: user.userPrincipalName, method: .sms, maskedPhone: user.maskedMobile,
                    demoCode: configuration.demoMode ? code : nil, error: nil, others: others))
        case .softwareOath:
            await state.update(transaction)
            return .html(
                SecondFactorPages.enterCode(
                    action: action, ctx: transaction.id, username: user.userPrincipalName, method: .softwareOath,
                    maskedPhone: user.maskedMobile, demoCode: nil, error: nil, others: others))
        case .microsoftAuthenticator:
            await state.update(transaction)
            return await sendPush(transaction, user: user, step: "sas", title: nil)
        case .fido2:
            await state.update(transaction)
            return await PasskeyController(services: services).signInPage(transaction, user: user, others: others)
        case .temporaryAccessPass:
            await state.update(transaction)
            return .html(
                SecondFactorPages.temporaryAccessPass(action: action, ctx: transaction.id, username: user.userPrincipalName, error: nil))
        }
    }

    /// Sends a notification to `user`'s Microsoft Authenticator and shows its number; the page
    /// waits on `EndAuth`, then posts `step`.
    func sendPush(_ transaction: SignInTransaction, user: DirectoryUser, step: String, title: String?) async -> Response {
        let number = await authenticator.sendPush(
            transactionID: transaction.id, userID: user.id, appName: transaction.request.client.name, now: clock.now)
        configuration.announce("authenticator-push \(user.userPrincipalName) \(number)")
        let endpoint = transaction.request.endpoint
        return .html(
            SecondFactorPages.approveSignIn(
                action: SignInController(services: services).loginAction(endpoint), ctx: transaction.id,
                username: user.userPrincipalName, number: number, endAuth: "/\(endpoint.tenant.domain)/SAS/EndAuth", step: step,
                title: title))
    }

    /// "Verify your identity": every method the user can use for this sign-in.
    func verifyIdentity(_ transaction: SignInTransaction, user: DirectoryUser, note: String? = nil) async -> Response {
        let policy = await state.policy(for: transaction.request.endpoint.tenant)
        let methods = await usableMethods(user, transaction, policy: policy)
        return .html(
            SecondFactorPages.verifyIdentity(
                action: SignInController(services: services).loginAction(transaction.request.endpoint), ctx: transaction.id,
                username: user.userPrincipalName, methods: methods, maskedPhone: user.maskedMobile, note: note))
    }

    /// After MFA, or when none was needed: the rule's strength checked, the registration
    /// interrupt when it applies, then "Stay signed in?".
    func afterSecondFactor(_ input: SignInTransaction, user: DirectoryUser) async -> Response {
        var transaction = input
        transaction.pendingMethod = nil
        let now = clock.now
        let endpoint = transaction.request.endpoint
        let action = SignInController(services: services).loginAction(endpoint)
        if let strength = transaction.requiredStrength, !transaction.meets(strength) {
            await state.finish(transaction.id)
            return await flow.refusalPage(
                RefusalErrors.authenticationStrengthUnmet(strength), transaction, username: user.userPrincipalName, now: now)
        }
        if !transaction.registrationOffered, let required = await registrationInterrupt(transaction, user: user, now: now) {
            transaction.registrationOffered = true
            await state.update(transaction)
            return .html(
                RegistrationPages.startWithTheApp(
                    action: action, ctx: transaction.id, username: user.userPrincipalName,
                    skipDays: required ? nil : await snoozeDays(endpoint)))
        }
        await state.update(transaction)
        return .html(SignInPages.staySignedIn(action: action, ctx: transaction.id, username: user.userPrincipalName))
    }

    /// Whether this sign-in is interrupted to set up Microsoft Authenticator: `true` when it must
    /// (a Temporary Access Pass signed in a user with nothing else registered), `false` when the
    /// registration campaign nudges (MFA passed with a text or a code, not snoozed), nil when not.
    private func registrationInterrupt(_ transaction: SignInTransaction, user: DirectoryUser, now: Date) async -> Bool? {
        guard transaction.request.endpoint.tenant.kind == .workforce else { return nil }
        let policy = await state.policy(for: transaction.request.endpoint.tenant).authenticationMethods
        let registered = await state.methods(of: user)
        let hasPasskey = await state.hasPasskey(userID: user.id)
        let others = registered.methods(now: now, hasPasskey: hasPasskey).filter { $0 != .temporaryAccessPass }
        guard policy.enabled.contains(.microsoftAuthenticator), registered.authenticatorDevice == nil else { return nil }
        if transaction.passwordlessMethod == .temporaryAccessPass, others.isEmpty { return true }
        guard policy.registrationCampaign.targets(user.userPrincipalName), let second = transaction.secondFactor,
            [.sms, .softwareOath].contains(second), (registered.campaignSnoozedUntil ?? .distantPast) <= now
        else { return nil }
        return false
    }

    private func snoozeDays(_ endpoint: IdentityEndpoint) async -> Int {
        await state.policy(for: endpoint.tenant).authenticationMethods.registrationCampaign.snoozeDurationInDays
    }
}
