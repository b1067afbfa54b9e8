import FoundationEssentials

/// Any OpenID Connect provider, in the seeds' generic keys (the B2C sample's `accountIdentifier`,
/// `clientID`, `clientSecret`, `authURL`, `tokenURL`, `scopes`, `keychain`) plus `discoveryURL`:
/// discovery supplies what the file leaves out (the endpoints, how the client authenticates, the
/// userinfo endpoint), and the id_token is checked against the issuer and keys it names.
public struct OpenIDSampleSettings: Sendable, Hashable {
    /// `accountIdentifier` (or `accountType`): the store's name for this provider; `openid`
    /// unless the file says otherwise.
    public var accountType: String
    /// `signInWith`: the embedded view (`webview`, the default) or the system browser (`browser`).
    public var signInWith: SignInMethod = .webview
    /// `clientID`: as registered with the provider.
    public var clientID: String
    /// `clientSecret`: for a confidential client; absent or empty for a public one (PKCE).
    public var clientSecret: Secret?
    /// `discoveryURL`: the provider's `…/.well-known/openid-configuration`.
    public var discoveryURL: URL
    /// `authURL`: the authorization endpoint, when the file names it (else discovery's).
    public var authorizationURL: URL?
    /// `tokenURL`: the token endpoint, when the file names it (else discovery's).
    public var tokenURL: URL?
    /// `redirectUri` (or the B2C seed's `bhh`): the embedded view's redirect, intercepted and
    /// never loaded; `http://localhost/sesame-redirect` unless the file says otherwise. The
    /// system browser uses a loopback port of its own.
    public var redirectURI: URL
    /// `scopes`: `openid profile email offline_access` unless the file says otherwise.
    public var scopes: [String]
    /// `keychain`: the token storage group.
    public var storageGroup: String

    /// Reads the generic keys; see ``SampleSettings/load(contentsOf:)``.
    init(_ reader: SettingsReader) throws(SettingsError) {
        signInWith = try reader.signInMethod()
        accountType = try reader.optionalString("accountIdentifier", "accountType").flatMap { $0.isEmpty ? nil : $0 } ?? "openid"
        clientID = try reader.requiredString("clientID", "clientId")
        clientSecret = try reader.optionalString("clientSecret").flatMap { $0.isEmpty ? nil : Secret($0) }
        guard let discoveryURL = try reader.discoveryURL() else {
            throw SettingsError(file: reader.file, key: "discoveryURL", problem: .missingKey)
        }
        self.discoveryURL = discoveryURL
        authorizationURL = try reader.optionalURL("authURL")
        tokenURL = try reader.optionalURL("tokenURL")
        redirectURI = try reader.optionalURL("redirectUri", "redirectURI", "bhh") ?? URL(string: "http://localhost/sesame-redirect")!
        scopes = try reader.optionalStringList("scopes", "scope") ?? ["openid", "profile", "email", "offline_access"]
        storageGroup = try reader.optionalString("keychain").flatMap { $0.isEmpty ? nil : $0 } ?? "sesame.openid.\(accountType)"
        guard scopes.contains("openid") else {
            throw SettingsError(file: reader.file, key: "scopes", problem: .malformedValue(expected: "a list that includes openid"))
        }
    }

    /// The store configuration: the endpoints the file leaves out come from discovery.
    public var accountConfiguration: AccountConfiguration {
        var configuration = AccountConfiguration(
            clientID: clientID,
            clientSecret: clientSecret,
            scopes: scopes,
            authorizationURL: authorizationURL ?? discoveryURL,
            tokenURL: tokenURL ?? discoveryURL,
            redirectURL: redirectURI,
            storageGroup: storageGroup,
            discoveryURL: discoveryURL
        )
        if authorizationURL == nil { configuration.discoveredEndpoints.insert(.authorization) }
        if tokenURL == nil { configuration.discoveredEndpoints.insert(.token) }
        return configuration
    }
}
