import FoundationEssentials
import HTTPTypes
import Hummingbird

/// Security info's passkey endpoints, which the "Passkey or security key" page's script calls:
/// the page's checks (the session, its anti-forgery value, MFA within five minutes, the tenant
/// allowing passkeys), then the relying party's ceremony (``PasskeyController``).
extension SecurityInfoController {
    /// `POST /security-info/passkey/options` (form `token`): `PublicKeyCredentialCreationOptionsJSON`,
    /// or `{"error": …}` with why not.
    func passkeyOptions(_ request: Request) async throws -> Response {
        let form = FormFields(encoded: try await request.bodyText(limit: 4 * 1024))
        switch await passkeyCheck(request, token: form["token"]) {
        case .failure(let refusal): return refusal.response
        case .success(let signedIn):
            return await PasskeyController(services: services).creationOptions(for: signedIn.user, tenant: contoso.tenant)
        }
    }

    /// `POST /security-info/passkey` (JSON `{"token", "name", "credential": RegistrationResponseJSON}`):
    /// `{"displayName": …}` once kept, or `{"error": …}`.
    func registerPasskey(_ request: Request) async throws -> Response {
        let body = try await request.bodyText(limit: 64 * 1024)
        let sent = try? JSONDecoder().decode(PasskeyAnswer.self, from: Data(body.utf8))
        switch await passkeyCheck(request, token: sent?.token) {
        case .failure(let refusal): return refusal.response
        case .success(let signedIn):
            guard let credential = sent?.credential, let data = try? JSONEncoder().encode(credential) else {
                return PasskeyRefusal(status: .badRequest, sentence: "The browser's answer has no passkey in it. Try again.").response
            }
            let name = sent?.name.map { String($0.prefix(64)) }
            return await PasskeyController(services: services).register(data, name: name, for: signedIn.user, tenant: contoso.tenant)
        }
    }

    /// What the page posts: its anti-forgery value, the name typed, and `create()`'s answer.
    private struct PasskeyAnswer: Decodable {
        let token: String?
        let name: String?
        let credential: RegistrationResponseJSON?
    }

    /// Why a passkey call is refused, as the page's script shows it.
    struct PasskeyRefusal: Error {
        let status: HTTPResponse.Status
        let sentence: String
        var response: Response { .json(.object([("error", .string(sentence))]), status: status) }
    }

    /// The signed-in user allowed to register a passkey now, or why not.
    private func passkeyCheck(_ request: Request, token: String?) async -> Result<SignedIn, PasskeyRefusal> {
        guard let signedIn = await signedIn(request) else {
            return .failure(PasskeyRefusal(status: .unauthorized, sentence: "Sign in to Security info first, then add the passkey."))
        }
        guard tokenMatches(token, signedIn) else {
            return .failure(PasskeyRefusal(status: .forbidden, sentence: SecurityInfoPages.forgedSentence))
        }
        guard await state.policy(for: contoso.tenant).authenticationMethods.enabled.contains(.fido2) else {
            return .failure(PasskeyRefusal(status: .forbidden, sentence: "Your organization doesn't allow that sign-in method."))
        }
        if let sentence = passkeyRefusal(signedIn) { return .failure(PasskeyRefusal(status: .forbidden, sentence: sentence)) }
        return .success(signedIn)
    }
}
