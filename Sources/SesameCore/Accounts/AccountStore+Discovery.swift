import Foundation

extension AccountStore {
    /// The provider's OpenID configuration (discovery document) for an account type, fetched
    /// once and kept: what the app reads the `userinfo_endpoint` from, say.
    public func providerConfiguration(forAccountType accountType: String) async throws(AccountStoreError) -> OpenIDConfiguration {
        let configuration = try requireConfiguration(accountType)
        do {
            return try await verifier.metadata.metadata(discoveryURL: configuration.resolvedDiscoveryURL, now: now()).0
        } catch let error as AccountStoreError {
            throw error
        } catch {
            throw AccountStoreError(
                .providerMetadataUnavailable, "The identity provider's OpenID configuration could not be fetched", cause: error)
        }
    }

    /// `configuration` ready for the wire: the endpoints its settings left to discovery taken
    /// from the provider's document (OIDC Discovery §3), and how the client authenticates chosen
    /// from `token_endpoint_auth_methods_supported` when it has a secret.
    ///
    /// Discovered endpoints must be `https`, or `http` on a loopback address (a provider on this
    /// machine): a discovery document cannot send the code or the secret anywhere else.
    func forTheWire(_ configuration: AccountConfiguration) async throws(AccountStoreError) -> AccountConfiguration {
        var ready = configuration
        let needsDocument =
            !configuration.discoveredEndpoints.isEmpty
            || (configuration.clientSecret != nil && configuration.clientAuthentication == nil && !configuration.isMicrosoftAuthority)
        var provider: OpenIDConfiguration?
        if needsDocument {
            do {
                provider = try await verifier.metadata.metadata(discoveryURL: configuration.resolvedDiscoveryURL, now: now()).0
            } catch let error as AccountStoreError {
                throw error
            } catch {
                throw AccountStoreError(
                    .providerMetadataUnavailable, "The identity provider's OpenID configuration could not be fetched", cause: error)
            }
        }
        if configuration.discoveredEndpoints.contains(.authorization) {
            ready.authorizationURL = try Self.endpoint(provider?.authorizationEndpoint, named: "authorization_endpoint", key: "authURL")
        }
        if configuration.discoveredEndpoints.contains(.token) {
            ready.tokenURL = try Self.endpoint(provider?.tokenEndpoint, named: "token_endpoint", key: "tokenURL")
        }
        if ready.clientAuthentication == nil {
            ready.clientAuthentication = ClientAuthentication.choose(
                hasSecret: configuration.clientSecret != nil, supported: provider?.tokenEndpointAuthMethods,
                microsoftAuthority: configuration.isMicrosoftAuthority)
        }
        return ready
    }

    private static func endpoint(_ url: URL?, named field: String, key: String) throws(AccountStoreError) -> URL {
        guard let url else {
            throw AccountStoreError(
                .providerMetadataUnavailable, "The identity provider's OpenID configuration names no \(field); add \(key) to the settings.")
        }
        let scheme = url.scheme?.lowercased() ?? ""
        let loopback = ["127.0.0.1", "localhost", "::1"].contains(url.host?.lowercased() ?? "")
        guard url.host != nil, scheme == "https" || (scheme == "http" && loopback) else {
            throw AccountStoreError(
                .providerMetadataUnavailable,
                "The identity provider's \(field) (\(url.redactingQuery)) is not an https address; Sesame does not send sign-ins there.")
        }
        return url
    }
}
