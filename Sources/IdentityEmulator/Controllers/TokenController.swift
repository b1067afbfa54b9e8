import Crypto
import FoundationEssentials
import HTTPTypes
import Hummingbird

/// The token endpoint: the code, refresh-token grants and their errors, in Entra's and B2C's shapes.
///
/// ``token(_:context:endpoint:)`` reads as a table: the checks every request passes (throttle,
/// client, secret, grant type), one function per grant type that redeems what the client sent for
/// a ``Grant`` or fails with a ``ServiceError``, then ``issue(_:for:answer:)``.
struct TokenController: EmulatorController {
    let services: EmulatorServices

    /// RFC 8628's grant type: a device polling for the sign-in a person finishes elsewhere.
    static let deviceCodeGrantType = "urn:ietf:params:oauth:grant-type:device_code"

    func token(_ request: Request, context: BasicRequestContext, endpoint: IdentityEndpoint) async throws -> Response {
        try await token(form: try await request.formFields(), headers: request.headers, endpoint: endpoint)
    }

    /// A token request whose form is read (v1's `/oauth2/token` rewrites `resource` first).
    func token(form: FormFields, headers: HTTPFields, endpoint: IdentityEndpoint) async throws -> Response {
        let now = clock.now
        let answer = TokenAnswer(correlationID: headers[.clientRequestID] ?? Identifiers.guid(), now: now)

        if let retryAfter = await state.takeThrottle() { return answer.throttled(retryAfter: retryAfter) }
        let token: TokenRequest
        do { token = try check(form, endpoint: endpoint, now: now) } catch { return answer.failure(error) }

        let redeemed: RedeemedGrant
        do throws(ServiceError) {
            switch token.grantType {
            case "authorization_code": redeemed = try await redeemCode(token)
            case "refresh_token": redeemed = try await redeemRefreshToken(token)
            case Self.deviceCodeGrantType: redeemed = try await redeemDeviceCode(token)
            case "password": redeemed = try await redeemPassword(token)
            default: throw ServiceError.unsupportedGrantType(token.grantType)
            }
            // Entra evaluates the device at every grant that names one, as at the PRT's own use: a
            // code or refresh token from a PRT's sign-in dies with its device (AADSTS700003, 135011).
            if let deviceID = redeemed.grant.deviceID { try await devices.checkStanding(of: deviceID, tenant: token.endpoint.tenant.id) }
            if !token.b2c {
                let platform = ClientPlatform.of(userAgent: headers[.userAgent], clientOS: headers[.clientOS])
                do {
                    try await enforcePolicy(on: redeemed.grant, tenant: token.endpoint.tenant, platform: platform)
                } catch {
                    // A tenant's refusal is logged with the ids its answer carries, as the sign-in logs keep them.
                    let traceID = Identifiers.guid()
                    announceRefusal(error, requestID: traceID, correlationID: answer.correlationID)
                    return answer.failure(error, traceID: traceID)
                }
            }
        } catch {
            return answer.failure(error)
        }
        return try await issue(redeemed, for: token, answer: answer)
    }

    /// One token request that passed the common checks: what every grant reads.
    private struct TokenRequest {
        let form: FormFields
        let endpoint: IdentityEndpoint
        /// The registered client `client_id` names, for this kind of tenant.
        let client: ClientRegistration
        let grantType: String
        let now: Date

        /// B2C's tenant: its errors take B2C's shape and its grants are bound to a user flow.
        var b2c: Bool { endpoint.tenant.kind == .b2c }
    }

    /// What a grant redeemed for: the ``Grant``, and what the tokens carry beyond it.
    private struct RedeemedGrant {
        let grant: Grant
        /// The `nonce` sent on `/authorize`: only an authorization code's id_token repeats it.
        var nonce: String?
        /// The refresh token family a rotated refresh token stays in (nil: a new family).
        var family: String?
    }

    /// How the token endpoint answers one request: errors as the service's JSON body with its
    /// HTTP status, never cached, stamped with this request's correlation id and time.
    private struct TokenAnswer {
        let correlationID: String
        let now: Date

        /// `error` as the body of a failed token request.
        func failure(_ error: ServiceError, traceID: String = Identifiers.guid()) -> Response {
            .json(
                error.json(traceID: traceID, correlationID: correlationID, at: now), status: .init(code: error.status),
                headers: [.cacheControl: "no-store, no-cache", .pragma: "no-cache"])
        }

        /// The throttling the control endpoint asked for, with its `Retry-After`.
        func throttled(retryAfter: Int) -> Response {
            var response = failure(.throttled())
            response.headers[.retryAfter] = String(retryAfter)
            return response
        }
    }

    /// The checks before any grant is looked at: a known client for this tenant, a single-tenant
    /// app not at `/common`, no secret or assertion (every registered client is public, so one
    /// that authenticates is not the app registered), and a grant type.
    private func check(_ form: FormFields, endpoint: IdentityEndpoint, now: Date) throws(ServiceError) -> TokenRequest {
        let b2c = endpoint.tenant.kind == .b2c
        guard let clientID = form.nonEmpty("client_id")?.lowercased() else { throw .missingParameter("client_id") }
        guard let client = clients.first(where: { $0.clientID == clientID && $0.tenantKinds.contains(endpoint.tenant.kind) }) else {
            throw .unknownClient(clientID, tenant: endpoint.tenant.id)
        }
        if endpoint.isMultiTenant, !b2c, !client.multiTenant {
            throw .singleTenantAppAtCommon(clientID: client.clientID, appName: client.name)
        }
        // Every registered client is public: it must not authenticate.
        if form.nonEmpty("client_secret") != nil || form.nonEmpty("client_assertion") != nil {
            throw b2c ? .b2cPublicClientSentSecret : .publicClientSentSecret
        }
        guard let grantType = form.nonEmpty("grant_type") else { throw .missingParameter("grant_type") }
        return TokenRequest(form: form, endpoint: endpoint, client: client, grantType: grantType, now: now)
    }

    // MARK: The grants

    /// `authorization_code`: the code is spent on first use (a second try is refused), must be
    /// live, this client's, and sent back with the redirect URI it was issued for and, under
    /// PKCE, the verifier matching its challenge.
    private func redeemCode(_ token: TokenRequest) async throws(ServiceError) -> RedeemedGrant {
        let (b2c, now) = (token.b2c, token.now)
        guard let code = token.form.nonEmpty("code") else { throw .missingParameter("code") }
        guard let redirectURI = token.form.nonEmpty("redirect_uri") else { throw .missingParameter("redirect_uri") }
        let record: IdentityState.CodeRecord
        switch await state.redeemCode(code, now: now) {
        case .unknown: throw b2c ? .b2cMalformedGrant : .malformedGrant
        case .alreadyRedeemed:
            throw b2c ? .b2cGrantExpired(now: now, issued: now, expires: now) : .codeRedeemed
        case .expired(let expired):
            throw b2c
                ? .b2cGrantExpired(now: now, issued: expired.issuedAt, expires: expired.issuedAt + IdentityState.codeLifetime)
                : .grantExpired
        case .valid(let valid): record = valid
        }
        try checkIssued(record.grant, to: token)
        guard record.redirectURI == redirectURI else { throw .redirectMismatch(sent: redirectURI, expected: record.redirectURI) }
        if let challenge = record.codeChallenge {
            let verifier = token.form["code_verifier"] ?? ""
            let computed = record.codeChallengeMethod == "S256" ? Base64URL.encode(SHA256.hash(data: Data(verifier.utf8))) : verifier
            guard !verifier.isEmpty, computed == challenge else { throw b2c ? .b2cVerifierMismatch : .verifierMismatch }
        }
        return RedeemedGrant(grant: record.grant, nonce: record.nonce)
    }

    /// `refresh_token`: a token of this client's, still active (B2C's within its lifetime,
    /// Entra's used within the inactivity limit), not revoked with the user's sessions, and not
    /// reused once rotated (which, under `revokeFamily`, revokes its family). Conditional Access
    /// may demand MFA before Entra answers it.
    private func redeemRefreshToken(_ token: TokenRequest) async throws(ServiceError) -> RedeemedGrant {
        let (b2c, now) = (token.b2c, token.now)
        guard let refreshToken = token.form.nonEmpty("refresh_token") else { throw .missingParameter("refresh_token") }
        switch await state.useRefreshToken(refreshToken, now: now, strict: configuration.refreshTokenReuse == .revokeFamily) {
        case .unknown: throw b2c ? .b2cMalformedGrant : .malformedGrant
        case .inactive(let record):
            throw b2c
                ? .b2cGrantExpired(now: now, issued: record.issuedAt, expires: record.issuedAt + IdentityState.b2cRefreshLifetime)
                : .refreshTokenInactive(issued: record.issuedAt)
        case .revoked(let record, let validFrom):
            throw b2c ? .b2cGrantRevoked : .refreshTokenRevoked(issued: record.issuedAt, validFrom: validFrom)
        case .reused:
            throw b2c ? .b2cGrantRevoked : .refreshTokenReused
        case .valid(let record):
            try checkIssued(record.grant, to: token)
            // Conditional Access asks for MFA on this user's next token (on command).
            if !b2c, await state.isMFADemanded(userID: record.grant.userID) {
                throw .mfaRequired(resource: ScopeRequest.graphAppID)
            }
            return RedeemedGrant(grant: record.grant, family: record.family)
        }
    }

    /// The device code grant (Entra only): the device's poll is answered with the sign-in's
    /// progress (pending, declined, expired) until the person approved it for this client.
    private func redeemDeviceCode(_ token: TokenRequest) async throws(ServiceError) -> RedeemedGrant {
        if token.b2c { throw .b2cDeviceCodeUnsupported }
        // MSAL sends both `device_code` and the older `code`; either is read.
        guard let deviceCode = token.form.nonEmpty("device_code") ?? token.form.nonEmpty("code") else {
            throw .missingParameter("device_code")
        }
        switch await state.pollDevice(deviceCode: deviceCode, now: token.now) {
        case .unknown: throw .badVerificationCode
        case .alreadyRedeemed: throw .grantForAnotherClient
        case .pending: throw .authorizationPending
        case .declined: throw .authorizationDeclined
        case .refused(let error): throw error
        case .expired: throw .deviceCodeExpired
        case .approved(let approved, let device):
            guard device.clientID == token.client.clientID, approved.tenantID == token.endpoint.tenant.id else {
                throw .grantForAnotherClient
            }
            return RedeemedGrant(grant: approved)
        }
    }

    /// `password` (ROPC, Entra only): the user's own password, for a managed (not federated)
    /// account that needs no MFA — what Entra allows a public client that asks this way.
    private func redeemPassword(_ token: TokenRequest) async throws(ServiceError) -> RedeemedGrant {
        if token.b2c { throw .unsupportedGrantType("password") }
        guard let userName = token.form.nonEmpty("username") else { throw .missingParameter("username") }
        guard let password = token.form["password"] else { throw .missingParameter("password") }
        let user = try await PasswordCheck(services: services).user(userName, password: password, tenant: token.endpoint.tenant)
        let sessionID = Identifiers.guid()
        let scope = token.form.nonEmpty("scope") ?? "openid profile offline_access"
        return RedeemedGrant(
            grant: Grant(
                userID: user.id, tenantID: token.endpoint.tenant.id, clientID: token.client.clientID, scope: scope, authTime: token.now,
                sessionID: sessionID, methods: ["pwd"]))
    }

    /// The tenant's policy at token issuance, as Entra evaluates it again on every grant: the
    /// account's state, then the first Conditional Access rule for this app, user and platform.
    func enforcePolicy(on grant: Grant, tenant: Tenant, platform: String) async throws(ServiceError) {
        let policy = await state.policy(for: tenant)
        guard let user = directory(for: tenant).user(id: grant.userID) else { return }
        switch policy.accountState(of: user.userPrincipalName)?.state {
        case .locked?: throw RefusalErrors.accountLocked
        case .disabled?: throw RefusalErrors.accountDisabled
        case .passwordExpired? where await state.changedPassword(userID: user.id) == nil:
            var expired = RefusalErrors.passwordExpired
            expired.suberror = "user_password_expired"
            throw expired
        case .passwordExpired?, nil: break
        }
        guard let rule = policy.conditionalAccessRule(clientID: grant.clientID, user: user.userPrincipalName, platform: platform) else {
            return
        }
        func atTokenEndpoint(_ refusal: ServiceError, suberror: String) -> ServiceError {
            var error = ServiceError(
                error: "invalid_grant", codes: refusal.codes, message: refusal.message, service: .entra, suberror: suberror)
            error.status = 400
            return error
        }
        switch rule.require {
        case .block: throw atTokenEndpoint(RefusalErrors.conditionalAccessBlocked, suberror: "message_only")
        case .registeredDevice:
            // The device registered and enabled now, not only when the grant began.
            guard let deviceID = grant.deviceID, await devices.device(id: deviceID)?.accountEnabled == true else {
                throw atTokenEndpoint(RefusalErrors.deviceAuthenticationRequired, suberror: "additional_action")
            }
        case .compliantDevice: throw atTokenEndpoint(RefusalErrors.deviceNotCompliant, suberror: "additional_action")
        case .managedDevice: throw atTokenEndpoint(RefusalErrors.deviceNotManaged, suberror: "additional_action")
        case .mfa where !grant.methods.contains("mfa"): throw .mfaRequired(resource: ScopeRequest.graphAppID)
        case .authenticationStrength(let strength) where !strength.isSatisfied(byReferences: grant.methods):
            throw RefusalErrors.authenticationStrengthRequired(strength, resource: ScopeRequest.graphAppID)
        case .authenticationStrength: break
        case .mfaRegistration where !user.requiresMFA:
            if await !state.isRegisteredForMFA(user, now: clock.now) {
                throw RefusalErrors.mfaRegistrationRequired(resource: ScopeRequest.graphAppID)
            }
        case .mfa, .mfaRegistration: break
        }
    }

    /// A code or refresh token is redeemed only by the client and tenant it was issued to, and a
    /// B2C one only at the user flow that issued it.
    private func checkIssued(_ grant: Grant, to token: TokenRequest) throws(ServiceError) {
        guard grant.clientID == token.client.clientID, grant.tenantID == token.endpoint.tenant.id else {
            throw .grantForAnotherClient
        }
        if token.b2c, grant.policy != token.endpoint.policy {
            throw .b2cWrongPolicy(actual: token.endpoint.policy ?? "", expected: grant.policy ?? "")
        }
    }

    // MARK: Issuing

    /// The tokens for a redeemed grant, for the resource the request's `scope` picks (Entra
    /// refuses one the user has not consented to), with a refresh token when asked for.
    private func issue(_ redeemed: RedeemedGrant, for token: TokenRequest, answer: TokenAnswer) async throws -> Response {
        let body: JSON
        do {
            body = try await tokens(
                for: redeemed.grant, client: token.client, tenant: token.endpoint.tenant,
                requestedScope: token.form.nonEmpty("scope") ?? redeemed.grant.scope, nonce: redeemed.nonce, family: redeemed.family,
                clientInfo: token.form["client_info"] == "1", now: token.now)
        } catch let error as ServiceError {
            return answer.failure(error)
        }
        return .json(body, headers: [.cacheControl: "no-store, no-cache", .pragma: "no-cache", .clientRequestID: answer.correlationID])
    }

    /// A token response's body for `grant`: `requestedScope` picks one resource among those
    /// consented (Microsoft's own clients are preauthorized), a refresh token when the scope or
    /// the grant asks for one (a rotated one in `family`). The PRT's exchanges use it too.
    /// - Parameter grantIsConsent: whether the grant's own scope was consented to (a code's, a
    ///   refresh token's); a PRT's exchange for another app counts only the user's consents.
    func tokens(
        for grant: Grant, client: ClientRegistration, tenant: Tenant, requestedScope: String, nonce: String?, family: String?,
        clientInfo: Bool, now: Date, grantIsConsent: Bool = true
    ) async throws -> JSON {
        let b2c = tenant.kind == .b2c
        let scopes = try ScopeRequest.parse(requestedScope, tenant: tenant, clientID: client.clientID, lenient: configuration.lenient)
        if !b2c, !client.isMicrosoftClient,
            try await lacksConsent(scopes, grant: grant, clientID: client.clientID, tenant: tenant, grantIsConsent: grantIsConsent)
        {
            let error = ServiceError.consentRequired(clientID: client.clientID, appName: client.name)
            throw ServiceError(
                error: "invalid_grant", codes: error.codes, message: error.message, service: .entra, suberror: "consent_required")
        }
        guard let user = directory(for: tenant).user(id: grant.userID) else {
            throw b2c ? ServiceError.b2cGrantRevoked : .entra("invalid_grant", 50034, "The user account does not exist in the directory.")
        }
        // A rotated refresh token carries the grant's scopes, not the narrower ones of this request.
        let refreshToken =
            scopes.wantsRefreshToken || ScopeRequest.wantsRefresh(grant.scope)
            ? await state.issueRefreshToken(for: grant, now: now, family: family) : nil
        return try issuer.response(
            for: grant, user: user, tenant: tenant, scopes: scopes, requestedScope: requestedScope, nonce: nonce,
            clientInfo: clientInfo, refreshToken: refreshToken, appName: client.name, now: now)
    }

    /// Whether `scopes` asks for more than the grant's own scopes, the user's consents and an
    /// administrator's for the whole tenant cover
    /// (`profile` and `email` need none). A grant's scope that no longer parses is thrown, not
    /// answered: it was parsed when it was issued.
    private func lacksConsent(
        _ scopes: ScopeRequest, grant: Grant, clientID: String, tenant: Tenant, grantIsConsent: Bool
    ) async throws(ServiceError) -> Bool {
        let own =
            grantIsConsent
            ? try ScopeRequest.parse(grant.scope, tenant: tenant, clientID: clientID, lenient: configuration.lenient).consentKeys : []
        let granted = own.union(await state.consentedPermissions(userID: grant.userID, clientID: clientID))
            .union(await state.adminConsentedPermissions(clientID: clientID))
        return !scopes.consentKeys.subtracting(granted).subtracting(["profile", "email"]).isEmpty
    }
}

extension ScopeRequest {
    /// Whether a scope string (as granted) includes `offline_access`.
    static func wantsRefresh(_ scope: String) -> Bool {
        scope.split(separator: " ").contains { $0.lowercased() == "offline_access" }
    }
}
