import Crypto
import FoundationEssentials

/// Mints tokens and token responses the way each service shapes them: Entra v2 (integer lifetimes,
/// `ext_expires_in`, v1-shaped Graph access tokens) and B2C (string numbers, `not_before`,
/// `profile_info`, trailing-slash issuer, `tfp`, `emails`).
struct TokenIssuer: Sendable {
    let base: URL
    let key: SigningKey
    /// `--access-token-lifetime`; nil for the services' own lifetimes.
    var accessTokenLifetime: Int? = nil

    /// The issuer of the tenant's id_tokens: `{base}/{tid}/v2.0` (Entra) or `{base}/{tid}/v2.0/` (B2C).
    func issuer(for tenant: Tenant) -> String {
        let root = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
        return tenant.kind == .b2c ? "\(root)/\(tenant.id)/v2.0/" : "\(root)/\(tenant.id)/v2.0"
    }

    /// `client_info`: base64url `{"uid","utid"}`; B2C's uid is `{oid}-{policy lower-cased}`.
    func clientInfo(user: DirectoryUser, tenant: Tenant, policy: String?) -> String {
        let uid = policy.map { "\(user.id)-\($0.lowercased())" } ?? user.id
        return Base64URL.encode(JSON.object([("uid", .string(uid)), ("utid", .string(tenant.id))]).data)
    }

    /// The token endpoint's success body for a redeemed grant.
    func response(
        for grant: Grant, user: DirectoryUser, tenant: Tenant, scopes: ScopeRequest, requestedScope: String,
        nonce: String?, clientInfo wantsClientInfo: Bool, refreshToken: String?, appName: String, now: Date
    ) throws -> JSON {
        switch tenant.kind {
        case .workforce:
            return try entraResponse(
                grant: grant, user: user, tenant: tenant, scopes: scopes, nonce: nonce,
                wantsClientInfo: wantsClientInfo, refreshToken: refreshToken, appName: appName, now: now)
        case .b2c:
            return try b2cResponse(
                grant: grant, user: user, tenant: tenant, scopes: scopes, requestedScope: requestedScope,
                nonce: nonce, wantsClientInfo: wantsClientInfo, refreshToken: refreshToken, now: now)
        }
    }

    // MARK: Entra

    private func entraResponse(
        grant: Grant, user: DirectoryUser, tenant: Tenant, scopes: ScopeRequest, nonce: String?,
        wantsClientInfo: Bool, refreshToken: String?, appName: String, now: Date
    ) throws -> JSON {
        // Access tokens live 60–90 minutes (randomized, as Entra does); clients must read expires_in.
        let lifetime = accessTokenLifetime ?? Int.random(in: 3600...5400)
        var echoed = scopes.grantedNames
        if scopes.wantsIDToken { echoed += ["profile", "openid", "email"] }
        let accessToken: String
        if scopes.resource == .exchange, let audience = scopes.audience {
            accessToken = try exchangeAccessToken(
                grant: grant, user: user, tenant: tenant, audience: audience, scp: scopes.permissions.joined(separator: " "),
                appName: appName, now: now, lifetime: lifetime)
        } else if scopes.resource == .deviceRegistration {
            accessToken = try exchangeAccessToken(
                grant: grant, user: user, tenant: tenant, audience: ScopeRequest.deviceRegistrationResource, scp: "adrs_access",
                appName: appName, now: now, lifetime: lifetime, resourceAppID: ScopeRequest.deviceRegistrationAppID)
        } else {
            var scp = scopes.permissions
            if scopes.wantsIDToken { scp += ["profile", "openid", "email"] }
            accessToken = try graphAccessToken(
                grant: grant, user: user, tenant: tenant, scp: scp.joined(separator: " "), appName: appName, now: now, lifetime: lifetime)
        }
        let idToken =
            scopes.wantsIDToken ? try entraIDToken(grant: grant, user: user, tenant: tenant, scopes: scopes, nonce: nonce, now: now) : nil
        return .members([
            ("token_type", .string("Bearer")),
            ("scope", .string(echoed.joined(separator: " "))),
            ("expires_in", .int(lifetime)),
            ("ext_expires_in", .int(lifetime)),
            ("access_token", .string(accessToken)),
            ("refresh_token", refreshToken.map(JSON.string)),
            ("id_token", idToken.map(JSON.string)),
            ("client_info", wantsClientInfo ? .string(clientInfo(user: user, tenant: tenant, policy: nil)) : nil),
        ])
    }

    /// The id_token: `profile` brings `name`, `oid` and `preferred_username`; `email` brings `email`.
    func entraIDToken(grant: Grant, user: DirectoryUser, tenant: Tenant, scopes: ScopeRequest, nonce: String?, now: Date) throws -> String {
        let profile = scopes.oidc.contains("profile")
        let claims = JSON.members([
            ("aud", .string(grant.clientID)),
            ("iss", .string(issuer(for: tenant))),
            ("iat", .int(now.epochSeconds)),
            ("nbf", .int(now.epochSeconds)),
            ("exp", .int(now.epochSeconds + 3600)),
            ("deviceid", grant.deviceID.map(JSON.string)),
            ("email", scopes.oidc.contains("email") ? user.mail.map(JSON.string) : nil),
            ("name", profile ? .string(user.displayName) : nil),
            ("nonce", nonce.map(JSON.string)),
            ("oid", profile ? .string(user.id) : nil),
            ("preferred_username", profile ? .string(user.userPrincipalName) : nil),
            ("rh", .string(Self.opaqueClaim())),
            ("sid", .string(grant.sessionID)),
            ("sub", .string(Self.pairwiseSubject(userID: user.id, clientID: grant.clientID))),
            ("tid", .string(tenant.id)),
            ("uti", .string(Self.opaqueClaim(bytes: 16))),
            ("ver", .string("2.0")),
        ])
        return try JSONWebToken.sign(
            header: .object([("typ", .string("JWT")), ("alg", .string("RS256")), ("kid", .string(key.keyID))]),
            claims: claims, with: key)
    }

    /// A Microsoft Graph access token: v1-shaped, with the extra header `nonce` that makes it opaque
    /// to clients.
    func graphAccessToken(
        grant: Grant, user: DirectoryUser, tenant: Tenant, scp: String, appName: String, now: Date, lifetime: Int
    ) throws -> String {
        try v1AccessToken(
            grant: grant, user: user, tenant: tenant, audience: ScopeRequest.graphAppID, resourceAppID: ScopeRequest.graphAppID,
            scp: scp, appName: appName, now: now, lifetime: lifetime, opaque: true)
    }

    /// An Exchange Online access token (IMAP, POP, SMTP): v1-shaped as Graph's, `aud` the resource
    /// as asked for, `scp` its permissions only, and a plain header (`typ` `JWT`, `kid`), so that a
    /// mail server validating it locally (Dovecot's `oauth2` passdb) checks the signature as is.
    /// The device registration service's tokens take the same shape.
    func exchangeAccessToken(
        grant: Grant, user: DirectoryUser, tenant: Tenant, audience: String, scp: String, appName: String, now: Date, lifetime: Int,
        resourceAppID: String = ScopeRequest.exchangeAppID
    ) throws -> String {
        try v1AccessToken(
            grant: grant, user: user, tenant: tenant, audience: audience, resourceAppID: resourceAppID, scp: scp, appName: appName,
            now: now, lifetime: lifetime, opaque: false)
    }

    /// A v1 access token as Entra issues one for a Microsoft resource; `opaque`: Graph's extra
    /// header `nonce`, which makes its signature one only Graph can check.
    private func v1AccessToken(
        grant: Grant, user: DirectoryUser, tenant: Tenant, audience: String, resourceAppID: String, scp: String, appName: String,
        now: Date, lifetime: Int, opaque: Bool
    ) throws -> String {
        let claims = JSON.members([
            ("aud", .string(audience)),
            ("iss", .string("https://sts.windows.net/\(tenant.id)/")),
            ("iat", .int(now.epochSeconds)),
            ("nbf", .int(now.epochSeconds)),
            ("exp", .int(now.epochSeconds + lifetime)),
            ("acct", .int(0)),
            ("acr", .string("1")),
            ("amr", .array(grant.methods.map(JSON.string))),
            ("app_displayname", .string(appName)),
            ("appid", .string(grant.clientID)),
            ("appidacr", .string("0")),
            ("deviceid", grant.deviceID.map(JSON.string)),
            ("family_name", .string(user.surname)),
            ("given_name", .string(user.givenName)),
            ("idtyp", .string("user")),
            ("ipaddr", .string("127.0.0.1")),
            ("name", .string(user.displayName)),
            ("oid", .string(user.id)),
            ("scp", .string(scp)),
            ("sid", .string(grant.sessionID)),
            ("sub", .string(Self.pairwiseSubject(userID: user.id, clientID: resourceAppID))),
            ("tid", .string(tenant.id)),
            ("unique_name", .string(user.userPrincipalName)),
            ("upn", .string(user.userPrincipalName)),
            ("uti", .string(Self.opaqueClaim(bytes: 16))),
            ("ver", .string("1.0")),
        ])
        let header = JSON.object(
            [("typ", .string("JWT"))] + (opaque ? [("nonce", .string(Self.opaqueClaim()))] : [])
                + [("alg", .string("RS256")), ("x5t", .string(key.keyID)), ("kid", .string(key.keyID))])
        return try JSONWebToken.sign(header: header, claims: claims, with: key)
    }

    // MARK: B2C

    private func b2cResponse(
        grant: Grant, user: DirectoryUser, tenant: Tenant, scopes: ScopeRequest, requestedScope: String, nonce: String?,
        wantsClientInfo: Bool, refreshToken: String?, now: Date
    ) throws -> JSON {
        let lifetime = accessTokenLifetime ?? 3600
        let audience: String? =
            switch scopes.resource {
            case .taskAPI: ClientRegistration.taskAPIAppID
            case .ownApp: grant.clientID
            case .graph, .exchange, .deviceRegistration, nil: nil
            }
        let accessToken = try audience.map { audience in
            try b2cToken(
                grant: grant, user: user, tenant: tenant, audience: audience,
                scp: scopes.resource == .taskAPI ? scopes.permissions.joined(separator: " ") : nil, nonce: nonce, now: now,
                lifetime: lifetime)
        }
        let idToken =
            scopes.wantsIDToken
            ? try b2cToken(grant: grant, user: user, tenant: tenant, audience: grant.clientID, scp: nil, nonce: nonce, now: now) : nil
        let profileInfo = JSON.object([
            ("ver", .string("1.0")), ("tid", .string(tenant.id)), ("oid", .string(user.id)), ("upn", .null),
            ("name", .string(user.displayName)),
        ])
        return .members([
            ("access_token", accessToken.map(JSON.string)),
            ("id_token", idToken.map(JSON.string)),
            ("token_type", .string("Bearer")),
            ("not_before", .string(String(now.epochSeconds))),
            ("expires_in", accessToken == nil ? nil : .string(String(lifetime))),
            ("expires_on", accessToken == nil ? nil : .string(String(now.epochSeconds + lifetime))),
            ("resource", audience.map(JSON.string)),
            ("id_token_expires_in", idToken == nil ? nil : .string(String(lifetime))),
            ("profile_info", .string(Base64URL.encode(profileInfo.data))),
            // B2C answers a request for the app's own client id with "/".
            ("scope", .string(scopes.resource == .ownApp ? "/" : requestedScope)),
            ("refresh_token", refreshToken.map(JSON.string)),
            ("refresh_token_expires_in", refreshToken == nil ? nil : .string("1209600")),
            ("client_info", wantsClientInfo ? .string(clientInfo(user: user, tenant: tenant, policy: grant.policy)) : nil),
        ])
    }

    /// A B2C id_token (audience the client) or access token (audience the task API, with `scp`).
    func b2cToken(
        grant: Grant, user: DirectoryUser, tenant: Tenant, audience: String, scp: String?, nonce: String?, now: Date, lifetime: Int = 3600
    ) throws -> String {
        let claims = JSON.members([
            ("ver", .string("1.0")),
            ("iss", .string(issuer(for: tenant))),
            ("sub", .string(user.id)),
            ("aud", .string(audience)),
            ("exp", .int(now.epochSeconds + lifetime)),
            ("nonce", nonce.map(JSON.string)),
            ("iat", .int(now.epochSeconds)),
            ("auth_time", .int(grant.authTime.epochSeconds)),
            ("oid", .string(user.id)),
            ("name", .string(user.displayName)),
            ("given_name", .string(user.givenName)),
            ("family_name", .string(user.surname)),
            ("emails", .array([.string(user.mail ?? user.userPrincipalName)])),
            ("newUser", grant.newUser && scp == nil ? .bool(true) : nil),
            ("tfp", .string(grant.policy ?? "")),
            ("scp", scp.map(JSON.string)),
            ("azp", scp == nil ? nil : .string(grant.clientID)),
            ("nbf", .int(now.epochSeconds)),
        ])
        return try JSONWebToken.sign(
            header: .object([("alg", .string("RS256")), ("kid", .string(key.keyID)), ("typ", .string("JWT"))]),
            claims: claims, with: key)
    }

    // MARK: Helpers

    /// Entra's `sub` is pairwise: stable per user and app, different across apps.
    static func pairwiseSubject(userID: String, clientID: String) -> String {
        String(Base64URL.encode(SHA256.hash(data: Data("\(userID)|\(clientID)".utf8))).prefix(43))
    }

    static func opaqueClaim(bytes: Int = 24) -> String { Identifiers.opaque(bytes: bytes) }
}
