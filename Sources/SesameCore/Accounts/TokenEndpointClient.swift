import FoundationEssentials
import Logging

/// Posts ``TokenRequest``s to an account type's token endpoint and reads the answer: a
/// ``TokenResponse``, or the service's refusal as one ``AccountStoreError``.
struct TokenEndpointClient: Sendable {
    let transport: any HTTPTransport
    let logger: Logger
    /// How long the client waits when the service says `Retry-After` (429, 503) before it tries
    /// once more; a longer wait is handed back as ``AccountStoreError/Code-swift.struct/throttled``.
    var longestWait: Duration = .seconds(30)
    /// Waits (tests record instead).
    var sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }

    /// Sends `request` with the configuration's client secret (confidential clients only, as
    /// ``AccountConfiguration/clientAuthentication`` says: Basic or in the form) and custom
    /// headers (the B2C seed's `contentType`).
    /// - Parameter homeAccountID: the account a refresh is for (carried by its errors).
    func send(
        _ request: some TokenRequest, configuration: AccountConfiguration, accountType: String, homeAccountID: String? = nil
    ) async throws(AccountStoreError) -> TokenResponse {
        var fields = request.formFields
        var headers: HTTPHeaders = ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"]
        if let secret = configuration.clientSecret {
            switch configuration.clientAuthentication ?? .clientSecretPost {
            case .clientSecretBasic:
                headers["Authorization"] = ClientAuthentication.basicCredentials(clientID: configuration.clientID, secret: secret)
            case .clientSecretPost, .none:
                fields.append(("client_secret", secret.revealed))
            }
        }
        for (name, value) in configuration.customHeaderFields { headers[name] = value }
        let httpRequest = HTTPRequest(
            method: "POST", url: configuration.tokenURL, headers: headers, body: Data(FormEncoding.encode(fields).utf8))

        var response = try await exchange(httpRequest, accountType: accountType)
        if [429, 503].contains(response.status) {
            // Throttled (AADSTS50196, or a busy service): wait as asked, once, when that is short.
            let wait = AuthorizedHTTPClient.retryAfter(response.headers["Retry-After"], now: Date()) ?? .seconds(5)
            guard wait <= longestWait else { throw Self.throttled(response, wait: wait, accountType: accountType) }
            logger.notice("token endpoint throttled; retrying", metadata: ["accountType": "\(accountType)", "after": "\(wait)"])
            do { try await sleep(wait) } catch { throw AccountStoreError(.cancelled, "Sign-in was cancelled.") }
            response = try await exchange(httpRequest, accountType: accountType)
            if [429, 503].contains(response.status) {
                throw Self.throttled(
                    response, wait: AuthorizedHTTPClient.retryAfter(response.headers["Retry-After"], now: Date()) ?? wait,
                    accountType: accountType)
            }
        }
        if response.isSuccess, let tokens = try? JSONDecoder().decode(TokenResponse.self, from: response.body) {
            logger.debug(
                "token response", metadata: ["accountType": "\(accountType)", "grant": "\(request.grantType)", "response": "\(tokens)"])
            return tokens
        }
        if let refusal = try? JSONDecoder().decode(OAuthErrorResponse.self, from: response.body) {
            throw AccountStoreError.from(refusal, accountType: accountType, homeAccountID: homeAccountID)
        }
        var failure = AccountStoreError(
            .invalidResponse,
            "The token endpoint \(configuration.tokenURL.redactingQuery) answered HTTP \(response.status) with a body that is "
                + "not a token response."
        )
        failure.accountType = accountType
        throw failure
    }

    private func exchange(_ request: HTTPRequest, accountType: String) async throws(AccountStoreError) -> HTTPResponse {
        do {
            return try await transport.send(request)
        } catch {
            // Cancelled (Ctrl+C, the window closed): that, not a network failure.
            var failure =
                error is CancellationError || Task.isCancelled
                ? AccountStoreError(.cancelled, "Sign-in was cancelled.")
                : AccountStoreError(.network, "Could not reach the identity service", cause: error)
            failure.accountType = accountType
            throw failure
        }
    }

    private static func throttled(_ response: HTTPResponse, wait: Duration, accountType: String) -> AccountStoreError {
        let refusal = try? JSONDecoder().decode(OAuthErrorResponse.self, from: response.body)
        let code = refusal.flatMap { AccountStoreError.serviceCode(in: $0.errorDescription) ?? $0.errorCodes.first.map { "AADSTS\($0)" } }
        let seconds = max(1, Int(wait.components.seconds))
        var error = AccountStoreError(
            .throttled,
            "The identity service asks Sesame to wait \(seconds) seconds before asking again (HTTP \(response.status)); try again then.")
        error.serviceCode = code
        error.retryAfter = wait
        error.accountType = accountType
        return error
    }
}
