import FoundationEssentials
import HTTPTypes
import Hummingbird

/// What follows a sign-in page: the second factor (SecondFactorFlow.swift) or "Stay signed in?"
/// after the first, the finish (consent, the session cookie, the code redirect), and the refusals
/// and error pages, as Entra answers them. Shared by the pages' steps (``LoginSteps``), B2C's, federation's and the
/// device code's.
struct SignInFlow: EmulatorController {
    let services: EmulatorServices

    /// After the first factor (Entra's password, a federated provider's answer, a Temporary
    /// Access Pass or a passkey): Conditional Access, then the second factor this sign-in needs
    /// (system-preferred: the strongest the user registered), else what follows it.
    func afterFirstFactor(_ input: SignInTransaction, user: DirectoryUser) async -> Response {
        var transaction = input
        let action = SignInController(services: services).loginAction(transaction.request.endpoint)
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
                return await refusalPage(RefusalErrors.conditionalAccessBlocked, transaction, username: user.userPrincipalName, now: now)
            case .compliantDevice:
                await state.finish(transaction.id)
                return await refusalPage(RefusalErrors.deviceNotCompliant, transaction, username: user.userPrincipalName, now: now)
            case .managedDevice:
                await state.finish(transaction.id)
                return await refusalPage(RefusalErrors.deviceNotManaged, transaction, username: user.userPrincipalName, now: now)
            case .registeredDevice where transaction.deviceID == nil:
                await state.finish(transaction.id)
                return await refusalPage(
                    RefusalErrors.deviceAuthenticationRequired, transaction, username: user.userPrincipalName, now: now)
            case .registeredDevice:
                break
            case .mfaRegistration where !user.requiresMFA:
                if await !state.isRegisteredForMFA(user, now: now) {
                    await state.update(transaction)
                    return .html(
                        RefusalPages.moreInformationRequired(action: action, ctx: transaction.id, username: user.userPrincipalName))
                }
                transaction.conditionalAccessMFA = true
            case .mfa, .mfaRegistration:
                transaction.conditionalAccessMFA = true
            case .authenticationStrength(let strength):
                transaction.requiredStrength = strength
                transaction.conditionalAccessMFA = true
            }
        }
        if !transaction.mfaVerified, await needsMFA(user, transaction) {
            let methods = await SecondFactorFlow(services: services).usableMethods(user, transaction, policy: policy)
            guard let method = methods.first else {
                if let strength = transaction.requiredStrength {
                    await state.finish(transaction.id)
                    return await refusalPage(
                        RefusalErrors.authenticationStrengthUnmet(strength), transaction, username: user.userPrincipalName, now: clock.now)
                }
                await state.update(transaction)
                return .html(RefusalPages.moreInformationRequired(action: action, ctx: transaction.id, username: user.userPrincipalName))
            }
            return await SecondFactorFlow(services: services).challenge(method, transaction, user: user, others: methods.count > 1)
        }
        if let strength = transaction.requiredStrength, !transaction.meets(strength) {
            await state.finish(transaction.id)
            return await refusalPage(
                RefusalErrors.authenticationStrengthUnmet(strength), transaction, username: user.userPrincipalName, now: clock.now)
        }
        return await SecondFactorFlow(services: services).afterSecondFactor(transaction, user: user)
    }

    /// First factor and, when needed, MFA checked, or signed in by the session.
    func isAuthenticated(_ transaction: SignInTransaction, users: Directory) async -> Bool {
        guard let user = transaction.userID.flatMap(users.user(id:)) else { return false }
        if transaction.fromSession { return true }
        guard transaction.firstFactorVerified else { return false }
        if transaction.mfaVerified { return true }
        return await !needsMFA(user, transaction)
    }

    /// Whether this sign-in needs a second factor: the user always has MFA, the request's claims
    /// ask for it, Conditional Access demands it, or an administrator demanded it for the user's
    /// next sign-in.
    func needsMFA(_ user: DirectoryUser, _ transaction: SignInTransaction) async -> Bool {
        if user.requiresMFA || transaction.request.demandsMFA || transaction.conditionalAccessMFA { return true }
        return await state.isMFADemanded(userID: user.id)
    }

    /// A form out of order: back to the first page of the same transaction.
    func restart(_ transaction: SignInTransaction, action: String) -> Response {
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
        if transaction.mfaVerified { await state.mfaSatisfied(userID: userID) }

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
                        action: SignInController(services: services).loginAction(endpoint), ctx: transaction.id,
                        username: user.userPrincipalName,
                        appName: authorization.client.name))
            }
            return .html(
                SignInPages.needAdminApproval(
                    action: SignInController(services: services).loginAction(endpoint), ctx: transaction.id,
                    username: user.userPrincipalName,
                    appName: authorization.client.name))
        }
        guard !missing.isEmpty else { return nil }
        await state.update(transaction)
        let ordered = missing.sorted { Self.consentOrder($0) < Self.consentOrder($1) }
        return .html(
            SignInPages.consent(
                action: SignInController(services: services).loginAction(endpoint), ctx: transaction.id, username: user.userPrincipalName,
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
            name: SignInController(services: services).sessionCookieName(tenant), value: value,
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
    func refusalPage(_ failure: ServiceError, _ transaction: SignInTransaction, username: String?, now: Date) async -> Response {
        if let device = transaction.deviceKey {
            // A device code's sign-in: the device polling with its code hears the same refusal, as
            // Entra's does (the AADSTS error at its token request).
            await state.declineDevice(key: device, refusal: failure)
        }
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
}
