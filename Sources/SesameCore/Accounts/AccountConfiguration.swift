import FoundationEssentials

/// How one *account type* signs in: NXOAuth2's per-type configuration dictionary
/// (`kNXOAuth2AccountStoreConfiguration…` keys) as a value type.
///
/// An account type is the app's name for a service (`myGraphService`, `B2C_Acccount`); each
/// has its own client, endpoints, redirect and scopes.
public struct AccountConfiguration: Sendable, Hashable {
    /// `client_id`: the application (client) ID from the app registration.
    public var clientID: String
    /// `client_secret`, for confidential clients only. Public clients (every desktop app) must
    /// leave it `nil`: Entra answers AADSTS700025 to a public client that sends one. An empty
    /// secret in a settings file (the B2C seed ships one) means none.
    public var clientSecret: Secret?
    /// `scope`: what to ask for, e.g. `openid offline_access User.Read`.
    public var scopes: [String]
    /// The authorization endpoint, `…/oauth2/v2.0/authorize`; a query it carries (B2C's
    /// `?p=<policy>`) is kept on every request built from it.
    public var authorizationURL: URL
    /// The token endpoint, `…/oauth2/v2.0/token`; its query (`?p=<policy>`) is kept too.
    public var tokenURL: URL
    /// `redirect_uri`: where the identity service sends the result; intercepted, never loaded.
    public var redirectURL: URL
    /// The seeds' `loginURL`: the address the sign-in page posts credentials to. Used to
    /// classify navigations for the flow inspector; `nil` when unknown.
    public var loginURL: URL?
    /// The token storage group, the seeds' keychain group: apps naming the same group share
    /// accounts and tokens.
    public var storageGroup: String
    /// Extra headers on token requests (the B2C seed's `contentType`).
    public var customHeaderFields: [String: String]
    /// Extra authorization parameters: B2C's `p`, `prompt`, `login_hint`, `domain_hint`….
    public var additionalAuthorizationParameters: [String: String]
    /// The OpenID Connect discovery document; derived from ``authorizationURL`` when `nil`.
    public var discoveryURL: URL?
    /// B2C's password-reset user flow (`B2C_1_PasswordReset`): when the user picks "Forgot your
    /// password?" (AADB2C90118) the sign-in goes on in this policy. `nil` for Entra.
    public var passwordResetPolicy: String?
    /// The endpoints the settings left to discovery: the store takes them from the document at
    /// ``discoveryURL`` (`authorization_endpoint`, `token_endpoint`) before it uses them, and
    /// ``authorizationURL``/``tokenURL`` hold the discovery URL until then.
    public var discoveredEndpoints: DiscoveredEndpoints = []
    /// How the client proves itself at the token endpoint; `nil`: decided per provider (see
    /// ``ClientAuthentication``).
    public var clientAuthentication: ClientAuthentication?

    /// Endpoints taken from the discovery document.
    public struct DiscoveredEndpoints: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// `authorization_endpoint`.
        public static let authorization = DiscoveredEndpoints(rawValue: 1)
        /// `token_endpoint`.
        public static let token = DiscoveredEndpoints(rawValue: 2)
    }

    /// Creates a configuration; see each property for the wire field it sets.
    public init(
        clientID: String,
        clientSecret: Secret? = nil,
        scopes: [String],
        authorizationURL: URL,
        tokenURL: URL,
        redirectURL: URL,
        loginURL: URL? = nil,
        storageGroup: String,
        customHeaderFields: [String: String] = [:],
        additionalAuthorizationParameters: [String: String] = [:],
        discoveryURL: URL? = nil,
        passwordResetPolicy: String? = nil
    ) {
        self.clientID = clientID
        self.clientSecret = clientSecret.flatMap { $0.isEmpty ? nil : $0 }
        self.scopes = scopes
        self.authorizationURL = authorizationURL
        self.tokenURL = tokenURL
        self.redirectURL = redirectURL
        self.loginURL = loginURL
        self.storageGroup = storageGroup
        self.customHeaderFields = customHeaderFields
        self.additionalAuthorizationParameters = additionalAuthorizationParameters
        self.discoveryURL = discoveryURL
        self.passwordResetPolicy = passwordResetPolicy
    }

    /// Whether the authority is Microsoft's (or shaped like it: the emulator), which decides
    /// whether to ask for `client_info`.
    public var isMicrosoftAuthority: Bool {
        let host = authorizationURL.host?.lowercased() ?? ""
        let knownHosts = ["login.microsoftonline.com", "login.microsoft.com", "login.windows.net", "sts.windows.net"]
        return knownHosts.contains(host) || host.hasSuffix(".b2clogin.com") || host.hasSuffix(".ciamlogin.com")
            || authorizationURL.path.hasSuffix("/oauth2/v2.0/authorize")
    }

    /// The B2C policy (`p`), from the authorization URL's query or path, if any.
    public var policy: String? {
        if let policy = additionalAuthorizationParameters["p"] { return policy }
        let components = URLComponents(url: authorizationURL, resolvingAgainstBaseURL: false)
        if let policy = components?.queryItems?.first(where: { $0.name.lowercased() == "p" })?.value {
            return policy
        }
        return authorizationURL.pathComponents.first { $0.lowercased().hasPrefix("b2c_1") }
    }

    /// The OpenID Connect discovery document's address: ``discoveryURL`` if set, else the
    /// authority (the authorization URL without `/oauth2/v2.0/authorize`) followed by
    /// `/v2.0/.well-known/openid-configuration`, keeping B2C's `?p=` query.
    public var resolvedDiscoveryURL: URL {
        if let discoveryURL { return discoveryURL }
        var components = URLComponents(url: authorizationURL, resolvingAgainstBaseURL: false)!
        var path = components.path
        for suffix in ["/oauth2/v2.0/authorize", "/oauth2/authorize"] where path.hasSuffix(suffix) {
            path.removeLast(suffix.count)
            break
        }
        components.path = path + "/v2.0/.well-known/openid-configuration"
        components.queryItems = components.queryItems?.filter { $0.name.lowercased() == "p" }
        if components.queryItems?.isEmpty == true { components.queryItems = nil }
        return components.url!
    }

    /// This configuration with another B2C policy (for the password-reset flow): `p` is
    /// replaced in both endpoints' queries or paths.
    public func withPolicy(_ policy: String) -> AccountConfiguration {
        var copy = self
        copy.authorizationURL = Self.replacingPolicy(in: authorizationURL, with: policy)
        copy.tokenURL = Self.replacingPolicy(in: tokenURL, with: policy)
        if copy.additionalAuthorizationParameters["p"] != nil {
            copy.additionalAuthorizationParameters["p"] = policy
        }
        if let discoveryURL { copy.discoveryURL = Self.replacingPolicy(in: discoveryURL, with: policy) }
        return copy
    }

    /// The configuration an account's tokens were issued under. B2C binds refresh tokens to the
    /// user flow that issued them and writes the flow into the home account id
    /// (`<oid>-b2c_1_passwordreset.<tid>`): an account that signed in through the password-reset
    /// flow is refreshed at that flow's endpoints.
    public func issuing(homeAccountID: String) -> AccountConfiguration {
        guard let reset = passwordResetPolicy, reset.lowercased() != policy?.lowercased() else { return self }
        let uid = homeAccountID.split(separator: ".").first.map { $0.lowercased() } ?? ""
        return uid.hasSuffix("-" + reset.lowercased()) ? withPolicy(reset) : self
    }

    private static func replacingPolicy(in url: URL, with policy: String) -> URL {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        if let items = components.queryItems, items.contains(where: { $0.name.lowercased() == "p" }) {
            components.queryItems = items.map { $0.name.lowercased() == "p" ? URLQueryItem(name: $0.name, value: policy) : $0 }
        } else {
            components.path = components.path.split(separator: "/", omittingEmptySubsequences: false)
                .map { $0.lowercased().hasPrefix("b2c_1") ? Substring(policy) : $0 }
                .joined(separator: "/")
        }
        return components.url!
    }
}

extension AccountConfiguration {
    /// Where a tenant's administrator approves this app registration for everyone, for `scopes`
    /// (Microsoft's v2.0 admin consent endpoint, `…/{tenant}/v2.0/adminconsent?client_id=…&
    /// scope=…&redirect_uri=…`); `organizations` stands for `common`. Nil for an authority that has
    /// none (B2C, other OpenID providers): its authorization endpoint is not Entra's
    /// `/{tenant}/oauth2/v2.0/authorize`.
    public func adminConsentURL(scopes: [String]) -> URL? {
        let parts = authorizationURL.path.split(separator: "/").map(String.init)
        guard parts.count == 4, parts[1...] == ["oauth2", "v2.0", "authorize"], !(authorizationURL.host ?? "").contains("b2clogin"),
            policy == nil
        else { return nil }
        let tenant = ["common", "consumers"].contains(parts[0].lowercased()) ? "organizations" : parts[0]
        let reserved: Set<String> = ["openid", "profile", "email", "offline_access"]
        let asked = scopes.filter { !reserved.contains($0.lowercased()) }
        var components = URLComponents()
        components.scheme = authorizationURL.scheme
        components.host = authorizationURL.host
        components.port = authorizationURL.port
        components.path = "/\(tenant)/v2.0/adminconsent"
        components.queryItems = [
            URLQueryItem(name: "client_id", value: clientID),
            URLQueryItem(name: "scope", value: (asked.isEmpty ? scopes : asked).joined(separator: " ")),
            URLQueryItem(name: "redirect_uri", value: redirectURL.absoluteString),
        ]
        return components.url
    }
}
