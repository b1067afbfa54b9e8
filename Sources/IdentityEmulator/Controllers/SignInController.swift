import FoundationEssentials
import HTTPTypes
import Hummingbird

/// `/authorize`, the sign-in pages posting to `/{tenant}/login`, and `/logout`: Entra's pages, and B2C's through ``B2CController``.
struct SignInController: EmulatorController {
    let services: EmulatorServices

    static let workforceCookie = "ESTSAUTH"
    static let b2cCookie = "x-ms-cpim-sso-fabrikamb2c"

    func sessionCookieName(_ tenant: Tenant) -> String { tenant.kind == .b2c ? Self.b2cCookie : Self.workforceCookie }

    /// What follows a page: the next factor, the finish, the refusals and error pages.
    var flow: SignInFlow { SignInFlow(services: services) }

    // MARK: GET /authorize

    /// `/authorize`: the request parsed (its errors on a page or back at the app), then the B2C
    /// user flows' answer or Entra's, each of which may sign in from the browser's session.
    func authorize(_ request: Request, endpoint resolve: @autoclosure () throws(EndpointError) -> IdentityEndpoint) async throws -> Response
    {
        let now = clock.now
        let endpoint: IdentityEndpoint
        do { endpoint = try resolve() } catch { return flow.errorPage(error.serviceError, correlationID: nil, now: now) }

        let authorization: AuthorizeRequest
        do {
            authorization = try AuthorizeRequest.parse(
                request.queryFields, endpoint: endpoint, clients: clients, emulatorBase: base, lenient: configuration.lenient)
        } catch .page(let failure) {
            return flow.errorPage(failure, correlationID: request.queryFields["client-request-id"], now: now)
        } catch .redirect(let failure, let reply) {
            return flow.errorRedirect(failure, reply: reply, now: now)
        }

        if endpoint.isMultiTenant, endpoint.tenant.kind == .workforce, !authorization.client.multiTenant {
            return flow.errorRedirect(
                .singleTenantAppAtCommon(clientID: authorization.client.clientID, appName: authorization.client.name),
                reply: authorization.reply, now: now)
        }

        let session = await browserSession(request, tenant: endpoint.tenant)
        let transaction = await state.begin(authorization, now: now)
        if endpoint.tenant.kind == .b2c { return await authorizeB2C(transaction, session: session, now: now) }
        if let credential = request.cookies[DeviceSingleSignOn.credentialCookie]?.value ?? request.headers[.refreshTokenCredential],
            let answer = await DeviceSingleSignOn(services: services).signIn(
                credential, transaction: transaction, request: request, now: now)
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
            guard let session else { return flow.errorRedirect(.b2cNoSession, reply: authorization.reply, now: now) }
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
            guard let session else { return flow.errorRedirect(.loginRequired, reply: authorization.reply, now: now) }
            let missing = authorization.scopes.consentKeys.subtracting(
                await state.consentedPermissions(userID: session.session.userID, clientID: authorization.client.clientID))
            guard missing.isEmpty else {
                return flow.errorRedirect(
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
    func answerFromSession(
        _ input: SignInTransaction, session: SignInSession, now: Date, recording: Bool = true
    ) async -> Response {
        var transaction = input
        transaction.userID = session.userID
        transaction.fromSession = true
        if recording { await state.update(transaction) }
        return await flow.complete(transaction, session: session, now: now)
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
            return flow.errorPage(.flowTokenExpired, correlationID: nil, now: now)
        }
        let endpoint = transaction.request.endpoint
        transaction.platform = ClientPlatform.of(userAgent: request.headers[.userAgent])

        var steps = LoginSteps(
            services: services, form: form, ctx: ctx, transaction: transaction,
            cookie: request.cookies[sessionCookieName(endpoint.tenant)]?.value, now: now)
        switch form["step"] ?? "" {
        case "username": return await steps.username()
        case "password" where transaction.foreignUserName != nil: return await steps.foreignPassword()
        case "password": return await steps.password()
        case "password-update": return await steps.passwordUpdate()
        case "proofup": return await steps.proofup()
        case "proofup-phone": return await steps.proofupPhone()
        case "admin-request": return await steps.adminRequest()
        case let step where SecondFactorSteps.steps.contains(step):
            var second = SecondFactorSteps(steps)
            return await second.answer(step)
        case "fido": return await steps.fido()
        case "kmsi": return await steps.kmsi()
        case "consent": return await steps.consent()
        case "admin-approval": return await steps.adminApproval()
        case "pick": return await steps.pick()
        case "device-confirm": return await steps.deviceConfirm()
        case "b2c-signin", "b2c-signup", "b2c-reset":
            return try await B2CController(services: services).b2cStep(form, transaction: transaction, now: now)
        default: return flow.restart(transaction, action: loginAction(endpoint))
        }
    }

    // MARK: GET /logout

    func logout(_ request: Request, endpoint resolve: @autoclosure () throws(EndpointError) -> IdentityEndpoint) async throws -> Response {
        let now = clock.now
        let endpoint: IdentityEndpoint
        do { endpoint = try resolve() } catch { return flow.errorPage(error.serviceError, correlationID: nil, now: now) }
        let name = sessionCookieName(endpoint.tenant)
        if let cookie = request.cookies[name]?.value { await state.endSession(cookie: cookie) }
        var response: Response
        if let target = request.queryFields.nonEmpty("post_logout_redirect_uri") {
            guard clients.contains(where: { $0.replyURI(for: target, emulatorBase: base) != nil }) else {
                return flow.errorPage(
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
