import FoundationEssentials
import HTTPTypes
import Hummingbird

/// Entra's side of WS-Federation with a federated domain's identity provider: home realm
/// discovery sends the browser there after the user name, and `POST /login.srf` takes the signed
/// answer the provider's auto-submitting form posts back, checks it against the domain's
/// registration, and continues the sign-in as after a password ("Stay signed in?", consent, the
/// code).
struct FederationController: EmulatorController {
    let services: EmulatorServices

    /// Where providers post their answers (Entra's `https://login.microsoftonline.com/login.srf`).
    static let signInResponsePath = "/login.srf"
    /// How far the assertion's validity may be off Entra's clock (Entra allows five minutes).
    static let clockSkew: TimeInterval = 300
    /// The most a provider's form may post, and the most its `wresult` may be.
    static let formLimit = 256 * 1024
    static let wresultLimit = 64 * 1024

    // MARK: Home realm discovery

    /// The redirect to the domain's passive endpoint: `wa=wsignin1.0`, `wtrealm` (Entra's realm
    /// at every provider), `wctx` (the transaction, opaque to the provider), the user name, and
    /// `client-request-id`, as Entra sends them.
    func homeRealmRedirect(_ transaction: SignInTransaction, to domain: FederatedDomain) -> Response {
        var fields = FormFields([
            ("wa", WSFederation.signIn), ("wtrealm", WSFederation.microsoftOnlineRealm),
            ("wctx", WSFederation.context(transactionID: transaction.id)),
        ])
        if let userName = transaction.federatedUserName { fields.append("username", userName) }
        fields.append("client-request-id", transaction.request.correlationID)
        return .found(domain.passiveEndpoint.absoluteString + "?" + fields.encoded)
    }

    // MARK: POST /login.srf

    /// The provider's answer: `wa`, `wresult` (the signed token) and `wctx`. Any doubt is an
    /// error page; a sound answer is the first factor of the transaction `wctx` names.
    func signInResponse(_ request: Request) async -> Response {
        let now = clock.now
        let signIn = SignInController(services: services)
        if services.isFederationHost(request) { return ADFSController.notFound(services: services) }
        let form: FormFields
        do {
            form = FormFields(encoded: try await request.bodyText(limit: Self.formLimit))
        } catch {
            return signIn.flow.errorPage(.samlTokenInvalid, correlationID: nil, now: now)
        }
        guard let wctx = form["wctx"], let id = WSFederation.transactionID(inContext: wctx),
            var transaction = await state.transaction(id), let expected = transaction.federatedUserName
        else {
            return signIn.flow.errorPage(.flowTokenExpired, correlationID: nil, now: now)
        }
        func refuse(_ failure: ServiceError) -> Response {
            signIn.flow.errorPage(failure, correlationID: transaction.request.correlationID, now: now)
        }
        guard form["wa"] == WSFederation.signIn, let wresult = form["wresult"], !wresult.isEmpty,
            wresult.utf8.count <= Self.wresultLimit
        else { return refuse(.samlTokenInvalid) }

        let response: WSFederationResponse
        do {
            response = try WSFederationResponse(reading: wresult)
        } catch {
            logger.info("login.srf: \(error)")
            return refuse(.samlTokenInvalid)
        }
        let assertion = response.assertion
        let tenant = transaction.request.endpoint.tenant
        // The issuer names the realm, and the realm its registered certificate.
        guard let domain = services.federatedDomains.first(where: { $0.tenantID == tenant.id && $0.issuerURI == assertion.issuer })
        else {
            return refuse(.federationRealmNotFound(assertion.issuer))
        }
        do {
            try response.verify(with: domain.signingKey)
        } catch .unknownSigningKey {
            return refuse(.samlSigningKeyNotRegistered)
        } catch {
            return refuse(.samlSignatureInvalid)
        }
        guard assertion.audience == WSFederation.microsoftOnlineRealm else { return refuse(.samlTokenInvalid) }
        guard now >= assertion.notBefore.addingTimeInterval(-Self.clockSkew),
            now < assertion.notOnOrAfter.addingTimeInterval(Self.clockSkew)
        else {
            return refuse(.samlAssertionNotValidNow(now: now, notBefore: assertion.notBefore, notOnOrAfter: assertion.notOnOrAfter))
        }
        let upn = assertion.userPrincipalName
        guard domain.contains(userName: upn) else {
            return refuse(.samlUserInvalid("The UPN claim '\(upn)' is not in the federated domain '\(domain.name)'."))
        }
        guard upn.equalsIgnoringCase(expected) else {
            return refuse(.samlUserInvalid("The UPN claim '\(upn)' does not match the user '\(expected)' the sign-in was started for."))
        }
        guard let user = directory(for: tenant).user(signInName: upn) else {
            return refuse(.userNotInDirectory(upn, tenant: tenant.domain))
        }
        guard SAMLAssertion.immutableID(forUserID: user.id) == assertion.immutableID else {
            return refuse(.samlUserInvalid("The ImmutableID claim does not match the user '\(user.userPrincipalName)'."))
        }
        // Each assertion signs in once: a copy posted again (a replay) is refused.
        guard
            await state.acceptAssertion(
                id: assertion.id, expiresAt: assertion.notOnOrAfter.addingTimeInterval(Self.clockSkew), now: now)
        else { return refuse(.samlTokenInvalid) }

        transaction.userID = user.id
        transaction.federationVerified = true
        transaction.passwordVerified = false
        transaction.secondFactor = nil
        transaction.fromSession = false
        return await signIn.flow.afterFirstFactor(transaction, user: user)
    }
}
