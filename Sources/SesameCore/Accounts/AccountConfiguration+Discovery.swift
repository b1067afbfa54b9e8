import FoundationEssentials
import SesameSystem

extension AccountConfiguration {
    /// Whether the store needs the provider's discovery document before it sends anything: for
    /// an endpoint left to discovery, or to choose how a client with a secret authenticates at a
    /// provider that is not Microsoft's.
    var needsProviderDocument: Bool {
        !discoveredEndpoints.isEmpty || !decidesClientAuthenticationAlone
    }

    /// This configuration with what `provider` (the discovery document, when fetched) supplies:
    /// the endpoints left to discovery and, unless set, the client authentication. The one place
    /// that decides them, for the store and for `sesame doctor` alike.
    ///
    /// Discovered endpoints must be `https`, or `http` on a loopback address (a provider on this
    /// machine): a discovery document cannot send the code or the secret anywhere else.
    /// - Throws: ``AccountStoreError/Code/providerMetadataUnavailable`` naming the field.
    func ready(with provider: OpenIDConfiguration?) throws(AccountStoreError) -> AccountConfiguration {
        var ready = self
        if discoveredEndpoints.contains(.authorization) { ready.authorizationURL = try endpoint(.authorization, from: provider) }
        if discoveredEndpoints.contains(.token) { ready.tokenURL = try endpoint(.token, from: provider) }
        if ready.clientAuthentication == nil { ready.clientAuthentication = clientAuthentication(with: provider) }
        return ready
    }

    /// The authorization or token endpoint the discovery document names, if Sesame may use it.
    /// - Throws: ``AccountStoreError/Code/providerMetadataUnavailable`` when it names none, or
    ///   one that is not `https` (or `http` on this computer).
    func endpoint(_ which: DiscoveredEndpoints, from provider: OpenIDConfiguration?) throws(AccountStoreError) -> URL {
        which == .authorization
            ? try Self.endpoint(provider?.authorizationEndpoint, named: "authorization_endpoint", key: "authURL")
            : try Self.endpoint(provider?.tokenEndpoint, named: "token_endpoint", key: "tokenURL")
    }

    /// How the client authenticates: as configured, else as ``ClientAuthentication/choose(hasSecret:supported:microsoftAuthority:)``
    /// decides from the document's `token_endpoint_auth_methods_supported`.
    func clientAuthentication(with provider: OpenIDConfiguration?) -> ClientAuthentication {
        clientAuthentication
            ?? ClientAuthentication.choose(
                hasSecret: clientSecret != nil, supported: provider?.tokenEndpointAuthMethods, microsoftAuthority: isMicrosoftAuthority)
    }

    /// Whether the client authentication can be decided without the discovery document.
    var decidesClientAuthenticationAlone: Bool {
        clientAuthentication != nil || clientSecret == nil || isMicrosoftAuthority
    }

    private static func endpoint(_ url: URL?, named field: String, key: String) throws(AccountStoreError) -> URL {
        guard let url else {
            throw AccountStoreError(
                .providerMetadataUnavailable, "The identity provider's OpenID configuration names no \(field); add \(key) to the settings.")
        }
        let scheme = url.scheme?.lowercased() ?? ""
        guard url.host != nil, scheme == "https" || (scheme == "http" && url.isLoopback) else {
            throw AccountStoreError(
                .providerMetadataUnavailable,
                "The identity provider's \(field) (\(url.redactingQuery)) is not an https address; Sesame does not send sign-ins there.")
        }
        return url
    }
}
