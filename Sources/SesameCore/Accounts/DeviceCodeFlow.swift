import FoundationEssentials
import Logging

/// The device code flow (RFC 8628), for a machine with no browser: the service hands out a
/// code, the user types it on any other device, and the flow polls the token endpoint at the
/// service's interval until the user has signed in there, declines, or the code expires.
/// Stateless — a configuration in, the token response out: the account store checks and stores
/// it like any other sign-in's, and the device registration uses it for the broker's sign-in.
///
/// The device authorization endpoint is discovery's `device_authorization_endpoint`, or, when
/// discovery has none, the token endpoint's sibling `…/devicecode` (Entra's layout).
/// `authorization_pending` keeps polling; `slow_down` adds five seconds to the interval (RFC 8628
/// §3.5). Cancelling the calling task stops polling at once.
struct DeviceCodeFlow: Sendable {
    let transport: any HTTPTransport
    let tokenEndpoint: TokenEndpointClient
    /// The providers' discovery documents (the store's, shared with its id_token checks).
    let metadata: ProviderMetadataCache
    let now: @Sendable () -> Date
    /// How it waits between polls (tests record instead of sleeping).
    let sleep: @Sendable (Duration) async throws -> Void
    let logger: Logger

    /// The tokens of the user who signs in with the code `show` is given.
    func tokens(
        configuration: AccountConfiguration, accountType: String, show: @Sendable (DeviceAuthorizationResponse) async -> Void
    ) async throws(AccountStoreError) -> TokenResponse {
        let authorization = try await requestDeviceCode(configuration: configuration, accountType: accountType)
        logger.info("device code issued", metadata: ["accountType": "\(accountType)", "authorization": "\(authorization)"])
        await show(authorization)
        return try await pollForTokens(authorization, configuration: configuration, accountType: accountType)
    }

    /// Where the device code flow starts for `configuration`.
    func deviceAuthorizationURL(_ configuration: AccountConfiguration) async -> URL {
        if configuration.scopes.contains("openid") || configuration.discoveryURL != nil,
            let (provider, _) = try? await metadata.metadata(discoveryURL: configuration.resolvedDiscoveryURL, now: now()),
            let endpoint = provider.deviceAuthorizationEndpoint
        {
            return endpoint
        }
        return configuration.tokenURL.deletingLastPathComponent().appending(path: "devicecode").withQuery(of: configuration.tokenURL)
    }

    private func requestDeviceCode(
        configuration: AccountConfiguration, accountType: String
    ) async throws(AccountStoreError) -> DeviceAuthorizationResponse {
        let url = await deviceAuthorizationURL(configuration)
        var fields = [("client_id", configuration.clientID), ("scope", configuration.scopes.joined(separator: " "))]
        var headers: HTTPHeaders = ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"]
        if let secret = configuration.clientSecret {
            if configuration.clientAuthentication == .clientSecretBasic {
                headers["Authorization"] = ClientAuthentication.basicCredentials(clientID: configuration.clientID, secret: secret)
            } else {
                fields.append(("client_secret", secret.revealed))
            }
        }
        let request = HTTPRequest(method: "POST", url: url, headers: headers, body: Data(FormEncoding.encode(fields).utf8))
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch {
            if error is CancellationError || Task.isCancelled { throw AccountStoreError(.cancelled, "Sign-in was cancelled.") }
            throw AccountStoreError(.network, "Could not reach the identity service", cause: error)
        }
        // Entra answers this endpoint's errors with HTTP 200: look for `error` first.
        if let refusal = try? JSONDecoder().decode(OAuthErrorResponse.self, from: response.body) {
            var error = AccountStoreError.from(refusal, accountType: accountType, homeAccountID: nil)
            if error.code == .interactionRequired { error = AccountStoreError(.tokenRequestFailed, error.message) }
            throw error
        }
        guard response.isSuccess else {
            throw AccountStoreError(
                .tokenRequestFailed,
                "The identity service does not offer sign-in with a code at \(url.redactingQuery) (HTTP \(response.status)).")
        }
        do {
            return try JSONDecoder().decode(DeviceAuthorizationResponse.self, from: response.body)
        } catch {
            throw AccountStoreError(.invalidResponse, "The identity service's device code answer could not be read: \(error)")
        }
    }

    private func pollForTokens(
        _ authorization: DeviceAuthorizationResponse, configuration: AccountConfiguration, accountType: String
    ) async throws(AccountStoreError) -> TokenResponse {
        let request = DeviceCodeTokenRequest(
            clientID: configuration.clientID, deviceCode: authorization.deviceCode, requestsClientInfo: configuration.isMicrosoftAuthority)
        let deadline = now().addingTimeInterval(TimeInterval(authorization.expiresIn))
        var interval = authorization.interval
        while true {
            do {
                try await sleep(.seconds(interval))
            } catch {
                throw AccountStoreError(.cancelled, "Sign-in was cancelled.")
            }
            do {
                return try await tokenEndpoint.send(request, configuration: configuration, accountType: accountType)
            } catch {
                switch error.oauthError {
                case "authorization_pending":
                    break
                case "slow_down":
                    interval += 5
                case "access_denied" where ["AADSTS90094", "AADSTS90095"].contains(error.serviceCode ?? ""):
                    // Not the user's Cancel: the tenant lets only an administrator approve the app.
                    throw described(
                        AccountStoreError(.authorizationFailed, "Your organization lets only an administrator approve this app."),
                        as: error)
                case "authorization_declined", "access_denied":
                    throw described(
                        AccountStoreError(.deviceCodeDeclined, "The sign-in with the code was declined on the other device."), as: error)
                case "expired_token", "code_expired":
                    throw described(
                        AccountStoreError(.deviceCodeExpired, "The code expired before anyone signed in with it; ask for a new one."),
                        as: error)
                default:
                    throw error
                }
                guard now() < deadline else {
                    throw AccountStoreError(.deviceCodeExpired, "The code expired before anyone signed in with it; ask for a new one.")
                }
            }
        }
    }

    /// `error` typed as `code`'s kind with the service's fields kept.
    private func described(_ typed: AccountStoreError, as service: AccountStoreError) -> AccountStoreError {
        var error = typed
        error.oauthError = service.oauthError
        error.serviceCode = service.serviceCode
        error.errorDescription = service.errorDescription
        error.errorURI = service.errorURI
        error.accountType = service.accountType
        return error
    }
}

extension URL {
    /// This URL with `other`'s query (B2C's `?p=` on a sibling endpoint).
    func withQuery(of other: URL) -> URL {
        guard let query = URLComponents(url: other, resolvingAgainstBaseURL: false)?.percentEncodedQuery,
            var components = URLComponents(url: self, resolvingAgainstBaseURL: false)
        else { return self }
        components.percentEncodedQuery = query
        return components.url ?? self
    }
}

/// The store's device code sign-in: the flow's tokens, their id_token checked, the account stored.
enum DeviceCodeSignIn {
    /// ``AccountStore/signInWithDeviceCode(accountType:additionalScopes:show:)``: `stored` is the
    /// account type's configuration with the additional scopes; `sleep` waits between polls.
    static func signIn(
        accountType: String, configuration stored: AccountConfiguration, show: @Sendable (DeviceAuthorizationResponse) async -> Void,
        sleep: @escaping @Sendable (Duration) async throws -> Void, in context: AccountStoreContext
    ) async throws(AccountStoreError) -> Account {
        do throws(AccountStoreError) {
            let configuration = try await context.forTheWire(stored)
            let flow = DeviceCodeFlow(
                transport: context.transport, tokenEndpoint: context.tokenEndpoint, metadata: context.verifier.metadata,
                now: context.now, sleep: sleep, logger: context.logger)
            let tokens = try await flow.tokens(configuration: configuration, accountType: accountType, show: show)
            let claims = try await context.verifier.claims(
                of: tokens.idToken, configuration: configuration, expectedNonce: nil, required: configuration.scopes.contains("openid"),
                now: context.now())
            return try SignedInAccounts.save(
                tokens, claims: claims, clientInfo: tokens.clientInfo.flatMap(ClientInfo.init(encoded:)), configuration: configuration,
                accountType: accountType, source: "device_code", in: context)
        } catch {
            var failure = error
            if failure.accountType == nil { failure.accountType = accountType }
            context.logger.notice("device code sign-in failed", metadata: ["accountType": "\(accountType)", "error": "\(failure)"])
            context.events.emit(.didFailToRequestAccess(accountType: accountType, error: failure))
            throw failure
        }
    }
}
