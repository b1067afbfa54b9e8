import FoundationEssentials
import Logging

/// A sign-in with this computer's Primary Refresh Token, before any page: the registered
/// device's PRT asks the organization for the app's own tokens (its client id and scopes), and
/// the id_token that comes back is checked as a refresh's is. Stateless — the device, the
/// verifier and the configuration in, an outcome out; the store saves what it gives.
///
/// It is not tried when the user asked to choose who signs in (`prompt`, a group's next sign-in
/// after a sign-out), when a claims challenge waits for a page (MFA), for another user's
/// `login_hint`, for B2C or for another cloud than the device's; then, and whenever the PRT
/// cannot answer (the app needs the user's consent first, say), the page signs in as before.
struct DeviceSignIn {
    /// What came of trying.
    enum Outcome {
        /// Signed in with no page: the tokens (issued to the app's own client id, naming the
        /// device) and the checked id_token's claims.
        case signedIn(TokenResponse, IDTokenClaims?, deviceID: String)
        /// The PRT does not serve this sign-in; the page does.
        case notApplicable
        /// The organization removed or disabled this computer, or its keys cannot be used (its
        /// TPM is away): said once, then the page.
        case deviceLost(DeviceIdentityError)
        /// The organization's policy refused the PRT's sign-in (Conditional Access: a compliant
        /// or managed device, say): the page would be refused the same way, unless a browser the
        /// organization manages passes it. Its code says which ``TenantRefusal``.
        case refused(AccountStoreError)
    }

    let device: DeviceIdentity
    let verifier: IDTokenVerifier
    let logger: Logger

    /// The registration whose PRT would try `configuration`'s sign-in (with `parameters`), asking
    /// nothing of the network; nil when only a page can sign in. What ``attempt`` checks first,
    /// so that a program can be asked about the device's user before anything is signed in.
    func applicable(
        configuration: AccountConfiguration, parameters: [String: String], asksForAccount: Bool
    ) async
        -> DeviceIdentity.Status?
    {
        guard !asksForAccount, parameters["prompt"] == nil, parameters["claims"] == nil, configuration.policy == nil,
            configuration.isMicrosoftAuthority, let status = try? await device.status(),
            status.authority.host?.lowercased() == configuration.authorizationURL.host?.lowercased()
        else { return nil }
        if let hint = parameters["login_hint"], let user = status.userPrincipalName, !hint.equalsIgnoringCase(user) {
            return nil
        }
        return status
    }

    /// Tries `configuration`'s sign-in (with `parameters`, as the page would get them) with the PRT.
    func attempt(
        accountType: String, configuration: AccountConfiguration, parameters: [String: String], asksForAccount: Bool, now: Date
    ) async -> Outcome {
        guard let status = await applicable(configuration: configuration, parameters: parameters, asksForAccount: asksForAccount)
        else { return .notApplicable }
        do throws(DeviceIdentityError) {
            let tokens = try await device.tokens(
                clientID: configuration.clientID, scope: configuration.scopes.joined(separator: " "),
                redirectURI: configuration.redirectURL.absoluteString)
            let claims: IDTokenClaims?
            do {
                claims = try await verifier.claims(
                    of: tokens.idToken, configuration: configuration, expectedNonce: nil,
                    required: configuration.scopes.contains("openid"), now: now)
            } catch {
                logger.notice("the PRT's id_token failed its checks", metadata: ["accountType": "\(accountType)", "error": "\(error)"])
                return .notApplicable
            }
            logger.info(
                "signed in with this computer's PRT", metadata: ["accountType": "\(accountType)", "deviceId": "\(status.deviceID)"])
            return .signedIn(tokens, claims, deviceID: status.deviceID)
        } catch  where error.code == .deviceRemoved || error.code == .deviceDisabled || error.code == .keysUnreadable {
            logger.notice("this computer's registration is gone", metadata: ["error": "\(error)"])
            return .deviceLost(error)
        } catch  where error.code == .refused && error.serviceCode != "AADSTS65001" && TenantRefusal(serviceCode: error.serviceCode) != nil
        {
            logger.notice(
                "the organization's policy refused the PRT's sign-in", metadata: ["accountType": "\(accountType)", "error": "\(error)"])
            var refusal = AccountStoreError(.authorizationFailed, error.message)
            refusal.serviceCode = error.serviceCode
            refusal.errorDescription = error.errorDescription
            refusal.accountType = accountType
            return .refused(refusal)
        } catch {
            logger.info("the PRT could not sign in; the page will", metadata: ["accountType": "\(accountType)", "error": "\(error)"])
            return .notApplicable
        }
    }
}
