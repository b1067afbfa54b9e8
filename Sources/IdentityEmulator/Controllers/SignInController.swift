import Foundation
import HTTPTypes
import Hummingbird

/// `/authorize`, the sign-in pages posting to `/{tenant}/login`, and `/logout`: Entra's pages, and B2C's through ``B2CController``.
struct SignInController: EmulatorController {
    let services: EmulatorServices

    static let workforceCookie = "ESTSAUTH"
    static let b2cCookie = "x-ms-cpim-sso-fabrikamb2c"

    func sessionCookieName(_ tenant: Tenant) -> String { tenant.kind == .b2c ? Self.b2cCookie : Self.workforceCookie }

    // MARK: GET /authorize

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

        let cookie = request.cookies[sessionCookieName(endpoint.tenant)]?.value
        let session = await cookie.asyncMap { await state.session(cookie: $0) }.flatMap { $0 }
            .flatMap { $0.tenantID == endpoint.tenant.id ? $0 : nil }
        let sessionUser = session.flatMap { directory(for: endpoint.tenant).user(id: $0.userID) }
        var transaction = await state.begin(authorization, now: now)

        if endpoint.tenant.kind == .b2c {
            if authorization.prompt == "none" {
                guard let session, sessionUser != nil else { return errorRedirect(.b2cNoSession, reply: authorization.reply, now: now) }
                transaction.userID = session.userID
                transaction.fromSession = true
                return await complete(transaction, session: session, now: now)
            }
            if endpoint.policy == Tenant.passwordResetPolicy {
                return .html(
                    B2CPages.passwordReset(
                        action: loginAction(endpoint), ctx: transaction.id, tenant: endpoint.tenant.displayName,
                        stage: .email, email: authorization.loginHint, demoCode: nil, error: nil))
            }
            if let session, sessionUser != nil, authorization.prompt != "login" {
                transaction.userID = session.userID
                transaction.fromSession = true
                await state.update(transaction)
                return await complete(transaction, session: session, now: now)
            }
            return .html(
                B2CPages.signIn(
                    action: loginAction(endpoint), ctx: transaction.id, tenant: endpoint.tenant.displayName,
                    email: authorization.loginHint ?? demoAccount(for: endpoint.tenant), error: nil))
        }

        switch authorization.prompt {
        case "none":
            guard let session, sessionUser != nil else { return errorRedirect(.loginRequired, reply: authorization.reply, now: now) }
            transaction.userID = session.userID
            transaction.fromSession = true
            let missing = authorization.scopes.consentKeys.subtracting(
                await state.consentedPermissions(userID: session.userID, clientID: authorization.client.clientID))
            guard missing.isEmpty else {
                return errorRedirect(
                    .consentRequired(clientID: authorization.client.clientID, appName: authorization.client.name),
                    reply: authorization.reply, now: now)
            }
            return await complete(transaction, session: session, now: now)
        case "select_account":
            if let sessionUser {
                await state.update(transaction)
                return .html(SignInPages.pickAccount(action: loginAction(endpoint), ctx: transaction.id, user: sessionUser))
            }
        case "login", "create":
            break
        default:
            let hintMatches =
                authorization.loginHint.map { $0.caseInsensitiveCompare(sessionUser?.userPrincipalName ?? "") == .orderedSame } ?? true
            // A claims challenge asking for MFA is not answered by a session signed in without it.
            let sessionAnswers = !authorization.demandsMFA || session?.methods.contains("mfa") == true
            if let session, sessionUser != nil, hintMatches, sessionAnswers {
                transaction.userID = session.userID
                transaction.fromSession = true
                await state.update(transaction)
                return await complete(transaction, session: session, now: now)
            }
        }
        return .html(
            SignInPages.username(
                action: loginAction(endpoint), ctx: transaction.id,
                hint: authorization.loginHint ?? demoAccount(for: endpoint.tenant), error: nil,
                demoNote: configuration.demoMode))
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
            guard user.checks(password: password) else {
                return .html(
                    SignInPages.password(
                        action: action, ctx: ctx, username: user.userPrincipalName,
                        error: "Your account or password is incorrect. If you don't remember your password, reset it now."))
            }
            transaction.passwordVerified = true
            return await afterFirstFactor(transaction, user: user)

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
                transaction.userID = session.userID
                transaction.fromSession = true
                await state.update(transaction)
                return await complete(transaction, session: session, now: now)
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
        if user.requiresMFA || transaction.request.demandsMFA { return true }
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

    /// Consent (first use, or `prompt=consent`), then the session cookie and the code redirect.
    func complete(_ transaction: SignInTransaction, session existing: SignInSession?, now: Date) async -> Response {
        let authorization = transaction.request
        let endpoint = authorization.endpoint
        guard let userID = transaction.userID, let user = directory(for: endpoint.tenant).user(id: userID) else {
            return errorPage(
                .entra("invalid_request", 50034, "The user account does not exist in the directory."),
                correlationID: authorization.correlationID, now: now)
        }

        if endpoint.tenant.kind == .workforce, !transaction.consentGiven {
            let clientID = authorization.client.clientID
            let adminConsented = await state.adminConsentedPermissions(clientID: clientID)
            let consented = await state.consentedPermissions(userID: userID, clientID: clientID).union(adminConsented)
            let wanted = authorization.scopes.consentKeys
            let missing = authorization.prompt == "consent" ? wanted : wanted.subtracting(consented)
            // What only an administrator may grant, or anything when the tenant allows no user consent.
            let needsAdmin: Set<String> =
                configuration.lenient
                ? [] : missing.filter { ScopeRequest.adminOnly.contains($0) || configuration.userConsent == .adminOnly }
            if !needsAdmin.isEmpty, !needsAdmin.isSubset(of: adminConsented) {
                await state.update(transaction)
                return .html(
                    SignInPages.needAdminApproval(
                        action: loginAction(endpoint), ctx: transaction.id, username: user.userPrincipalName,
                        appName: authorization.client.name))
            }
            if !missing.isEmpty {
                await state.update(transaction)
                let ordered = missing.sorted { Self.consentOrder($0) < Self.consentOrder($1) }
                return .html(
                    SignInPages.consent(
                        action: loginAction(endpoint), ctx: transaction.id, username: user.userPrincipalName,
                        appName: authorization.client.name, permissions: ordered))
            }
        }
        if transaction.consentGiven {
            await state.grantConsent(authorization.scopes.consentKeys, userID: userID, clientID: authorization.client.clientID)
        }
        if transaction.smsVerified { await state.mfaSatisfied(userID: userID) }

        var cookieToSet: Cookie?
        let session: SignInSession
        if let existing {
            session = existing
        } else {
            session = SignInSession(
                userID: userID, tenantID: endpoint.tenant.id, authTime: now, methods: transaction.methods,
                persistent: transaction.staySignedIn ?? false, sessionID: Identifiers.guid())
            let value = await state.createSession(session)
            cookieToSet = Cookie(
                name: sessionCookieName(endpoint.tenant), value: value,
                maxAge: session.persistent ? 90 * 86_400 : nil, path: "/", secure: base.scheme == "https", httpOnly: true, sameSite: .lax)
        }
        await state.finish(transaction.id)

        let grant = Grant(
            userID: userID, tenantID: endpoint.tenant.id, clientID: authorization.client.clientID, scope: authorization.scope,
            policy: endpoint.policy, authTime: session.authTime, sessionID: session.sessionID, methods: session.methods,
            newUser: transaction.newUser)
        if let device = transaction.deviceKey {
            // The device code flow: the device's next poll gets the tokens; this browser is done.
            await state.approveDevice(key: device, grant: grant)
            var response = Response.html(DeviceCodePages.signedIn(appName: authorization.client.name))
            if let cookieToSet { response.setCookie(cookieToSet) }
            return response
        }
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
        var response = redirect(fields, reply: authorization.reply)
        if let cookieToSet { response.setCookie(cookieToSet) }
        return response
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
    func refuse(_ failure: ServiceError, transaction: SignInTransaction, now: Date) async -> Response {
        guard let device = transaction.deviceKey else { return errorRedirect(failure, reply: transaction.request.reply, now: now) }
        await state.declineDevice(key: device)
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

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async -> T) async -> T? {
        switch self {
        case .some(let value): await transform(value)
        case .none: nil
        }
    }
}
