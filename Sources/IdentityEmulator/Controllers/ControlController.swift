import FoundationEssentials
import Hummingbird

/// The emulator's own controls under `/.emulator/`, for test harnesses and `make bench`: what a
/// tenant's administrator, Conditional Access or an outage would do, on demand and without a
/// token. None exists on Microsoft's services; the fault middleware never touches them.
struct ControlController: EmulatorController {
    let services: EmulatorServices

    /// `POST /.emulator/users/{user}/revokeSignInSessions`: the user's refresh tokens and
    /// sessions stop working, as Graph's `revokeSignInSessions` does (in either tenant).
    func revokeSignInSessions(user key: String) async -> Response {
        guard let user = contoso.user(idOrPrincipalName: key) ?? fabrikam.user(idOrPrincipalName: key) else {
            return .json(.object([("error", .string("No user '\(key)' in contoso or fabrikamb2c."))]), status: .notFound)
        }
        await state.revokeSignInSessions(userID: user.id, now: clock.now)
        return .json(.object([("revoked", .string(user.userPrincipalName))]))
    }

    /// `POST /.emulator/devices/{deviceId}/disable|enable`: an administrator disables a device
    /// (its PRTs stop working: AADSTS135011) or enables it again.
    func setDevice(_ deviceID: String, enabled: Bool) async throws -> Response {
        guard await devices.device(id: deviceID) != nil else {
            return .json(.object([("error", .string("No device '\(deviceID)' is registered."))]), status: .notFound)
        }
        try await devices.setEnabled(enabled, deviceID: deviceID)
        return .json(.object([("deviceId", .string(deviceID)), ("accountEnabled", .bool(enabled))]))
    }

    /// `POST /.emulator/clients/{client}/adminConsent`: an administrator grants a client consent
    /// for the whole tenant (every Graph and Exchange permission it can ask for), as "Grant admin
    /// consent for Contoso" in the portal does.
    func adminConsent(clientID: String) async -> Response {
        guard let client = clients.first(where: { $0.clientID == clientID.lowercased() }) else {
            return .json(.object([("error", .string("no client \(clientID) is registered"))]), status: .notFound)
        }
        let keys = Set(
            ScopeRequest.graphPermissions.map { "graph:\($0)" } + ScopeRequest.exchangePermissions.map { "exchange:\($0)" }
                + ["offline_access", "profile", "email"])
        await state.grantAdminConsent(keys, clientID: client.clientID)
        return .json(.object([("clientId", .string(client.clientID)), ("granted", .array(keys.sorted().map(JSON.string)))]))
    }

    /// `POST /.emulator/policy`: the tenants' policies from now on (the body as a `--policy` file;
    /// empty: none).
    func replacePolicy(_ request: Request) async throws -> Response {
        let data = Data(try await request.bodyText(limit: 1 << 20).utf8)
        do {
            let policies = data.isEmpty ? TenantPolicies() : try TenantPolicies.parse(data)
            try await MethodsControlController(services: services).register(policies)
            await state.replacePolicies(policies)
            return .json(.object([("tenants", .array(policies.tenants.keys.sorted().map(JSON.string)))]))
        } catch {
            return .json(.object([("error", .string("\(error)"))]), status: .badRequest)
        }
    }

    /// `GET /.emulator/adminConsentRequests`: what users asked administrators to approve.
    func adminConsentRequests() async -> Response {
        let requests = await state.adminConsentRequests
        return .json(
            .array(
                requests.map {
                    .object([
                        ("clientId", .string($0.clientID)), ("app", .string($0.appName)), ("user", .string($0.userPrincipalName)),
                        ("justification", .string($0.justification)), ("requestedAt", .string($0.requestedAt.entraTimestamp)),
                    ])
                }))
    }

    /// `POST /.emulator/users/{user}/requireMFA`: Conditional Access demands MFA of a user: their
    /// next refresh answers AADSTS50076 with a claims challenge, and the next sign-in asks for the
    /// SMS code.
    func requireMFA(user key: String) async -> Response {
        guard let user = contoso.user(idOrPrincipalName: key) else {
            return .json(.object([("error", .string("No user '\(key)' in contoso."))]), status: .notFound)
        }
        await state.demandMFA(userID: user.id)
        return .json(.object([("user", .string(user.userPrincipalName)), ("mfaRequired", .bool(true))]))
    }

    /// `POST /.emulator/throttle?requests=N&retryAfter=S`: the token endpoint answers the next
    /// `requests` token requests 429 with `Retry-After`.
    func throttle(_ request: Request) async -> Response {
        let requests = Int(request.queryFields["requests"] ?? "") ?? 1
        let retryAfter = Int(request.queryFields["retryAfter"] ?? "") ?? 5
        await state.startThrottling(requests: max(0, requests), retryAfter: max(0, retryAfter))
        return .json(.object([("requests", .int(requests)), ("retryAfter", .int(retryAfter))]))
    }

    /// `POST /.emulator/keys/rotate`: rolls the signing key over now; new tokens are signed by a
    /// new key, the old one stays published.
    func rotateKeys() async throws -> Response {
        let fresh = try services.keys.rotate(now: clock.now)
        return .json(.object([("kid", .string(fresh.keyID)), ("published", .array(services.keys.published.map { .string($0.keyID) }))]))
    }

    /// `POST /.emulator/benchmark/signatures` (body: seconds, 1 to 10, default 2), for `make
    /// bench`: how many RS256 signatures this process makes per second with its signing key on
    /// every core — the bound of what the token endpoint can issue.
    func signatureRate(_ request: Request) async throws -> Response {
        let seconds = min(10, max(1, Int(try await request.bodyText(limit: 64)) ?? 2))
        let rate = try await JSONWebToken.signaturesPerSecond(key: key, for: .seconds(seconds))
        return Response.json(
            .object([("signatures_per_second", .int(Int(rate))), ("threads", .int(ProcessInfo.processInfo.activeProcessorCount))]))
    }

    /// `GET /.emulator/requests`: how many requests of each family (`signin`, `token`,
    /// `discovery`, `graph`, `tasks`) arrived, answered or not yet.
    func receivedRequests() -> Response {
        Response.json(.object(services.faults.receivedCounts.map { ($0.0, .int($0.1)) }))
    }

    /// `POST /.emulator/faults` (body: a fault plan, as `--faults` takes it): replaces the faults
    /// in force; an empty body ends them.
    func replaceFaults(_ request: Request) async throws -> Response {
        let spec = try await request.bodyText(limit: 64 * 1024)
        do throws(FaultPlan.ParseError) {
            services.faults.replace(with: try FaultPlan.parse(spec))
            return Response.json(.object([("faults", .string(spec))]))
        } catch {
            return Response.json(.object([("error", .string(error.description))]), status: .badRequest)
        }
    }
}
