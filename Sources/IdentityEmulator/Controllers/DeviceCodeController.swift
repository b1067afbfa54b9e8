import FoundationEssentials
import HTTPTypes
import Hummingbird

/// The device code flow (RFC 8628) as Entra runs it: `/{tenant}/oauth2/v2.0/devicecode` hands a
/// device its codes, `/devicelogin` is the verification page a person opens elsewhere, and the
/// token endpoint answers the device's polls (``TokenController``). B2C does not offer it.
struct DeviceCodeController: EmulatorController {
    let services: EmulatorServices

    // MARK: POST /{tenant}/oauth2/v2.0/devicecode

    func deviceAuthorization(_ request: Request, endpoint: IdentityEndpoint) async throws -> Response {
        let now = clock.now
        let form = try await request.formFields()
        let correlationID = request.headers[.clientRequestID] ?? Identifiers.guid()
        // Entra answers this endpoint's errors with HTTP 200 and the usual error body (MSAL.NET
        // learned it the hard way: a client must look for `error`, not at the status).
        func fail(_ error: ServiceError, refusal: Bool = false) -> Response {
            let traceID = Identifiers.guid()
            if refusal { announceRefusal(error, requestID: traceID, correlationID: correlationID) }
            return .json(
                error.json(traceID: traceID, correlationID: correlationID, at: now), status: .ok,
                headers: [.cacheControl: "no-store, no-cache"])
        }

        if endpoint.tenant.kind == .b2c { return fail(.b2cDeviceCodeUnsupported) }
        guard let clientID = form.nonEmpty("client_id")?.lowercased() else { return fail(.missingParameter("client_id")) }
        guard let client = clients.first(where: { $0.clientID == clientID && $0.tenantKinds.contains(endpoint.tenant.kind) }) else {
            return fail(.unknownClient(clientID, tenant: endpoint.tenant.id))
        }
        if endpoint.isMultiTenant, !client.multiTenant {
            return fail(.singleTenantAppAtCommon(clientID: client.clientID, appName: client.name))
        }
        // "Allow public client flows" off in the app registration (the tenant policy says so here).
        if await !state.policy(for: endpoint.tenant).publicClientFlows {
            return fail(RefusalErrors.publicClientFlowsDisabled, refusal: true)
        }
        guard let scope = form.nonEmpty("scope") else { return fail(.missingParameter("scope")) }
        let scopes: ScopeRequest
        do {
            scopes = try ScopeRequest.parse(scope, tenant: endpoint.tenant, clientID: clientID, lenient: configuration.lenient)
        } catch {
            return fail(error)
        }

        let userCode = DeviceAuthorization.newUserCode()
        let lifetime = TimeInterval(configuration.deviceCodeLifetime)
        let interval = configuration.deviceCodeInterval
        let deviceCode = await state.beginDeviceAuthorization(
            DeviceAuthorization(
                clientID: clientID, endpoint: endpoint, scope: scope, scopes: scopes, userCode: userCode, issuedAt: now,
                expiresAt: now + lifetime, interval: TimeInterval(interval)))
        let verificationURI = "\(root)/devicelogin"
        configuration.announce("device-code \(userCode)")
        return .json(
            .object([
                ("user_code", .string(userCode)),
                ("device_code", .string(deviceCode)),
                ("verification_uri", .string(verificationURI)),
                ("expires_in", .int(configuration.deviceCodeLifetime)),
                ("interval", .int(interval)),
                (
                    "message",
                    .string(
                        "To sign in, use a web browser to open the page \(verificationURI) and enter the code \(userCode) to authenticate."
                    )
                ),
            ]), headers: [.cacheControl: "no-store, no-cache", .clientRequestID: correlationID])
    }

    // MARK: /devicelogin

    func verificationPage() -> Response {
        .html(DeviceCodePages.enterCode(error: nil))
    }

    /// The typed code: a sign-in transaction for its request, then "Are you trying to sign in…?".
    func enterCode(_ request: Request) async throws -> Response {
        let now = clock.now
        let form = try await request.formFields()
        guard let typed = form.nonEmpty(SignInPageIDs.Fields.deviceCode) else {
            return .html(DeviceCodePages.enterCode(error: "Enter the code displayed on your app or device."))
        }
        guard let (key, device) = await state.deviceAuthorization(userCode: typed, now: now),
            let client = clients.first(where: { $0.clientID == device.clientID })
        else {
            return .html(
                DeviceCodePages.enterCode(
                    error: "That code didn’t work. Check the code and try again, or get a new code from the app or device.", typed: typed))
        }
        let authorization = AuthorizeRequest(
            endpoint: device.endpoint, client: client, redirectURI: "", replyURI: "", responseMode: .query, scope: device.scope,
            scopes: device.scopes, state: nil, nonce: nil, prompt: nil, loginHint: nil, codeChallenge: nil, codeChallengeMethod: "plain",
            wantsClientInfo: false, correlationID: Identifiers.guid())
        var transaction = await state.begin(authorization, now: now)
        transaction.deviceKey = key
        await state.update(transaction)
        let signIn = SignInController(services: services)
        return .html(DeviceCodePages.confirm(action: signIn.loginAction(device.endpoint), ctx: transaction.id, appName: client.name))
    }
}
