import FoundationEssentials
import Logging

/// Checks id_tokens against their provider's published keys: fetches (and keeps) the discovery
/// document and the JWKS, validates with ``IDTokenValidator``, and refetches the keys once when
/// a token names a key it has not seen (providers roll their keys over).
struct IDTokenVerifier: Sendable {
    let metadata: ProviderMetadataCache
    let validator: IDTokenValidator

    init(transport: any HTTPTransport, validator: IDTokenValidator, logger: Logger) {
        metadata = ProviderMetadataCache(transport: transport, logger: logger)
        self.validator = validator
    }

    /// The claims of a valid id_token; `nil` when there is none and none was `required`.
    /// - Parameter expectedNonce: the authorization request's `nonce`; `nil` after a refresh.
    func claims(
        of idToken: Secret?, configuration: AccountConfiguration, expectedNonce: String?, required: Bool, now: Date
    ) async throws(AccountStoreError) -> IDTokenClaims? {
        guard let idToken else {
            if required { throw AccountStoreError(.invalidIDToken, "The identity service sent no id_token although openid was requested.") }
            return nil
        }
        let discoveryURL = configuration.resolvedDiscoveryURL
        do {
            var (provider, keys) = try await metadata.metadata(discoveryURL: discoveryURL, now: now)
            do {
                return try validator.validate(
                    idToken, provider: provider, keys: keys, clientID: configuration.clientID, expectedNonce: expectedNonce, now: now)
            } catch .unknownKey {
                (provider, keys) = try await metadata.metadata(discoveryURL: discoveryURL, refreshKeys: true, now: now)
                return try validator.validate(
                    idToken, provider: provider, keys: keys, clientID: configuration.clientID, expectedNonce: expectedNonce, now: now)
            }
        } catch let error as IDTokenValidationError {
            var refusal = AccountStoreError(.invalidIDToken, "The sign-in was refused because \(error).")
            refusal.idTokenFailure = error
            throw refusal
        } catch let error as AccountStoreError {
            throw error
        } catch {
            throw AccountStoreError(.providerMetadataUnavailable, "The identity provider's signing keys could not be fetched", cause: error)
        }
    }
}
