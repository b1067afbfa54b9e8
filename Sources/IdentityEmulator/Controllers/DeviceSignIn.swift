import Crypto
import FoundationEssentials
import HTTPTypes
import Hummingbird

/// Single sign-on by a registered device: `/authorize` with the PRT's credential
/// (`x-ms-RefreshTokenCredential`, a cookie from browsers and a header from Windows' web views,
/// [MS-OAPXBC] 3.2.5.2) signs its user in without a page, the tokens carrying the device. A
/// credential without a live nonce is sent back for one (`sso_nonce`), as Entra does; one that
/// does not verify is ignored, and the pages ask as usual.
struct DeviceSingleSignOn: EmulatorController {
    let services: EmulatorServices
    static let credentialCookie = "x-ms-RefreshTokenCredential"
    var flow: SignInFlow { SignInFlow(services: services) }

    /// The sign-in `credential` makes, if it makes one: nil leaves the sign-in to the pages.
    func signIn(_ credential: String, transaction input: SignInTransaction, request: Request, now: Date) async -> Response? {
        let authorization = input.request
        guard authorization.prompt != "login", let signed = try? SignedRequest(credential),
            case .sessionKey(let ctx, let kdfVersion) = signed.signer, let token = signed.string("refresh_token"),
            let (record, device) = try? await devices.check(token, now: now, tenant: contoso.tenant.id)
        else { return nil }
        let context = SessionKeyCrypto.context(ctx: ctx, kdfVersion: kdfVersion, payload: signed.payload)
        guard
            SessionKeyCrypto.isValidSignature(
                signed.signature, of: signed.signingInput, sessionKey: SymmetricKey(data: record.sessionKey), context: context)
        else { return nil }
        guard await devices.isLive(nonce: signed.string("request_nonce"), now: now) else {
            return await askForNonce(request, now: now)
        }
        guard record.grant.tenantID == authorization.endpoint.tenant.id, let user = contoso.user(id: record.grant.userID),
            authorization.loginHint.map({ $0.equalsIgnoringCase(user.userPrincipalName) }) ?? true
        else { return nil }

        var transaction = input
        transaction.userID = user.id
        transaction.passwordVerified = true
        transaction.inheritedReferences = record.grant.methods
        transaction.deviceID = device.deviceID
        transaction.fromSession = true
        transaction.platform = ClientPlatform.of(userAgent: request.headers[.userAgent])
        let policy = await state.policy(for: authorization.endpoint.tenant)
        switch policy.accountState(of: user.userPrincipalName)?.state {
        case .locked?: return await flow.refusalPage(RefusalErrors.accountLocked, transaction, username: user.userPrincipalName, now: now)
        case .disabled?:
            return await flow.refusalPage(RefusalErrors.accountDisabled, transaction, username: user.userPrincipalName, now: now)
        case .passwordExpired?, nil: break
        }
        if let rule = policy.conditionalAccessRule(
            clientID: authorization.client.clientID, user: user.userPrincipalName, platform: transaction.platform)
        {
            switch rule.require {
            case .block:
                return await flow.refusalPage(
                    RefusalErrors.conditionalAccessBlocked, transaction, username: user.userPrincipalName, now: now)
            // Registered is neither compliant nor managed (joined).
            case .compliantDevice:
                return await flow.refusalPage(RefusalErrors.deviceNotCompliant, transaction, username: user.userPrincipalName, now: now)
            case .managedDevice:
                return await flow.refusalPage(RefusalErrors.deviceNotManaged, transaction, username: user.userPrincipalName, now: now)
            case .mfa, .mfaRegistration: if !transaction.mfaVerified { return nil }
            case .authenticationStrength(let strength): if !transaction.meets(strength) { return nil }
            case .registeredDevice: break
            }
        }
        if user.requiresMFA || authorization.demandsMFA, !transaction.mfaVerified { return nil }
        await state.update(transaction)
        configuration.announce("prt-sso \(device.deviceID) \(authorization.client.clientID)")
        return await flow.complete(transaction, session: nil, now: now)
    }

    /// The same `/authorize` request with a fresh `sso_nonce` for the credential to carry.
    private func askForNonce(_ request: Request, now: Date) async -> Response {
        var fields = FormFields(request.queryFields.pairs.filter { $0.name != "sso_nonce" }.map { ($0.name, $0.value) })
        fields.append("sso_nonce", await devices.issueNonce(now: now))
        return Response(status: .found, headers: [.location: "\(root)\(request.uri.path)?\(fields.encoded)", .cacheControl: "no-store"])
    }
}
