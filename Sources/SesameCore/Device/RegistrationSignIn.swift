import FoundationEssentials
import Logging

/// How the user signs in for the registration: on a page (the window's), or with a code typed
/// on any device (`sesame device register` in a terminal).
public enum RegistrationSignIn: Sendable {
    case page(any SignInUserAgent)
    case deviceCode(show: @Sendable (DeviceAuthorizationResponse) async -> Void)
}

/// The Microsoft Authentication Broker's sign-in for the device registration service, its code
/// (or device code) redeemed here: the tokens serve the enrolment and the PRT request, then are
/// dropped (never cached). Stateless.
struct BrokerRegistrationSignIn {
    let transport: any HTTPTransport
    let logger: Logger
    let now: @Sendable () -> Date

    /// The broker's tokens for the registration service, the user signing in as `signIn` says.
    func tokens(authority: URL, root: URL, signIn: RegistrationSignIn) async throws(DeviceIdentityError) -> TokenResponse {
        var configuration = AccountConfiguration(
            clientID: DeviceIdentityClient.brokerClientID,
            scopes: ["\(DeviceIdentityClient.registrationResource)/.default", "offline_access"],
            authorizationURL: authority.appending(path: "oauth2/v2.0/authorize"), tokenURL: authority.appending(path: "oauth2/v2.0/token"),
            redirectURL: root.appending(path: "common/oauth2/nativeclient"), storageGroup: "device-registration")
        let userAgent: any SignInUserAgent
        switch signIn {
        case .page(let agent): userAgent = agent
        case .deviceCode(let show):
            let flow = DeviceCodeFlow(
                transport: transport, tokenEndpoint: TokenEndpointClient(transport: transport, logger: logger),
                metadata: ProviderMetadataCache(transport: transport, logger: logger), now: now,
                sleep: { try await Task.sleep(for: $0) }, logger: logger)
            do {
                return try await flow.tokens(configuration: configuration, accountType: "device-registration", show: show)
            } catch {
                throw DeviceIdentityError(.signInFailed, error.message, serviceCode: error.serviceCode)
            }
        }
        do {
            configuration.redirectURL = try await userAgent.redirectURI(for: configuration)
        } catch {
            throw DeviceIdentityError(.signInFailed, "The sign-in cannot receive its answer: \(error)")
        }
        let request = AuthorizationRequest(configuration: configuration)
        let session = SignInSession(accountType: "device-registration", configuration: configuration, request: request)
        do {
            try await userAgent.present(session)
        } catch {
            await userAgent.dismiss(session)
            throw DeviceIdentityError(.signInFailed, "The sign-in page could not be shown: \(error)")
        }
        let ending = await session.ending()
        await userAgent.dismiss(session)
        switch ending {
        case .answered(.code(let answer)):
            do {
                return try await TokenEndpointClient(transport: transport, logger: logger).send(
                    AuthorizationCodeRequest(code: answer.code, answering: session.request), configuration: configuration,
                    accountType: "device-registration")
            } catch {
                throw DeviceIdentityError(.signInFailed, error.message, serviceCode: error.serviceCode)
            }
        case .answered(.error(let refusal)):
            let error = AccountStoreError.from(refusal, accountType: "device-registration")
            throw DeviceIdentityError(.signInFailed, error.message, serviceCode: error.serviceCode)
        case .failed(let error): throw DeviceIdentityError(.signInFailed, error.message)
        case .cancelled, .handedOff: throw DeviceIdentityError(.cancelled, "The sign-in was cancelled; this computer is not registered.")
        }
    }
}
