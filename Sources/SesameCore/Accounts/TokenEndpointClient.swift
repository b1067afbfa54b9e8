import Foundation
import Logging

/// Posts ``TokenRequest``s to an account type's token endpoint and reads the answer: a
/// ``TokenResponse``, or the service's refusal as one ``AccountStoreError``.
struct TokenEndpointClient: Sendable {
    let transport: any HTTPTransport
    let logger: Logger

    /// Sends `request` with the configuration's client secret (confidential clients only) and
    /// custom headers (the B2C seed's `contentType`).
    /// - Parameter homeAccountID: the account a refresh is for (carried by its errors).
    func send(
        _ request: some TokenRequest, configuration: AccountConfiguration, accountType: String, homeAccountID: String? = nil
    ) async throws(AccountStoreError) -> TokenResponse {
        var fields = request.formFields
        if let secret = configuration.clientSecret { fields.append(("client_secret", secret.revealed)) }
        var headers: HTTPHeaders = ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"]
        for (name, value) in configuration.customHeaderFields { headers[name] = value }
        let httpRequest = HTTPRequest(
            method: "POST", url: configuration.tokenURL, headers: headers, body: Data(FormEncoding.encode(fields).utf8))

        let response: HTTPResponse
        do {
            response = try await transport.send(httpRequest)
        } catch {
            var failure = AccountStoreError(.network, "Could not reach the identity service: \(error)")
            failure.accountType = accountType
            throw failure
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
}
