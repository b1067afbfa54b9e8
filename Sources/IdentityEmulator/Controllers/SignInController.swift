import FoundationEssentials
import HTTPTypes
import Hummingbird

/// `/authorize`, the sign-in pages posting to `/{tenant}/login`, and `/logout`: Entra's pages, and B2C's through ``B2CController``.
struct SignInController: EmulatorController {
    let services: EmulatorServices

    static let workforceCookie = "ESTSAUTH"
    static let b2cCookie = "x-ms-cpim-sso-fabrikamb2c"

    func sessionCookieName(_ tenant: Tenant) -> String { tenant.kind == .b2c ? Self.b2cCookie : Self.workforceCookie }

    // MARK: GET /authorize

    /// `/authorize`: the request parsed (its errors on a page or back at the app), then the B2C
    /// user flows' answer or Entra's, each of which may sign in from the browser's session.
    func authorize(_ request: Request, endpoint resolve: @autoclosure () throws(EndpointError) -> IdentityEndpoint) async throws -> Response
    {
        let now = clock.now
        let endpoint: IdentityEndpoint
        do { endpoint = try resolve() } catch { return errorPage(error.serviceError, correlationID: nil, now: now) }

        let authorization: AuthorizeRequest
        do {
            authorization = try AuthorizeRequest.parse(
                request.queryFields, endpoint: endpoint, clients: clients, emulatorBase: base, lenient: configuration.lenient)
        } catch .page(let failure) {
            return errorPage(failure, correlationID: request.queryFields["client-request-id"], now: now)
        } catch .redirect(let failure, let reply) {
            return errorRedirect(failure, reply: reply, now: now)
        }

        if endpoint.isMultiTenant, endpoint.tenant.kind == .workforce, !authorization.client.multiTenant {
            return errorRedirect(
                .singleTenantAppAtCommon(clientID: authorization.client.clientID, appName: authorization.client.name),
                reply: authorization.reply, now: now)
        }

        let session = await browserSession(request, tenant: endpoint.tenant)
        let transaction = await state.begin(authorization, now: now)
        if endpoint.tenant.kind == .b2c { return await authorizeB2C(transaction, session: session, now: now) }
        if let credential = request.cookies[Self.deviceCredentialCookie]?.value ?? request.headers[.refreshTokenCredential],
            let answer = await signInWithDevice(credential, transaction: transaction, request: request, now: now)
        {
            return answer
        }
        return await authorizeWorkforce(transaction, session: session, now: now)
    }

    /// A browser's session at a tenant and its user, as `/authorize` sees it.
    private struct BrowserSession {
        let session: SignInSession
        let user: DirectoryUser
    }

    /// The session the browser's cookie names at `tenant`, if it is this tenant's and its user is
    /// still in the directory: only then can a sign-in skip the pages.
    private func browserSession(_ request: Request, tenant: Tenant) async -> BrowserSession? {
        guard let cookie = request.cookies[sessionCookieName(tenant)]?.value,
            let session = await state.session(cookie: cookie), session.tenantID == tenant.id,
            let user = directory(for: tenant).user(id: session.userID)
        else { return nil }
        return BrowserSession(session: session, user: user)
    }

    /// A B2C user flow: `prompt=none` answers from the session or fails, the password reset flow
    /// starts at its own page, a session signs in unless `prompt=login`, else the sign-in page.
    private func authorizeB2C(_ transaction: SignInTransaction, session: BrowserSession?, now: Date) async -> Response {
        let authorization = transaction.request
        let endpoint = authorization.endpoint
        if authorization.prompt == "none" {
            guard let session else { return errorRedirect(.b2cNoSession, reply: authorization.reply, now: now) }
            return await answerFromSession(transaction, session: session.session, now: now, recording: false)
        }
        if endpoint.policy == Tenant.passwordResetPolicy {
            return .html(
                B2CPages.passwordReset(
                    action: loginAction(endpoint), ctx: transaction.id, tenant: endpoint.tenant.displayName,
                    stage: .email, email: authorization.loginHint, demoCode: nil, error: nil))
        }
        if let session, authorization.prompt != "login" {
            return await answerFromSession(transaction, session: session.session, now: now)
        }
        return .html(
            B2CPages.signIn(
                action: loginAction(endpoint), ctx: transaction.id, tenant: endpoint.tenant.displayName,
                email: authorization.loginHint ?? demoAccount(for: endpoint.tenant), error: nil))
    }

    /// Entra, by `prompt`: `none` answers from the session (with every permission consented) or
    /// fails; `select_account` offers the session's account; `login` and `create` always show
    /// the pages; otherwise a session signs in when it is the hinted user's and, if the claims
    /// ask for MFA, was signed in with it. Anything else starts at the user name page.
    private func authorizeWorkforce(_ transaction: SignInTransaction, session: BrowserSession?, now: Date) async -> Response {
        let authorization = transaction.request
        let endpoint = authorization.endpoint
        switch authorization.prompt {
        case "none":
            guard let session else { return errorRedirect(.loginRequired, reply: authorization.reply, now: now) }
            let missing = authorization.scopes.consentKeys.subtracting(
                await state.consentedPermissions(userID: session.session.userID, clientID: authorization.client.clientID))
            guard missing.isEmpty else {
                return errorRedirect(
                    .consentRequired(clientID: authorization.client.clientID, appName: authorization.client.name),
                    reply: authorization.reply, now: now)
            }
            return await answerFromSession(transaction, session: session.session, now: now, recording: false)
        case "select_account":
            if let session {
                await state.update(transaction)
                return .html(SignInPages.pickAccount(action: loginAction(endpoint), ctx: transaction.id, user: session.user))
            }
        case "login", "create":
            break
        default:
            if let session, sessionAnswers(authorization, session: session) {
                return await answerFromSession(transaction, session: session.session, now: now)
            }
        }
        return .html(
            SignInPages.username(
                action: loginAction(endpoint), ctx: transaction.id,
                hint: authorization.loginHint ?? demoAccount(for: endpoint.tenant), error: nil,
                demoNote: configuration.demoMode))
    }

    /// Whether the session may answer a request without the pages: a `login_hint` names its user
    /// (or there is none), and a claims challenge asking for MFA finds a session signed in with it.
    private func sessionAnswers(_ authorization: AuthorizeRequest, session: BrowserSession) -> Bool {
        let hintMatches =
            authorization.loginHint.map { $0.equalsIgnoringCase(session.user.userPrincipalName) } ?? true
        // A claims challenge asking for MFA is not answered by a session signed in without it.
        let mfaAnswered = !authorization.demandsMFA || session.session.methods.contains("mfa")
        return hintMatches && mfaAnswered
    }

    /// Single sign-on: the transaction is the session's user's, with no page shown, and finishes
    /// at once. `recording` keeps the signed-in transaction first (`prompt=none` never did).
    private func answerFromSession(
        _ input: SignInTransaction, session: SignInSession, now: Date, recording: Bool = true
    ) async -> Response {
        var transaction = input
        transaction.userID = session.userID
        transaction.fromSession = true
        if recording { await state.update(transaction) }
        return await complete(transaction, session: session, now: now)
    }

    /// In demo mode the first page suggests the demo account, so a newcomer types only the password.
    func demoAccount(for tenant: Tenant) -> String? {
        guard configuration.demoMode else { return nil }
        return tenant.kind == .b2c ? "sam@example.com" : "alex@contoso.onmicrosoft.com"
    }

    /// The seeds' `loginURL`: `/{tenant}/login`.
    func loginAction(_ endpoint: IdentityEndpoint) -> String {
        endpoint.tenant.kind == .b2c ? "/\(endpoint.tenant.domain)/login" : "/\(endpoint.tenantSegment)/login"
    }

    // MARK: POST /{tenant}/login

    func login(_ request: Request, tenantSegment: String) async throws -> Response {
        let now = clock.now
        // Entra's pages are not served under the identity provider's name (a browser that came
        // back from the provider really crossed hosts).
        if services.isFederationHost(request) { return ADFSController.notFound(services: services) }
        let form = request.method == .post ? try await request.formFields() : request.queryFields
        guard let ctx = form.nonEmpty("ctx"), var transaction = await state.transaction(ctx) else {
            return errorPage(.flowTokenExpired, correlationID: nil, now: now)
        }
        let authorization = transaction.request
        let endpoint = authorization.endpoint
        let action = loginAction(endpoint)
        let users = directory(for: endpoint.tenant)
        let policy = await state.policy(for: endpoint.tenant)
        transaction.platform = ClientPlatform.of(userAgent: request.headers[.userAgent])

        switch form["step"] ?? "" {
        case "username":
            guard let name = form.nonEmpty(SignInPageIDs.Fields.userName) else {
                return .html(
                    SignInPages.username(
                        action: action, ctx: ctx, hint: nil, error: "Enter a valid email address, phone number, or Skype name."))
            }
            transaction.passwordVerified = false
            transaction.federationVerified = false
            transaction.smsVerified = false
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
            return .html(SignInPages.password(action: action, ctx: ctx, username: user.userPrincipalName, error: nil))

        case "password" where transaction.foreignUserName != nil:
            let name = transaction.foreignUserName ?? ""
            await state.finish(ctx)
            let failure = RefusalErrors.userFromOtherTenant(
                name, home: Identifiers.guid(), tenant: endpoint.tenant, clientID: authorization.client.clientID,
                appName: authorization.client.name)
            return refusalPage(failure, transaction, username: name, now: now)

        case "password":
            // A federated user's password is the identity provider's to check, never Entra's.
            guard transaction.federatedUserName == nil, let user = transaction.userID.flatMap(users.user(id:)),
                services.federatedDomain(forUserName: user.userPrincipalName, in: endpoint.tenant) == nil
            else {
                return restart(transaction, action: action)
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
                return refusalPage(RefusalErrors.accountLocked, transaction, username: user.userPrincipalName, now: now)
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
                return refusalPage(RefusalErrors.accountDisabled, transaction, username: user.userPrincipalName, now: now)
            }
            if accountState?.state == .passwordExpired, changed == nil {
                transaction.passwordVerified = false
                await state.update(transaction)
                return .html(RefusalPages.updatePassword(action: action, ctx: ctx, username: user.userPrincipalName, error: nil))
            }
            transaction.passwordVerified = true
            return await afterFirstFactor(transaction, user: user)

        case "password-update":
            guard let user = transaction.userID.flatMap(users.user(id:)) else { return restart(transaction, action: action) }
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
            return await afterFirstFactor(transaction, user: user)

        case "proofup":
            guard let user = transaction.userID.flatMap(users.user(id:)), transaction.firstFactorVerified else {
                return restart(transaction, action: action)
            }
            return .html(RefusalPages.registerPhone(action: action, ctx: ctx, username: user.userPrincipalName, error: nil))

        case "proofup-phone":
            guard let user = transaction.userID.flatMap(users.user(id:)), transaction.firstFactorVerified else {
                return restart(transaction, action: action)
            }
            let digits = (form[SignInPageIDs.Fields.phoneNumber] ?? "").filter(\.isNumber)
            guard (6...15).contains(digits.count) else {
                return .html(
                    RefusalPages.registerPhone(
                        action: action, ctx: ctx, username: user.userPrincipalName, error: "Enter a valid phone number."))
            }
            await state.registerForMFA(userID: user.id)
            return await afterFirstFactor(transaction, user: user)

        case "admin-request":
            guard let userID = transaction.userID, let user = users.user(id: userID) else { return restart(transaction, action: action) }
            await state.finish(ctx)
            if form["approval"] == "request" {
                await state.requestAdminConsent(
                    AdminConsentRequest(
                        clientID: authorization.client.clientID, appName: authorization.client.name,
                        userPrincipalName: user.userPrincipalName,
                        justification: String((form[SignInPageIDs.Fields.justification] ?? "").prefix(500)),
                        requestedAt: now))
            }
            return await refuse(RefusalErrors.adminConsentRequestable, transaction: transaction, now: now)

        case "otc":
            guard let user = transaction.userID.flatMap(users.user(id:)), transaction.firstFactorVerified,
                let expected = transaction.smsCode
            else {
                return restart(transaction, action: action)
            }
            if form["action"] == "back" {
                transaction.passwordVerified = false
                if transaction.federationVerified {
                    // Back from a federated sign-in's SMS page: the user name again (then the provider).
                    transaction.federationVerified = false
                    await state.update(transaction)
                    return .html(SignInPages.username(action: action, ctx: ctx, hint: user.userPrincipalName, error: nil))
                }
                await state.update(transaction)
                return .html(SignInPages.password(action: action, ctx: ctx, username: user.userPrincipalName, error: nil))
            }
            guard form.nonEmpty(SignInPageIDs.Fields.smsCode) == expected else {
                return .html(
                    SignInPages.sms(
                        action: action, ctx: ctx, username: user.userPrincipalName, maskedPhone: user.maskedMobile,
                        demoCode: configuration.demoMode ? expected : nil,
                        error: "You didn't enter the expected verification code. Please try again."))
            }
            transaction.smsVerified = true
            await state.update(transaction)
            return .html(SignInPages.staySignedIn(action: action, ctx: ctx, username: user.userPrincipalName))

        case "kmsi":
            guard await isAuthenticated(transaction, users: users) else { return restart(transaction, action: action) }
            transaction.staySignedIn = form["kmsi"] == "yes"
            await state.update(transaction)
            return await complete(transaction, session: nil, now: now)

        case "consent":
            guard await isAuthenticated(transaction, users: users) else { return restart(transaction, action: action) }
            guard form["consent"] == "accept" else {
                await state.finish(ctx)
                return await refuse(.userDeclinedConsent, transaction: transaction, now: now)
            }
            transaction.consentGiven = true
            await state.update(transaction)
            return await complete(transaction, session: nil, now: now)

        case "admin-approval":
            // The only way on: back to the app without consent.
            await state.finish(ctx)
            return await refuse(.adminConsentRequired, transaction: transaction, now: now)

        case "pick":
            let cookie = request.cookies[sessionCookieName(endpoint.tenant)]?.value
            if form["account"] == "session", let cookie, let session = await state.session(cookie: cookie) {
                return await answerFromSession(transaction, session: session, now: now)
            }
            return .html(SignInPages.username(action: action, ctx: ctx, hint: nil, error: nil))

        case "device-confirm":
            guard let device = transaction.deviceKey else { return restart(transaction, action: action) }
            guard form["action"] != "cancel" else {
                await state.declineDevice(key: device)
                await state.finish(ctx)
                return .html(DeviceCodePages.declined(appName: authorization.client.name))
            }
            let cookie = request.cookies[sessionCookieName(endpoint.tenant)]?.value
            if let cookie, let session = await state.session(cookie: cookie), session.tenantID == endpoint.tenant.id,
                let user = users.user(id: session.userID)
            {
                await state.update(transaction)
                return .html(SignInPages.pickAccount(action: action, ctx: ctx, user: user))
            }
            return .html(
                SignInPages.username(
                    action: action, ctx: ctx, hint: demoAccount(for: endpoint.tenant), error: nil, demoNote: configuration.demoMode))

        case "b2c-signin", "b2c-signup", "b2c-reset":
            return try await B2CController(services: services).b2cStep(form, transaction: transaction, now: now)

        default:
            return restart(transaction, action: action)
        }
    }

    /// After the first factor (Entra's password, or a federated provider's answer): the SMS code
    /// when this sign-in needs MFA, else "Stay signed in?".
    func afterFirstFactor(_ input: SignInTransaction, user: DirectoryUser) async -> Response {
        var transaction = input
        let action = loginAction(transaction.request.endpoint)
        // Conditional Access, after the first factor: the tenant's first rule for this app, user
        // and platform decides.
        let policy = await state.policy(for: transaction.request.endpoint.tenant)
        if let rule = policy.conditionalAccessRule(
            clientID: transaction.request.client.clientID, user: user.userPrincipalName, platform: transaction.platform)
        {
            let now = clock.now
            switch rule.require {
            case .block:
                await state.finish(transaction.id)
                return refusalPage(RefusalErrors.conditionalAccessBlocked, transaction, username: user.userPrincipalName, now: now)
            case .compliantDevice:
                await state.finish(transaction.id)
                return refusalPage(RefusalErrors.deviceNotCompliant, transaction, username: user.userPrincipalName, now: now)
            case .managedDevice:
                await state.finish(transaction.id)
                return refusalPage(RefusalErrors.deviceNotManaged, transaction, username: user.userPrincipalName, now: now)
            case .registeredDevice where transaction.deviceID == nil:
                await state.finish(transaction.id)
                return refusalPage(RefusalErrors.deviceAuthenticationRequired, transaction, username: user.userPrincipalName, now: now)
            case .registeredDevice:
                break
            case .mfaRegistration where !user.requiresMFA:
                if await !state.isRegisteredForMFA(userID: user.id) {
                    await state.update(transaction)
                    return .html(
                        RefusalPages.moreInformationRequired(action: action, ctx: transaction.id, username: user.userPrincipalName))
                }
                transaction.conditionalAccessMFA = true
            case .mfa, .mfaRegistration:
                transaction.conditionalAccessMFA = true
            }
        }
        if await needsMFA(user, transaction) {
            let code = Identifiers.oneTimeCode()
            transaction.smsCode = code
            await state.update(transaction)
            configuration.announce("mfa-code \(user.userPrincipalName) \(code)")
            return .html(
                SignInPages.sms(
                    action: action, ctx: transaction.id, username: user.userPrincipalName, maskedPhone: user.maskedMobile,
                    demoCode: configuration.demoMode ? code : nil, error: nil))
        }
        await state.update(transaction)
        return .html(SignInPages.staySignedIn(action: action, ctx: transaction.id, username: user.userPrincipalName))
    }

    /// First factor (and SMS code, when MFA is needed) checked, or signed in by the session.
    func isAuthenticated(_ transaction: SignInTransaction, users: Directory) async -> Bool {
        guard let user = transaction.userID.flatMap(users.user(id:)) else { return false }
        if transaction.fromSession { return true }
        guard transaction.firstFactorVerified else { return false }
        if transaction.smsVerified { return true }
        return await !needsMFA(user, transaction)
    }

    /// Whether this sign-in needs the SMS step: the user always has MFA, the request's claims ask
    /// for it, or an administrator demanded it for the user's next sign-in.
    func needsMFA(_ user: DirectoryUser, _ transaction: SignInTransaction) async -> Bool {
        if user.requiresMFA || transaction.request.demandsMFA || transaction.conditionalAccessMFA { return true }
        return await state.isMFADemanded(userID: user.id)
    }

    /// A form out of order: back to the first page of the same transaction.
    private func restart(_ transaction: SignInTransaction, action: String) -> Response {
        if transaction.request.endpoint.tenant.kind == .b2c {
            return .html(
                B2CPages.signIn(
                    action: action, ctx: transaction.id, tenant: transaction.request.endpoint.tenant.displayName, email: nil, error: nil))
        }
        return .html(SignInPages.username(action: action, ctx: transaction.id, hint: transaction.request.loginHint, error: nil))
    }

    // MARK: Finishing

    /// Consent (first use, or `prompt=consent`), then the session cookie and the code redirect
    /// (or, for a device's sign-in, the device approved).
    func complete(_ transaction: SignInTransaction, session existing: SignInSession?, now: Date) async -> Response {
        let authorization = transaction.request
        let endpoint = authorization.endpoint
        guard let userID = transaction.userID, let user = directory(for: endpoint.tenant).user(id: userID) else {
            return errorPage(
                .entra("invalid_request", 50034, "The user account does not exist in the directory."),
                correlationID: authorization.correlationID, now: now)
        }
        if let consentPage = await consentNeeded(transaction, userID: userID, user: user) { return consentPage }
        if transaction.consentGiven {
            await state.grantConsent(authorization.scopes.consentKeys, userID: userID, clientID: authorization.client.clientID)
        }
        if transaction.smsVerified { await state.mfaSatisfied(userID: userID) }

        let (session, cookie) = await session(for: transaction, userID: userID, existing: existing, now: now)
        await state.finish(transaction.id)

        let grant = Grant(
            userID: userID, tenantID: endpoint.tenant.id, clientID: authorization.client.clientID, scope: authorization.scope,
            policy: endpoint.policy, authTime: session.authTime, sessionID: session.sessionID, methods: session.methods,
            newUser: transaction.newUser, deviceID: transaction.deviceID)
        var response: Response
        if let device = transaction.deviceKey {
            // The device code flow: the device's next poll gets the tokens; this browser is done.
            await state.approveDevice(key: device, grant: grant)
            response = .html(DeviceCodePages.signedIn(appName: authorization.client.name))
        } else {
            response = await redirectWithCode(grant, transaction: transaction, user: user, session: session, now: now)
        }
        if let cookie { response.setCookie(cookie) }
        return response
    }

    /// The page asking for the consent an Entra sign-in still lacks, or nil when it lacks none
    /// (B2C asks none, and a consent given on the page counts). What only an administrator may
    /// grant (or anything, when the tenant lets no user consent) and no administrator has
    /// granted gets "Need admin approval"; the rest, the consent page, `User.Read` first.
    private func consentNeeded(_ transaction: SignInTransaction, userID: String, user: DirectoryUser) async -> Response? {
        let authorization = transaction.request
        let endpoint = authorization.endpoint
        guard endpoint.tenant.kind == .workforce, !transaction.consentGiven, !authorization.client.isMicrosoftClient else { return nil }
        let clientID = authorization.client.clientID
        let adminConsented = await state.adminConsentedPermissions(clientID: clientID)
        let consented = await state.consentedPermissions(userID: userID, clientID: clientID).union(adminConsented)
        let wanted = authorization.scopes.consentKeys
        let missing = authorization.prompt == "consent" ? wanted : wanted.subtracting(consented)
        // What only an administrator may grant, or anything when the tenant allows no user consent.
        let consent = await state.policy(for: endpoint.tenant).userConsent
        let usersMayConsent = consent.map { $0 == .allowed } ?? (configuration.userConsent != .adminOnly)
        let needsAdmin: Set<String> =
            configuration.lenient ? [] : missing.filter { ScopeRequest.adminOnly.contains($0) || !usersMayConsent }
        if !needsAdmin.isEmpty, !needsAdmin.isSubset(of: adminConsented) {
            await state.update(transaction)
            if consent == .adminOnlyWithRequests {
                return .html(
                    RefusalPages.approvalRequired(
                        action: loginAction(endpoint), ctx: transaction.id, username: user.userPrincipalName,
                        appName: authorization.client.name))
            }
            return .html(
                SignInPages.needAdminApproval(
                    action: loginAction(endpoint), ctx: transaction.id, username: user.userPrincipalName,
                    appName: authorization.client.name))
        }
        guard !missing.isEmpty else { return nil }
        await state.update(transaction)
        let ordered = missing.sorted { Self.consentOrder($0) < Self.consentOrder($1) }
        return .html(
            SignInPages.consent(
                action: loginAction(endpoint), ctx: transaction.id, username: user.userPrincipalName,
                appName: authorization.client.name, permissions: ordered))
    }

    /// The sign-in's session: the one it came from, or a new one with its cookie to set (kept
    /// for 90 days when the user chose to stay signed in, else for the browser session; `Secure`
    /// when the emulator is served over HTTPS).
    private func session(
        for transaction: SignInTransaction, userID: String, existing: SignInSession?, now: Date
    ) async -> (session: SignInSession, cookie: Cookie?) {
        if let existing { return (existing, nil) }
        let tenant = transaction.request.endpoint.tenant
        let session = SignInSession(
            userID: userID, tenantID: tenant.id, authTime: now, methods: transaction.methods,
            persistent: transaction.staySignedIn ?? false, sessionID: Identifiers.guid())
        let value = await state.createSession(session)
        let cookie = Cookie(
            name: sessionCookieName(tenant), value: value,
            maxAge: session.persistent ? 90 * 86_400 : nil, path: "/", secure: base.scheme == "https", httpOnly: true, sameSite: .lax)
        return (session, cookie)
    }

    /// Back to the app with a new authorization code for `grant`, in each service's order of
    /// parameters: B2C's `state` first, Entra's after `client_info`, with `session_state`.
    private func redirectWithCode(
        _ grant: Grant, transaction: SignInTransaction, user: DirectoryUser, session: SignInSession, now: Date
    ) async -> Response {
        let authorization = transaction.request
        let endpoint = authorization.endpoint
        let code = await state.issueCode(
            .init(
                grant: grant, redirectURI: authorization.redirectURI, nonce: authorization.nonce,
                codeChallenge: authorization.codeChallenge,
                codeChallengeMethod: authorization.codeChallengeMethod, issuedAt: now))

        var fields = FormFields()
        if endpoint.tenant.kind == .b2c {
            if let state = authorization.state { fields.append("state", state) }
            fields.append("code", code)
            if authorization.wantsClientInfo {
                fields.append("client_info", issuer.clientInfo(user: user, tenant: endpoint.tenant, policy: endpoint.policy))
            }
        } else {
            fields.append("code", code)
            if authorization.wantsClientInfo {
                fields.append("client_info", issuer.clientInfo(user: user, tenant: endpoint.tenant, policy: nil))
            }
            if let state = authorization.state { fields.append("state", state) }
            fields.append("session_state", session.sessionID)
        }
        return redirect(fields, reply: authorization.reply)
    }

    private static func consentOrder(_ key: String) -> Int {
        ["graph:User.Read": 0, "profile": 90, "email": 91, "offline_access": 99][key] ?? 50
    }

    /// The result, by `response_mode`: a 302 with a query or fragment, or an auto-posting form.
    func redirect(_ fields: FormFields, reply: AuthorizeRequest.Reply) -> Response {
        switch reply.mode {
        case .query:
            return .found(reply.uri + (reply.uri.contains("?") ? "&" : "?") + fields.encoded)
        case .fragment:
            return .found(reply.uri + "#" + fields.encoded)
        case .formPost:
            return .html(SignInPages.formPost(to: reply.uri, fields: fields))
        }
    }

    /// The pages end without a sign-in: the error goes back to the redirect URI, or, for a
    /// device's sign-in, the device is refused and the page says so.
    /// A tenant's refusal shown as Entra shows it, with the help desk's details; the sign-in is
    /// over (the app hears nothing: Entra does not redirect from these pages).
    func refusalPage(_ failure: ServiceError, _ transaction: SignInTransaction, username: String?, now: Date) -> Response {
        let details = RefusalPages.Details(
            failure: failure, requestID: Identifiers.guid(), correlationID: transaction.request.correlationID, time: now,
            appName: transaction.request.client.name, appID: transaction.request.client.clientID, platform: transaction.platform)
        announceRefusal(failure, requestID: details.requestID, correlationID: details.correlationID)
        return .html(RefusalPages.interrupt(details, username: username))
    }

    /// A consent workflow's refusal (AADSTS90094, 90095) sent back to the app — or, for a device's
    /// sign-in, to the device — and logged with its ids as every refusal is.
    func refuse(_ failure: ServiceError, transaction: SignInTransaction, now: Date) async -> Response {
        let requestID = Identifiers.guid()
        if failure.error == "access_denied", [90094, 90095].contains(failure.codes.first) {
            announceRefusal(failure, requestID: requestID, correlationID: transaction.request.correlationID)
        }
        guard let device = transaction.deviceKey else {
            return redirect(
                failure.redirectFields(
                    state: transaction.request.reply.state, traceID: requestID, correlationID: transaction.request.reply.correlationID,
                    at: now),
                reply: transaction.request.reply)
        }
        // A user's Cancel is `authorization_declined`; the tenant's refusal reaches the device as is.
        await state.declineDevice(
            key: device, refusal: failure.error == "access_denied" && [90094, 90095].contains(failure.codes.first) ? failure : nil)
        return .html(DeviceCodePages.declined(appName: transaction.request.client.name))
    }

    func errorRedirect(_ failure: ServiceError, reply: AuthorizeRequest.Reply, now: Date) -> Response {
        redirect(
            failure.redirectFields(state: reply.state, traceID: Identifiers.guid(), correlationID: reply.correlationID, at: now),
            reply: reply)
    }

    func errorPage(_ failure: ServiceError, correlationID: String?, now: Date) -> Response {
        .html(
            SignInPages.error(failure, traceID: Identifiers.guid(), correlationID: correlationID ?? Identifiers.guid(), at: now),
            status: .badRequest)
    }

    // MARK: GET /logout

    func logout(_ request: Request, endpoint resolve: @autoclosure () throws(EndpointError) -> IdentityEndpoint) async throws -> Response {
        let now = clock.now
        let endpoint: IdentityEndpoint
        do { endpoint = try resolve() } catch { return errorPage(error.serviceError, correlationID: nil, now: now) }
        let name = sessionCookieName(endpoint.tenant)
        if let cookie = request.cookies[name]?.value { await state.endSession(cookie: cookie) }
        var response: Response
        if let target = request.queryFields.nonEmpty("post_logout_redirect_uri") {
            guard clients.contains(where: { $0.replyURI(for: target, emulatorBase: base) != nil }) else {
                return errorPage(
                    .redirectURINotRegistered(target, clientID: request.queryFields["client_id"] ?? ""), correlationID: nil, now: now)
            }
            var fields = FormFields()
            if let state = request.queryFields["state"] { fields.append("state", state) }
            response = .found(fields.pairs.isEmpty ? target : target + (target.contains("?") ? "&" : "?") + fields.encoded)
        } else {
            response = .html(
                PageLayout.microsoft(
                    title: "Sign out",
                    body: """
                        <h1 id="pageTitle">You signed out of your account</h1>
                        <p>It’s a good idea to close all browser windows.</p>
                        """))
        }
        response.setCookie(Cookie(name: name, value: "", maxAge: 0, path: "/", httpOnly: true, sameSite: .lax))
        return response
    }
}
