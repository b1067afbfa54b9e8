import FoundationEssentials

/// The Azure AD B2C sample's `settings.plist`: sign up or in through a policy, then the task list.
public struct B2CSampleSettings: Sendable, Hashable {
    /// `accountIdentifier`: the account type (`B2C_Acccount` in the seed, spelling and all).
    public var accountType: String
    /// `signInWith`: the embedded view (`webview`, the default) or the system browser (`browser`).
    public var signInWith: SignInMethod = .webview
    /// `clientID` (or `clientId`).
    public var clientID: String
    /// `clientSecret`: empty in the seed, which means a public client.
    public var clientSecret: Secret?
    /// `authURL`: the policy's authorization endpoint, `…/oauth2/v2.0/authorize?p=<policy>`. A
    /// file with `discoveryURL` may leave it to discovery: then it holds the discovery URL and
    /// ``discoveredEndpoints`` says so.
    public var authorizationURL: URL
    /// `loginURL`: the page's credential form target, `…/<tenant>/login`.
    public var loginURL: URL
    /// `bhh`: the redirect URI (the seed's `urn:ietf:wg:oauth:2.0:oob`).
    public var redirectURI: URL
    /// `tokenURL`: `…/oauth2/v2.0/token?p=<policy>`; left to discovery as ``authorizationURL`` may be.
    public var tokenURL: URL
    /// `keychain`: the token storage group.
    public var storageGroup: String
    /// `contentType`: the token request's `Content-Type`.
    public var contentType: String
    /// `taskAPI`: the task service's base URL.
    public var taskAPI: URL
    /// `scopes`: `openid offline_access <clientID>` unless the file says otherwise.
    public var scopes: [String]
    /// `passwordResetPolicy`: the policy started when the user picks "Forgot your password?"
    /// (AADB2C90118); `B2C_1_PasswordReset` unless the file says otherwise.
    public var passwordResetPolicy: String
    /// `discoveryURL`: the provider's OpenID configuration, when it is not at the path derived
    /// from `authURL` (`…/v2.0/.well-known/openid-configuration?p=<policy>`): a provider that is
    /// not Microsoft's, say. Discovery then names the issuer and the keys the id_token is checked
    /// against, and the endpoints the file leaves out.
    public var discoveryURL: URL?
    /// The endpoints the file leaves to discovery (only with ``discoveryURL``).
    public var discoveredEndpoints: AccountConfiguration.DiscoveredEndpoints = []

    /// Reads the B2C sample's keys; see ``SampleSettings/load(contentsOf:)``.
    init(_ reader: SettingsReader) throws(SettingsError) {
        signInWith = try reader.signInMethod()
        accountType = try reader.requiredString("accountIdentifier", "accountType")
        clientID = try reader.requiredString("clientID", "clientId")
        clientSecret = try reader.optionalString("clientSecret").flatMap { $0.isEmpty ? nil : Secret($0) }
        discoveryURL = try reader.discoveryURL()
        if let discoveryURL {
            let (authorization, token) = (try reader.optionalURL("authURL"), try reader.optionalURL("tokenURL"))
            authorizationURL = authorization ?? discoveryURL
            tokenURL = token ?? discoveryURL
            if authorization == nil { discoveredEndpoints.insert(.authorization) }
            if token == nil { discoveredEndpoints.insert(.token) }
        } else {
            authorizationURL = try reader.requiredURL("authURL")
            tokenURL = try reader.requiredURL("tokenURL")
        }
        loginURL = try reader.requiredURL("loginURL")
        redirectURI = try reader.requiredURL("bhh", "redirectUri")
        storageGroup = try reader.requiredString("keychain")
        contentType = try reader.optionalString("contentType").flatMap { $0.isEmpty ? nil : $0 } ?? "application/x-www-form-urlencoded"
        taskAPI = try reader.requiredURL("taskAPI")
        scopes = try reader.optionalStringList("scopes", "scope") ?? ["openid", "offline_access", clientID]
        passwordResetPolicy = try reader.optionalString("passwordResetPolicy").flatMap { $0.isEmpty ? nil : $0 } ?? "B2C_1_PasswordReset"
    }

    /// The store configuration, as the seed's `setConfiguration:forAccountType:` dictionary.
    public var accountConfiguration: AccountConfiguration {
        var configuration = AccountConfiguration(
            clientID: clientID,
            clientSecret: clientSecret,
            scopes: scopes,
            authorizationURL: authorizationURL,
            tokenURL: tokenURL,
            redirectURL: redirectURI,
            loginURL: loginURL,
            storageGroup: storageGroup,
            customHeaderFields: ["Content-Type": contentType],
            discoveryURL: discoveryURL,
            passwordResetPolicy: passwordResetPolicy
        )
        if discoveryURL != nil { configuration.discoveredEndpoints = discoveredEndpoints }
        return configuration
    }
}
