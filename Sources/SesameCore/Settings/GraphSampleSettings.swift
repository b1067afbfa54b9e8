import FoundationEssentials

/// The v2.0 NXOAuth2 sample's `settings.plist`: sign in, then search the directory's users.
public struct GraphSampleSettings: Sendable, Hashable {
    /// The account type the sample registers (`myGraphService` in the seed).
    public var accountType: String
    /// `signInWith`: the embedded view (`webview`, the default) or the system browser (`browser`).
    public var signInWith: SignInMethod = .webview
    /// `clientId` (or `clientID`): the application ID.
    public var clientID: String
    /// `redirectUri` (or `redirectURI`): the portal's redirect URI; the seed's default is the
    /// legacy `urn:ietf:wg:oauth:2.0:oob`.
    public var redirectURI: URL
    /// `graphApiUrl` (the seed's `graphApiUrlString`): Graph's base, `https://graph.microsoft.com/`.
    public var graphURL: URL
    /// `apiversion`: Graph's version path segment, `v1.0`.
    public var apiVersion: String
    /// `authority`: `https://login.microsoftonline.com/common` unless the file says otherwise;
    /// the seed hard-codes its endpoints from it.
    public var authority: URL
    /// `scopes`: the seed's `openid offline_access User.Read` unless the file says otherwise.
    public var scopes: [String]
    /// `keychain`: the token storage group.
    public var storageGroup: String
    /// `discoveryURL`: the provider's OpenID configuration, when it is not at the path derived
    /// from the authority (`{authority}/v2.0/.well-known/openid-configuration`): discovery then
    /// names the issuer and the keys, and the endpoints when the file names no `authority`.
    public var discoveryURL: URL?
    /// The endpoints left to discovery: both when the file has `discoveryURL` and no `authority`.
    public var discoveredEndpoints: AccountConfiguration.DiscoveredEndpoints = []

    /// Reads the v2.0 sample's keys; see ``SampleSettings/load(contentsOf:)``.
    init(_ reader: SettingsReader) throws(SettingsError) {
        signInWith = try reader.signInMethod()
        accountType = try reader.optionalString("accountType", "accountIdentifier").flatMap { $0.isEmpty ? nil : $0 } ?? "myGraphService"
        clientID = try reader.requiredString("clientId", "clientID")
        redirectURI = try reader.requiredURL("redirectUri", "redirectURI")
        graphURL = try reader.optionalURL("graphApiUrl", "graphApiUrlString", "graphURL") ?? URL(string: "https://graph.microsoft.com/")!
        apiVersion = try reader.optionalString("apiversion", "apiVersion").flatMap { $0.isEmpty ? nil : $0 } ?? "v1.0"
        discoveryURL = try reader.discoveryURL()
        let authority = try reader.optionalURL("authority")
        self.authority = authority ?? URL(string: "https://login.microsoftonline.com/common")!
        if authority == nil, discoveryURL != nil { discoveredEndpoints = [.authorization, .token] }
        scopes = try reader.optionalStringList("scopes", "scope") ?? ["openid", "offline_access", "User.Read"]
        storageGroup =
            try reader.optionalString("keychain").flatMap { $0.isEmpty ? nil : $0 }
            ?? "com.microsoft.azureactivedirectory.samples.graph.QuickStart"
    }

    /// Graph's versioned base URL, `{graphApiUrl}{apiversion}/`, as the seed concatenates it.
    public var graphBaseURL: URL {
        graphURL.appending(path: apiVersion, directoryHint: .isDirectory)
    }

    /// The store configuration: the seed's `setClientID:secret:authorizationURL:tokenURL:redirectURL:forAccountType:`.
    /// `profile` is added when `openid` is asked for, as MSAL does: without it the v2.0 id_token
    /// carries no `name`, `preferred_username` or `oid`, and the account would have no name.
    public var accountConfiguration: AccountConfiguration {
        var scopes = scopes
        if scopes.contains("openid"), !scopes.contains("profile") {
            scopes.insert("profile", at: scopes.firstIndex(of: "openid")! + 1)
        }
        return AccountConfiguration.fromAuthority(
            authority, discoveryURL: discoveryURL, discoveredEndpoints: discoveredEndpoints, clientID: clientID, scopes: scopes,
            redirectURL: redirectURI, storageGroup: storageGroup)
    }
}

extension AccountConfiguration {
    /// The v2.0 and MSAL samples' configuration: the endpoints under `authority`, as the seeds
    /// hard-code them, or the discovery URL standing in for those left to discovery.
    static func fromAuthority(
        _ authority: URL, discoveryURL: URL?, discoveredEndpoints: DiscoveredEndpoints, clientID: String, scopes: [String],
        redirectURL: URL, storageGroup: String
    ) -> AccountConfiguration {
        let discovered = discoveryURL == nil ? [] : discoveredEndpoints
        var configuration = AccountConfiguration(
            clientID: clientID,
            scopes: scopes,
            authorizationURL: discovered.contains(.authorization) ? discoveryURL! : authority.appending(path: "oauth2/v2.0/authorize"),
            tokenURL: discovered.contains(.token) ? discoveryURL! : authority.appending(path: "oauth2/v2.0/token"),
            redirectURL: redirectURL,
            // The credential form's address is known only under a named authority.
            loginURL: discovered.isEmpty ? authority.appending(path: "login") : nil,
            storageGroup: storageGroup,
            discoveryURL: discoveryURL
        )
        configuration.discoveredEndpoints = discovered
        return configuration
    }
}
