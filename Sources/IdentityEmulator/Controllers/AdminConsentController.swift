import FoundationEssentials
import HTTPTypes
import Hummingbird

/// Microsoft's admin consent endpoint, `/{tenant}/v2.0/adminconsent?client_id=…&scope=…&redirect_uri=…`:
/// the link Sesame gives a person to send their administrator. An administrator of the tenant
/// (the tenant policy's `administrators`) signs in, reads the permissions, and grants them for the
/// whole organization; the browser goes back to the redirect URI with `admin_consent=True` (or, for
/// a redirect URI a browser cannot open — a desktop app's nativeclient — a page that says it is done).
/// Anyone else is told that only an administrator can grant it.
struct AdminConsentController: EmulatorController {
    let services: EmulatorServices

    /// `GET` shows the administrator's sign-in; `POST` (step `signin`, then `accept`) acts.
    func adminConsent(
        _ request: Request, endpoint resolve: @autoclosure () throws(EndpointError) -> IdentityEndpoint
    ) async throws
        -> Response
    {
        let now = clock.now
        let endpoint: IdentityEndpoint
        do { endpoint = try resolve() } catch { return errorPage(error.serviceError, now) }
        let query = request.queryFields
        guard let clientID = query.nonEmpty("client_id")?.lowercased(),
            let client = clients.first(where: { $0.clientID == clientID && $0.tenantKinds.contains(endpoint.tenant.kind) })
        else {
            return errorPage(.unknownClient(query["client_id"] ?? "", tenant: endpoint.tenant.id), now)
        }
        let scope = query.nonEmpty("scope") ?? "https://graph.microsoft.com/.default"
        let scopes: ScopeRequest
        do {
            scopes = try ScopeRequest.parse(scope, tenant: endpoint.tenant, clientID: clientID, lenient: configuration.lenient)
        } catch {
            return errorPage(error, now)
        }
        let action = request.uri.description
        guard request.method == .post else { return .html(AdminConsentPages.signIn(action: action, appName: client.name, error: nil)) }

        let form = try await request.formFields()
        let name = form[SignInPageIDs.Fields.userName] ?? ""
        let policy = await state.policy(for: endpoint.tenant)
        guard let user = directory(for: endpoint.tenant).user(signInName: name),
            user.checks(password: form[SignInPageIDs.Fields.password] ?? "")
        else {
            return .html(
                AdminConsentPages.signIn(action: action, appName: client.name, error: "Your account or password is incorrect."))
        }
        guard policy.isAdministrator(user.userPrincipalName) else {
            return .html(
                AdminConsentPages.signIn(
                    action: action, appName: client.name,
                    error: "\(user.userPrincipalName) is not an administrator of \(endpoint.tenant.displayName): only an administrator "
                        + "can grant consent for the organization."))
        }
        let keys = scopes.consentKeys.union(["offline_access", "profile", "email"])
        guard form["step"] == "accept" else {
            return .html(
                AdminConsentPages.permissions(
                    action: action, appName: client.name, administrator: user.userPrincipalName,
                    permissions: keys.sorted().map(SignInPages.permissionText), userName: name,
                    password: form[SignInPageIDs.Fields.password] ?? ""))
        }
        await state.grantAdminConsent(keys, clientID: client.clientID)
        configuration.announce("admin-consent \(client.clientID) by \(user.userPrincipalName)")
        if let target = query.nonEmpty("redirect_uri"), let reply = client.replyURI(for: target, emulatorBase: base),
            reply.hasPrefix("http"), !reply.hasSuffix("/nativeclient")
        {
            var fields = FormFields([("admin_consent", "True"), ("tenant", endpoint.tenant.id), ("scope", scope)])
            if let state = query.nonEmpty("state") { fields.append("state", state) }
            return .found(reply + (reply.contains("?") ? "&" : "?") + fields.encoded)
        }
        return .html(AdminConsentPages.granted(appName: client.name, tenant: endpoint.tenant.displayName))
    }

    private func errorPage(_ failure: ServiceError, _ now: Date) -> Response {
        .html(
            SignInPages.error(failure, traceID: Identifiers.guid(), correlationID: Identifiers.guid(), at: now), status: .badRequest)
    }
}

/// The admin consent endpoint's pages.
enum AdminConsentPages {
    private typealias IDs = SignInPageIDs

    static func signIn(action: String, appName: String, error: String?) -> HTML {
        PageLayout.microsoft(
            title: "Sign in to your account",
            body: """
                <form method="post" action="\(action)" autocomplete="off" novalidate>
                  \(PageLayout.hidden("step", "signin"))
                  <h1 id="pageTitle">Sign in as an administrator</h1>
                  <p>An administrator of your organization can grant \(appName) the permissions it asks for, for everyone.</p>
                  \(PageLayout.error(error, id: IDs.passwordError))
                  <input type="email" name="\(IDs.Fields.userName)" id="\(IDs.userName)" placeholder="Email" aria-label="Administrator's email" autofocus>
                  <input type="password" name="\(IDs.Fields.password)" id="\(IDs.password)" placeholder="Password" aria-label="Password">
                  <div class="buttons"><input type="submit" id="\(IDs.primaryButton)" class="btn btn-primary" value="Sign in"></div>
                </form>
                """)
    }

    static func permissions(
        action: String, appName: String, administrator: String, permissions: [String], userName: String, password: String
    ) -> HTML {
        let items = permissions.map { HTML("<li>\($0)</li>") }
        return PageLayout.microsoft(
            title: "Permissions requested",
            body: """
                <form method="post" action="\(action)">
                  \(PageLayout.hidden("step", "accept"))\(PageLayout.hidden(IDs.Fields.userName, userName))\(PageLayout.hidden(IDs.Fields.password, password))
                  <h1 id="pageTitle">Permissions requested</h1>
                  <div id="appName"><b>\(appName)</b></div>
                  <p>Accept for your organization: this app would be able to, for every user:</p>
                  <ul class="permissions" id="\(IDs.permissionList)">\(items)</ul>
                  <p class="small">Signed in as \(administrator).</p>
                  <div class="buttons">
                    <button type="submit" id="\(IDs.primaryButton)" class="btn btn-primary" autofocus>Accept</button>
                  </div>
                </form>
                """)
    }

    static func granted(appName: String, tenant: String) -> HTML {
        PageLayout.microsoft(
            title: "Permissions granted",
            body: """
                <h1 id="pageTitle">Permissions granted</h1>
                <p id="adminConsentGranted">\(appName) now has the permissions it asked for, for everyone in \(tenant). People can \
                sign in to it again.</p>
                """)
    }
}
