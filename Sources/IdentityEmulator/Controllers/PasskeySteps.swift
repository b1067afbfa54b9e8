import FoundationEssentials
import Hummingbird

/// The passkey page's step (`step=fido`): the browser's assertion verified by the emulator's
/// relying party, as the second factor after a password or as the whole sign-in from "Sign-in
/// options" (the assertion's user handle names the user). A refused answer shows the page again
/// with the refusal's sentence and does not advance the sign-in.
extension LoginSteps {
    mutating func fido() async -> Response {
        let passkeys = PasskeyController(services: services)
        let second = SecondFactorFlow(services: services)
        let policy = await state.policy(for: endpoint.tenant)
        let signedInUser = transaction.firstFactorVerified ? transaction.userID.flatMap(users.user(id:)) : nil
        guard endpoint.tenant.kind == .workforce, policy.authenticationMethods.enabled.contains(.fido2) else {
            return flow.restart(transaction, action: action)
        }
        let others: Bool
        if let signedInUser {
            others = await second.usableMethods(signedInUser, transaction, policy: policy).count > 1
        } else {
            others = false
        }
        switch form["action"] {
        case "back":
            return .html(SignInPages.username(action: action, ctx: ctx, hint: nil, error: nil))
        case "another-way":
            guard let signedInUser else { return .html(SignInPages.username(action: action, ctx: ctx, hint: nil, error: nil)) }
            return await second.verifyIdentity(transaction, user: signedInUser)
        case "start", "retry":
            return await passkeys.signInPage(transaction, user: signedInUser, others: others)
        default: break
        }
        let relyingParty = await passkeys.relyingParty(for: endpoint.tenant)
        let verified: VerifiedAssertion
        do {
            let response = try AuthenticationResponseJSON.parse(Data((form["credential"] ?? "").utf8))
            verified = try await state.verifyPasskeyAssertion(response, relyingParty: relyingParty, now: now)
        } catch {
            logger.info("passkey sign-in refused: \(error)")
            return await passkeys.signInPage(transaction, user: signedInUser, others: others, error: error.sentence)
        }
        if let signedInUser {
            // The challenge named this user; the relying party refused anyone else's credential.
            transaction.secondFactor = .fido2
            return await second.afterSecondFactor(transaction, user: signedInUser)
        }
        guard let owner = users.user(id: String(decoding: verified.userHandle, as: UTF8.self)) else {
            return await passkeys.signInPage(transaction, user: nil, others: false, error: WebAuthnRefusal.credentialUnknown.sentence)
        }
        transaction.userID = owner.id
        transaction.passwordlessMethod = .fido2
        return await flow.afterFirstFactor(transaction, user: owner)
    }
}
