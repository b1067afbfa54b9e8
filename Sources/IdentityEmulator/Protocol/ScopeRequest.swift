/// What a `scope` parameter asks for: OpenID Connect scopes and the permissions of one resource
/// (Microsoft Graph, Exchange Online, or the B2C app's task API) — and, on Entra's `/authorize`,
/// the permissions of further resources the user consents to at once (the token is for the first).
struct ScopeRequest: Sendable, Equatable {
    enum Resource: String, Sendable, Equatable {
        /// Microsoft Graph: v1-shaped access tokens for `00000003-0000-0000-c000-000000000000`.
        case graph
        /// The B2C task API: access tokens whose `aud` is the task API's app id, with `scp`.
        case taskAPI
        /// Exchange Online (IMAP, POP, SMTP): v1-shaped access tokens whose `aud` is the resource as
        /// asked for (`https://outlook.office.com`), with fully qualified scopes in `scope`.
        case exchange
        /// B2C: the requesting app's own client id as a scope: an access token for the app itself
        /// (`aud` its client id, no `scp`), answered with `"scope": "/"`.
        case ownApp
        /// The device registration service: v1-shaped access tokens whose `aud` is
        /// `urn:ms-drs:enterpriseregistration.windows.net`. A first-party resource: only the
        /// Microsoft clients it preauthorizes may ask for it (``ClientRegistration/mayRegisterDevices``).
        case deviceRegistration
    }

    /// `openid`, `profile`, `email`, `offline_access` as sent (lower-cased).
    var oidc: Set<String> = []
    /// The resource the access token is for; nil when only OIDC scopes were asked for.
    var resource: Resource?
    /// The resource's permissions, canonically spelled (`User.Read`, `read`).
    var permissions: [String] = []
    /// The access token's `aud` for Exchange: the resource URI the first scope named.
    var audience: String?
    /// Permissions of further resources (Entra): consented with these, not in this token.
    var alsoConsented: Set<String> = []

    static let graphAppID = "00000003-0000-0000-c000-000000000000"
    static let graphPermissions = [
        "User.Read", "User.ReadBasic.All", "User.Read.All", "Directory.Read.All", "Mail.Read", "Calendars.Read",
        "People.Read",
    ]
    /// Exchange Online's app id, and the resource URIs its scopes are named under.
    static let exchangeAppID = "00000002-0000-0ff1-ce00-000000000000"
    static let exchangeResources = ["https://outlook.office.com", "https://outlook.office365.com"]
    static let exchangePermissions = ["IMAP.AccessAsUser.All", "POP.AccessAsUser.All", "SMTP.Send"]
    /// The device registration service's resource URI and app id.
    static let deviceRegistrationResource = "urn:ms-drs:enterpriseregistration.windows.net"
    static let deviceRegistrationAppID = "01cb2876-7ebd-4aa4-9cc9-d28bd4d359a9"
    static let taskAPIBase = "https://fabrikamb2c.onmicrosoft.com/tasks/"
    static let taskPermissions = ["read", "write"]

    var wantsIDToken: Bool { oidc.contains("openid") }
    var wantsRefreshToken: Bool { oidc.contains("offline_access") }

    /// Parses a space-separated `scope` for a tenant and the requesting client; unknown scopes
    /// fail as the service fails. `lenient` reads a B2C client-id scope as the task API's
    /// `read write`, as the emulator once did.
    static func parse(_ text: String, tenant: Tenant, clientID: String, lenient: Bool = false) throws(ServiceError) -> ScopeRequest {
        var request = ScopeRequest()
        for scope in text.split(whereSeparator: { $0 == " " || $0 == "+" }).map(String.init) {
            let lower = scope.lowercased()
            if ["openid", "profile", "email", "offline_access"].contains(lower) {
                request.oidc.insert(lower)
                continue
            }
            let (resource, permission) = try classify(scope, tenant: tenant, clientID: clientID, lenient: lenient)
            if request.resource == nil {
                request.resource = resource
                if resource == .exchange { request.audience = exchangeAudience(of: scope) }
            }
            // Entra issues a token for the first resource only (the user consents to the others
            // at once); B2C refuses a second one.
            guard request.resource == resource else {
                if tenant.kind == .b2c {
                    throw ServiceError.b2c(
                        "invalid_request", 90146,
                        "The scope '\(text)' provided in request specifies more than one resource for an access token, which is "
                            + "not supported."
                    )
                }
                for other in permission { request.alsoConsented.insert("\(resource.rawValue):\(other)") }
                continue
            }
            for granted in permission where !request.permissions.contains(granted) { request.permissions.append(granted) }
        }
        return request
    }

    private static func classify(
        _ scope: String, tenant: Tenant, clientID: String, lenient: Bool
    ) throws(ServiceError) -> (
        Resource, [String]
    ) {
        let lower = scope.lowercased()
        switch tenant.kind {
        case .workforce:
            if [deviceRegistrationResource, deviceRegistrationAppID].contains(where: { lower.hasPrefix($0 + "/") }) {
                guard ClientRegistration.mayRegisterDevices(clientID) else {
                    throw .entra(
                        "invalid_request", 650_057,
                        "Invalid resource. The client has requested access to a resource which is not listed in the requested "
                            + "permissions in the client's application registration. Client app ID: \(clientID). Resource value "
                            + "from request: \(deviceRegistrationResource). Resource app ID: \(deviceRegistrationAppID).")
                }
                return (.deviceRegistration, ["adrs_access"])
            }
            if let exchange = exchangeAudience(of: scope) {
                let name = String(scope.dropFirst(exchange.count + 1))
                if name == ".default" { return (.exchange, exchangePermissions) }
                guard let known = exchangePermissions.first(where: { $0.equalsIgnoringCase(name) }) else { throw .invalidScope(scope) }
                return (.exchange, [known])
            }
            var name = scope
            for prefix in ["https://graph.microsoft.com/", "\(graphAppID)/"] where lower.hasPrefix(prefix) {
                name = String(scope.dropFirst(prefix.count))
            }
            if name == ".default" { return (.graph, ["User.Read"]) }
            if let known = graphPermissions.first(where: { $0.equalsIgnoringCase(name) }) {
                return (.graph, [known])
            }
            if name == scope, !scope.contains("://"), !scope.contains("/") { throw .invalidScope(scope) }
            let resource =
                scope.contains("://") ? String(scope[..<(scope.lastIndex(of: "/") ?? scope.endIndex)]) : scope
            throw .invalidResource(resource, tenant: tenant.id)
        case .b2c:
            if lower == clientID.lowercased() { return lenient ? (.taskAPI, taskPermissions) : (.ownApp, []) }
            if lower.hasPrefix(taskAPIBase), let permission = taskPermissions.first(where: { lower == taskAPIBase + $0 }) {
                return (.taskAPI, [permission])
            }
            throw ServiceError.b2c("invalid_scope", 90117, "The scope '\(scope)' provided in the request is not supported.")
        }
    }

    /// The Exchange resource a scope is named under, as it names it (`https://outlook.office.com`,
    /// or Exchange's app id); nil for another resource's scope.
    static func exchangeAudience(of scope: String) -> String? {
        let lower = scope.lowercased()
        return (exchangeResources + [exchangeAppID]).first { lower.hasPrefix($0 + "/") }
    }

    /// The scopes as the token response's `scope` names them: Graph's by their short names,
    /// other resources' qualified by the resource (`https://outlook.office.com/SMTP.Send`).
    var grantedNames: [String] {
        guard resource == .exchange, let audience else { return permissions }
        return permissions.map { "\(audience)/\($0)" }
    }

    /// Permissions only an administrator can grant (users cannot consent to them), by consent key.
    static let adminOnly: Set<String> = ["graph:User.Read.All", "graph:Directory.Read.All", "graph:Mail.Read.Shared"]

    /// The permissions that need the user's consent, keyed by resource (`graph:User.Read`).
    var consentKeys: Set<String> {
        var keys = Set(permissions.map { "\(resource?.rawValue ?? ""):\($0)" }).union(alsoConsented)
        if wantsRefreshToken { keys.insert("offline_access") }
        if oidc.contains("email") { keys.insert("email") }
        if oidc.contains("profile") { keys.insert("profile") }
        return keys
    }
}
