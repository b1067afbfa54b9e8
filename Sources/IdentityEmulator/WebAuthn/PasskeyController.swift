import FoundationEssentials
import Hummingbird

/// The emulator's passkey ceremonies over its ``WebAuthnRelyingParty``: the sign-in page (the
/// second factor after a password, or a sign-in without a user name from "Sign-in options"), and
/// the two Security info endpoints that register a passkey. The relying party id is the
/// emulator's host name and the only origin its base URL (Entra's are `login.microsoft.com` and
/// its origin); the policy is the tenant's `authenticationMethods.fido2`.
struct PasskeyController: EmulatorController {
    let services: EmulatorServices

    /// The relying party for `tenant`'s passkey policy.
    func relyingParty(for tenant: Tenant) async -> WebAuthnRelyingParty {
        let settings = await state.policy(for: tenant).authenticationMethods.fido2
        var policy = WebAuthnPolicy(rpID: base.host ?? "localhost", allowedOrigins: [root])
        policy.userVerification = settings.userVerificationRequired ? .required : .preferred
        policy.attestationEnforcement = settings.isAttestationEnforced ? .registrationOnly : .disabled
        if let allowed = settings.allowedAAGUIDs {
            policy.keyRestrictions = .init(enforcementType: .allow, aaguids: Set(allowed.compactMap { UUID(uuidString: $0) }))
        }
        return WebAuthnRelyingParty(policy: policy)
    }

    /// "Sign-in options" from the first page.
    func signInOptions(_ transaction: SignInTransaction) -> Response {
        .html(
            PasskeyPages.signInOptions(
                action: SignInController(services: services).loginAction(transaction.request.endpoint), ctx: transaction.id))
    }

    /// The passkey page: a fresh challenge, and `user`'s credentials as `allowCredentials` (none
    /// for a sign-in without a user name: the authenticator offers its discoverable ones).
    func signInPage(_ transaction: SignInTransaction, user: DirectoryUser?, others: Bool, error: String? = nil) async -> Response {
        let endpoint = transaction.request.endpoint
        let rp = await relyingParty(for: endpoint.tenant)
        let now = clock.now
        let issued = await state.issuePasskeyChallenge(for: .assertion, userID: user?.id, now: now)
        let allowing = if let user { await state.passkeys(userID: user.id) } else { [PasskeyCredential]() }
        return .html(
            PasskeyPages.signIn(
                action: SignInController(services: services).loginAction(endpoint), ctx: transaction.id,
                username: user?.userPrincipalName, options: rp.requestOptions(challenge: issued, allowing: allowing), error: error,
                others: others))
    }

    // MARK: Security info (registration)

    /// `POST /security-info/passkey/options` after the page's checks: the creation options for
    /// `user` (`PublicKeyCredentialCreationOptionsJSON`), excluding the passkeys they have.
    func creationOptions(for user: DirectoryUser, tenant: Tenant) async -> Response {
        let rp = await relyingParty(for: tenant)
        let issued = await state.issuePasskeyChallenge(for: .registration, userID: user.id, now: clock.now)
        let options = rp.creationOptions(
            challenge: issued, userHandle: PasskeyCredentials.userHandle(userID: user.id), name: user.userPrincipalName,
            displayName: user.displayName, existing: await state.passkeys(userID: user.id))
        return Self.json(options, status: .ok)
    }

    /// `POST /security-info/passkey` after the page's checks: verifies `credential`
    /// (`RegistrationResponseJSON`) and keeps it as `name` (or the authenticator's kind); answers
    /// `{"displayName": …}` or `{"error": …}` with the refusal's sentence.
    func register(_ credential: Data, name: String?, for user: DirectoryUser, tenant: Tenant) async -> Response {
        let rp = await relyingParty(for: tenant)
        do {
            let response = try RegistrationResponseJSON.parse(credential)
            guard await state.passkeys(userID: user.id).count < PasskeyCredentials.maximumPerUser else {
                throw WebAuthnRefusal.tooManyCredentials
            }
            let trimmed = (name ?? "").trimmingWhitespace()
            let displayName = trimmed.isEmpty ? "Passkey" : String(trimmed.prefix(64))
            let kept = try await state.registerPasskey(response, relyingParty: rp, displayName: displayName, now: clock.now)
            configuration.announce("passkey-registered \(user.userPrincipalName) \(kept.aaguid.uuidString.lowercased())")
            return Self.json(["displayName": kept.displayName] as [String: String], status: .ok)
        } catch {
            let refusal = error as? WebAuthnRefusal ?? .malformedResponse("")
            logger.info("passkey registration refused for \(user.userPrincipalName): \(refusal)")
            return Self.json(["error": refusal.sentence] as [String: String], status: .badRequest)
        }
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status) -> Response {
        let body = (try? JSONEncoder().encode(value)) ?? Data("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
