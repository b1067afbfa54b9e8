import Crypto
import FoundationEssentials
import HTTPTypes
import Hummingbird
import _CryptoExtras

/// Entra's v1 token endpoint (`/{tenant}/oauth2/token`) and the broker protocol it carries
/// ([MS-OAPXBC]): the nonce (`srv_challenge`), the Primary Refresh Token requested with a JWT the
/// device key signed (`x5c`), and requests signed with a key derived from the PRT's session key
/// (`ctx`): the PRT renewed, or tokens for any client. Other grants are the v2 endpoint's, with
/// v1's `resource` read as that resource's `.default` scope. The wire: docs/design/device-identity.md §3–4.
struct PrimaryRefreshTokenController: EmulatorController {
    let services: EmulatorServices

    static let jwtBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    func token(_ request: Request, endpoint: IdentityEndpoint) async throws -> Response {
        let now = clock.now
        var form = try await request.formFields()
        switch form["grant_type"] {
        case "srv_challenge":
            return .json(.object([("Nonce", .string(await devices.issueNonce(now: now)))]), headers: noStore)
        case Self.jwtBearer?:
            guard let text = form.nonEmpty("request") else { return failure(.missingParameter("request"), now: now) }
            do {
                let signed = try SignedRequest(text)
                switch signed.signer {
                case .device(let certificate):
                    return .json(
                        try await primaryRefreshToken(signed, certificate: certificate, request: request, now: now), headers: noStore)
                case .sessionKey(let ctx, let kdfVersion):
                    let (record, device) = try await verify(signed, ctx: ctx, kdfVersion: kdfVersion, now: now)
                    let body = try await answer(signed, record: record, device: device, request: request, now: now)
                    let sessionKey = SymmetricKey(data: record.sessionKey)
                    var headers = noStore
                    headers[.contentType] = "application/jose"
                    return Response(
                        status: .ok, headers: headers,
                        body: .init(byteBuffer: .init(string: try SessionKeyCrypto.encryptedResponse(body.data, sessionKey: sessionKey))))
                }
            } catch let error as ServiceError {
                return failure(error, now: now)
            }
        default:
            // v1: `resource` names what the token is for; v1 always returns a refresh token.
            if let resource = form.nonEmpty("resource"), form.nonEmpty("scope") == nil {
                form.append("scope", Self.scope(forResource: resource))
            }
            return try await TokenController(services: services).token(form: form, headers: request.headers, endpoint: endpoint)
        }
    }

    /// v1's `resource` (`https://graph.microsoft.com/`, with or without its slash) as the v2
    /// scopes that ask the same: its `.default`, an id_token and a refresh token.
    static func scope(forResource resource: String) -> String {
        let trimmed = resource.hasSuffix("/") ? String(resource.dropLast()) : resource
        return "\(trimmed)/.default openid profile offline_access"
    }

    private var noStore: HTTPFields { [.cacheControl: "no-store, no-cache", .pragma: "no-cache"] }

    private func failure(_ error: ServiceError, now: Date) -> Response {
        .json(
            error.json(traceID: Identifiers.guid(), correlationID: Identifiers.guid(), at: now), status: .init(code: error.status),
            headers: noStore)
    }

    // MARK: The PRT

    /// A PRT for the user the request's grant proves (password, refresh token or authorization
    /// code), bound to the device whose key signed it; its session key sent under the device's
    /// transport key (§3.2.5.1.2).
    private func primaryRefreshToken(_ signed: SignedRequest, certificate der: Data, request: Request, now: Date) async throws -> JSON {
        guard let (deviceID, certificate) = services.deviceAuthority.deviceID(ofCertificate: der, now: now),
            DeviceAuthority.isValidSignature(signed.signature, of: signed.signingInput, by: certificate),
            await devices.isLive(nonce: signed.string("request_nonce"), now: now)
        else { throw RefusalErrors.deviceAuthenticationFailed }
        guard let device = await devices.device(id: deviceID) else {
            throw RefusalErrors.deviceNotFound(deviceID, tenant: contoso.tenant.id)
        }
        guard device.accountEnabled else { throw RefusalErrors.deviceDisabled }
        guard let clientID = signed.string("client_id")?.lowercased() else { throw ServiceError.missingParameter("client_id") }
        guard ClientRegistration.mayRegisterDevices(clientID) else {
            throw ServiceError.entra(
                "unauthorized_client", 70002,
                "The client '\(clientID)' may not request a primary refresh token: only Microsoft's broker clients may.")
        }
        let proven = try await provenGrant(signed, clientID: clientID, now: now)
        guard proven.tenantID == device.tenantID else { throw RefusalErrors.deviceNotFound(deviceID, tenant: proven.tenantID) }
        var grant = proven
        grant.clientID = clientID
        grant.scope = "openid aza"
        grant.deviceID = device.deviceID
        let platform = ClientPlatform.of(userAgent: request.headers[.userAgent], clientOS: request.headers[.clientOS])
        try await TokenController(services: services).enforcePolicy(on: grant, tenant: contoso.tenant, platform: platform)

        let sessionKey = SymmetricKey(size: .bits256)
        let token = try await devices.issue(for: grant, sessionKey: sessionKey.withUnsafeBytes { Data($0) }, now: now)
        let transportKey = try _RSA.Encryption.PublicKey(derRepresentation: device.transportKey)
        configuration.announce("prt-issued \(device.deviceID)")
        return .members([
            ("token_type", .string("pop")),
            ("expires_in", .int(Int(DeviceRegistry.lifetime))),
            ("ext_expires_in", .int(Int(DeviceRegistry.lifetime))),
            ("expires_on", .string(String(now.epochSeconds + Int(DeviceRegistry.lifetime)))),
            ("refresh_token", .string(token)),
            ("refresh_token_expires_in", .int(Int(DeviceRegistry.lifetime))),
            ("session_key_jwe", .string(try SessionKeyCrypto.sessionKeyJWE(sessionKey, transportKey: transportKey))),
            ("id_token", .string(try idToken(for: grant, now: now))),
            ("client_info", try user(of: grant).map { .string(issuer.clientInfo(user: $0, tenant: contoso.tenant, policy: nil)) }),
        ])
    }

    /// The sign-in the PRT request carries, checked as its own grant would be at the token endpoint.
    private func provenGrant(_ signed: SignedRequest, clientID: String, now: Date) async throws(ServiceError) -> Grant {
        let tenant = contoso.tenant
        switch signed.string("grant_type") {
        case "password":
            guard let userName = signed.string("username"), let password = signed.claims["password"] as? String else {
                throw .missingParameter("username")
            }
            let user = try await PasswordCheck(services: services).user(userName, password: password, tenant: tenant)
            return Grant(
                userID: user.id, tenantID: tenant.id, clientID: clientID, scope: "", authTime: now, sessionID: Identifiers.guid(),
                methods: ["pwd"])
        case "refresh_token":
            guard let refreshToken = signed.string("refresh_token") else { throw .missingParameter("refresh_token") }
            switch await state.useRefreshToken(refreshToken, now: now, strict: false) {
            case .valid(let record) where record.grant.clientID == clientID: return record.grant
            case .valid: throw .grantForAnotherClient
            case .unknown, .reused: throw .malformedGrant
            case .inactive(let record): throw .refreshTokenInactive(issued: record.issuedAt)
            case .revoked(let record, let validFrom): throw .refreshTokenRevoked(issued: record.issuedAt, validFrom: validFrom)
            }
        case "authorization_code":
            guard let code = signed.string("code") else { throw .missingParameter("code") }
            guard case .valid(let record) = await state.redeemCode(code, now: now) else { throw .malformedGrant }
            guard record.grant.clientID == clientID else { throw .grantForAnotherClient }
            if let sent = signed.string("redirect_uri"), sent != record.redirectURI {
                throw .redirectMismatch(sent: sent, expected: record.redirectURI)
            }
            if let challenge = record.codeChallenge {
                let verifier = signed.string("code_verifier") ?? ""
                guard !verifier.isEmpty, Base64URL.encode(SHA256.hash(data: Data(verifier.utf8))) == challenge else {
                    throw .verifierMismatch
                }
            }
            return record.grant
        case let other: throw .unsupportedGrantType(other ?? "")
        }
    }

    // MARK: Requests signed with the session key

    /// The PRT a request names and its device, when the request is signed with a key derived from
    /// that PRT's session key (KDFv1 or KDFv2) and carries a live nonce.
    func verify(
        _ signed: SignedRequest, ctx: Data, kdfVersion: Int, now: Date
    ) async throws(ServiceError) -> (DeviceRegistry.PrimaryRefreshToken, RegisteredDevice) {
        guard let token = signed.string("refresh_token") else { throw .missingParameter("refresh_token") }
        let (record, device) = try await devices.check(token, now: now, tenant: contoso.tenant.id)
        let context = SessionKeyCrypto.context(ctx: ctx, kdfVersion: kdfVersion, payload: signed.payload)
        guard
            SessionKeyCrypto.isValidSignature(
                signed.signature, of: signed.signingInput, sessionKey: SymmetricKey(data: record.sessionKey), context: context)
        else {
            throw .entra(
                "invalid_grant", 5_000_811,
                "Unable to verify token signature. The signing key identifier does not match any valid registered keys.")
        }
        guard await devices.isLive(nonce: signed.string("request_nonce"), now: now) else { throw RefusalErrors.deviceAuthenticationFailed }
        return (record, device)
    }

    /// What a session-key request asks for: `aza` in its scope renews the PRT (same session key);
    /// otherwise tokens for its `client_id` and `resource` or `scope`, carrying the device.
    private func answer(
        _ signed: SignedRequest, record: DeviceRegistry.PrimaryRefreshToken, device: RegisteredDevice, request: Request, now: Date
    ) async throws -> JSON {
        let scope = signed.string("scope") ?? "openid"
        let tenant = contoso.tenant
        if scope.split(separator: " ").contains("aza") {
            try await TokenController(services: services).enforcePolicy(on: record.grant, tenant: tenant, platform: platform(request))
            let renewed = try await devices.issue(for: record.grant, sessionKey: record.sessionKey, now: now)
            configuration.announce("prt-renewed \(device.deviceID)")
            return .members([
                ("token_type", .string("pop")),
                ("refresh_token", .string(renewed)),
                ("refresh_token_expires_in", .int(Int(DeviceRegistry.lifetime))),
                ("id_token", .string(try idToken(for: record.grant, now: now))),
                ("client_info", try user(of: record.grant).map { .string(issuer.clientInfo(user: $0, tenant: tenant, policy: nil)) }),
            ])
        }
        guard let clientID = signed.string("client_id")?.lowercased() else { throw ServiceError.missingParameter("client_id") }
        guard let client = clients.first(where: { $0.clientID == clientID && $0.tenantKinds.contains(.workforce) }) else {
            throw ServiceError.unknownClient(clientID, tenant: tenant.id)
        }
        let requested = signed.string("resource").map(Self.scope(forResource:)) ?? scope
        let grant = Grant(
            userID: record.grant.userID, tenantID: tenant.id, clientID: clientID, scope: requested, authTime: record.grant.authTime,
            sessionID: record.grant.sessionID, methods: record.grant.methods, deviceID: device.deviceID)
        try await TokenController(services: services).enforcePolicy(on: grant, tenant: tenant, platform: platform(request))
        configuration.announce("prt-token \(device.deviceID) \(clientID)")
        return try await TokenController(services: services).tokens(
            for: grant, client: client, tenant: tenant, requestedScope: requested, nonce: nil, family: nil, clientInfo: true, now: now,
            grantIsConsent: false)
    }

    private func platform(_ request: Request) -> String {
        ClientPlatform.of(userAgent: request.headers[.userAgent], clientOS: request.headers[.clientOS])
    }

    private func user(of grant: Grant) throws -> DirectoryUser? { contoso.user(id: grant.userID) }

    /// The PRT response's id_token: `aud` the broker client, the user's profile, the device.
    private func idToken(for grant: Grant, now: Date) throws -> String {
        guard let user = contoso.user(id: grant.userID) else {
            throw ServiceError.entra("invalid_grant", 50034, "The user account does not exist in the directory.")
        }
        return try issuer.entraIDToken(
            grant: grant, user: user, tenant: contoso.tenant, scopes: ScopeRequest(oidc: ["openid", "profile"]), nonce: nil, now: now)
    }
}

extension DeviceRegistry {
    /// A presented PRT's record and device, or the error Entra answers for it.
    func check(_ token: String, now: Date, tenant: String) throws(ServiceError) -> (PrimaryRefreshToken, RegisteredDevice) {
        switch use(token, now: now) {
        case .valid(let record, let device): return (record, device)
        case .unknown: throw .malformedGrant
        case .expired: throw .entra("invalid_grant", 700_082, "The refresh token has expired due to inactivity.")
        case .deviceGone(let deviceID): throw RefusalErrors.deviceNotFound(deviceID, tenant: tenant)
        case .deviceDisabled: throw RefusalErrors.deviceDisabled
        }
    }
}
