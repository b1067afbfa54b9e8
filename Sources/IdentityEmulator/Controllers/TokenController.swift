import Crypto
import Foundation
import HTTPTypes
import Hummingbird

/// The token endpoint: the code, refresh-token grants and their errors, in Entra's and B2C's shapes.
struct TokenController: EmulatorController {
    let services: EmulatorServices

    func token(_ request: Request, context: BasicRequestContext, endpoint: IdentityEndpoint) async throws -> Response {
        let now = clock.now
        let form = try await request.formFields()
        let b2c = endpoint.tenant.kind == .b2c
        let correlationID = request.headers[.clientRequestID] ?? Identifiers.guid()

        func fail(_ error: ServiceError) -> Response {
            .json(
                error.json(traceID: Identifiers.guid(), correlationID: correlationID, at: now), status: .init(code: error.status),
                headers: [.cacheControl: "no-store, no-cache", .pragma: "no-cache"])
        }

        if let retryAfter = await state.takeThrottle() {
            var response = fail(.throttled())
            response.headers[.retryAfter] = String(retryAfter)
            return response
        }
        guard let clientID = form.nonEmpty("client_id")?.lowercased() else { return fail(.missingParameter("client_id")) }
        guard let client = clients.first(where: { $0.clientID == clientID && $0.tenantKinds.contains(endpoint.tenant.kind) }) else {
            return fail(.unknownClient(clientID, tenant: endpoint.tenant.id))
        }
        if endpoint.isMultiTenant, !b2c, !client.multiTenant {
            return fail(.singleTenantAppAtCommon(clientID: client.clientID, appName: client.name))
        }
        // Every registered client is public: it must not authenticate.
        if form.nonEmpty("client_secret") != nil || form.nonEmpty("client_assertion") != nil {
            return fail(b2c ? .b2cPublicClientSentSecret : .publicClientSentSecret)
        }
        guard let grantType = form.nonEmpty("grant_type") else { return fail(.missingParameter("grant_type")) }

        let grant: Grant
        var nonce: String?
        var family: String?
        switch grantType {
        case "authorization_code":
            guard let code = form.nonEmpty("code") else { return fail(.missingParameter("code")) }
            guard let redirectURI = form.nonEmpty("redirect_uri") else { return fail(.missingParameter("redirect_uri")) }
            let record: IdentityState.CodeRecord
            switch await state.redeemCode(code, now: now) {
            case .unknown: return fail(b2c ? .b2cMalformedGrant : .malformedGrant)
            case .alreadyRedeemed:
                return fail(b2c ? .b2cGrantExpired(now: now, issued: now, expires: now) : .codeRedeemed)
            case .expired(let expired):
                return fail(
                    b2c
                        ? .b2cGrantExpired(now: now, issued: expired.issuedAt, expires: expired.issuedAt + IdentityState.codeLifetime)
                        : .grantExpired)
            case .valid(let valid): record = valid
            }
            guard record.grant.clientID == clientID, record.grant.tenantID == endpoint.tenant.id else {
                return fail(.grantForAnotherClient)
            }
            if b2c, record.grant.policy != endpoint.policy {
                return fail(.b2cWrongPolicy(actual: endpoint.policy ?? "", expected: record.grant.policy ?? ""))
            }
            guard record.redirectURI == redirectURI else { return fail(.redirectMismatch(sent: redirectURI, expected: record.redirectURI)) }
            if let challenge = record.codeChallenge {
                let verifier = form["code_verifier"] ?? ""
                let computed = record.codeChallengeMethod == "S256" ? Base64URL.encode(SHA256.hash(data: Data(verifier.utf8))) : verifier
                guard !verifier.isEmpty, computed == challenge else { return fail(b2c ? .b2cVerifierMismatch : .verifierMismatch) }
            }
            grant = record.grant
            nonce = record.nonce

        case "refresh_token":
            guard let refreshToken = form.nonEmpty("refresh_token") else { return fail(.missingParameter("refresh_token")) }
            switch await state.useRefreshToken(refreshToken, now: now, strict: configuration.refreshTokenReuse == .revokeFamily) {
            case .unknown: return fail(b2c ? .b2cMalformedGrant : .malformedGrant)
            case .inactive(let record):
                return fail(
                    b2c
                        ? .b2cGrantExpired(now: now, issued: record.issuedAt, expires: record.issuedAt + IdentityState.b2cRefreshLifetime)
                        : .refreshTokenInactive(issued: record.issuedAt))
            case .revoked(let record, let validFrom):
                return fail(b2c ? .b2cGrantRevoked : .refreshTokenRevoked(issued: record.issuedAt, validFrom: validFrom))
            case .reused:
                return fail(b2c ? .b2cGrantRevoked : .refreshTokenReused)
            case .valid(let record):
                family = record.family
                guard record.grant.clientID == clientID, record.grant.tenantID == endpoint.tenant.id else {
                    return fail(.grantForAnotherClient)
                }
                // B2C refresh tokens are bound to the user flow that issued them.
                if b2c, record.grant.policy != endpoint.policy {
                    return fail(.b2cWrongPolicy(actual: endpoint.policy ?? "", expected: record.grant.policy ?? ""))
                }
                // Conditional Access asks for MFA on this user's next token (on command).
                if !b2c, await state.isMFADemanded(userID: record.grant.userID) {
                    return fail(.mfaRequired(resource: ScopeRequest.graphAppID))
                }
                grant = record.grant
            }

        case "urn:ietf:params:oauth:grant-type:device_code":
            if b2c { return fail(.b2cDeviceCodeUnsupported) }
            // MSAL sends both `device_code` and the older `code`; either is read.
            guard let deviceCode = form.nonEmpty("device_code") ?? form.nonEmpty("code") else {
                return fail(.missingParameter("device_code"))
            }
            switch await state.pollDevice(deviceCode: deviceCode, now: now) {
            case .unknown: return fail(.badVerificationCode)
            case .alreadyRedeemed: return fail(.grantForAnotherClient)
            case .pending: return fail(.authorizationPending)
            case .declined: return fail(.authorizationDeclined)
            case .expired: return fail(.deviceCodeExpired)
            case .approved(let approved, let device):
                guard device.clientID == clientID, approved.tenantID == endpoint.tenant.id else { return fail(.grantForAnotherClient) }
                grant = approved
            }

        default:
            return fail(.unsupportedGrantType(grantType))
        }

        // `scope` on the token request picks one resource among those consented; absent, the grant's.
        let requestedScope = form.nonEmpty("scope") ?? grant.scope
        let scopes: ScopeRequest
        do {
            scopes = try ScopeRequest.parse(requestedScope, tenant: endpoint.tenant, clientID: clientID, lenient: configuration.lenient)
        } catch {
            return fail(error)
        }
        if !b2c {
            let granted = try ScopeRequest.parse(grant.scope, tenant: endpoint.tenant, clientID: clientID, lenient: configuration.lenient)
                .consentKeys
                .union(await state.consentedPermissions(userID: grant.userID, clientID: clientID))
            let missing = scopes.consentKeys.subtracting(granted).subtracting(["profile", "email"])
            if !missing.isEmpty {
                var error = ServiceError.consentRequired(clientID: clientID, appName: client.name)
                error = ServiceError(
                    error: "invalid_grant", codes: error.codes, message: error.message, service: .entra, suberror: "consent_required")
                return fail(error)
            }
        }
        guard let user = directory(for: endpoint.tenant).user(id: grant.userID) else {
            return fail(b2c ? .b2cGrantRevoked : .entra("invalid_grant", 50034, "The user account does not exist in the directory."))
        }

        // A rotated refresh token carries the grant's scopes, not the narrower ones of this request.
        let refreshToken =
            scopes.wantsRefreshToken || ScopeRequest.wantsRefresh(grant.scope)
            ? await state.issueRefreshToken(for: grant, now: now, family: family) : nil
        let body = try issuer.response(
            for: grant, user: user, tenant: endpoint.tenant, scopes: scopes, requestedScope: requestedScope,
            nonce: grantType == "authorization_code" ? nonce : nil, clientInfo: form["client_info"] == "1",
            refreshToken: refreshToken, appName: client.name, now: now)
        return .json(body, headers: [.cacheControl: "no-store, no-cache", .pragma: "no-cache", .clientRequestID: correlationID])
    }
}

extension ScopeRequest {
    /// Whether a scope string (as granted) includes `offline_access`.
    static func wantsRefresh(_ scope: String) -> Bool {
        scope.split(separator: " ").contains { $0.lowercased() == "offline_access" }
    }
}
