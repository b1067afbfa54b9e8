import FoundationEssentials

/// The MSAL sample's settings (the seed keeps them as constants: `kClientID`, `kAuthority`,
/// `kScopes`, `kGraphURI`), read from a `settings.plist` with the same names minus the `k`.
public struct MSALSampleSettings: Sendable, Hashable {
    /// `accountType`: the store's name for this sample; `msalGraph` unless the file says otherwise.
    public var accountType: String
    /// `signInWith`: the embedded view (`webview`, the default) or the system browser (`browser`).
    public var signInWith: SignInMethod = .webview
    /// `clientId` (or `clientID`).
    public var clientID: String
    /// `authority`: `https://login.microsoftonline.com/common` in the seed; required unless the
    /// file has `discoveryURL` (then `/common` stands in, unused: the endpoints are discovered).
    public var authority: URL
    /// `scopes`: `https://graph.microsoft.com/user.read` in the seed. MSAL adds `openid`,
    /// `profile` and `offline_access` itself; so does Sesame.
    public var scopes: [String]
    /// `graphURI`: the resource the "Call Microsoft Graph" button reads, `…/v1.0/me/`.
    public var graphURI: URL
    /// `redirectUri`: the embedded view's redirect, `https://login.microsoftonline.com/common/oauth2/nativeclient`
    /// unless the file says otherwise.
    public var redirectURI: URL
    /// `keychain`: the token storage group (MSAL's default keychain group name).
    public var storageGroup: String
    /// `discoveryURL`: the provider's OpenID configuration, when it is not at the path derived
    /// from the authority: discovery then names the issuer and the keys, and the endpoints when
    /// the file names no `authority` (which it may leave out only then).
    public var discoveryURL: URL?
    /// The endpoints left to discovery: both when the file has `discoveryURL` and no `authority`.
    public var discoveredEndpoints: AccountConfiguration.DiscoveredEndpoints = []

    /// Reads the MSAL sample's keys; see ``SampleSettings/load(contentsOf:)``.
    init(_ reader: SettingsReader) throws(SettingsError) {
        signInWith = try reader.signInMethod()
        accountType = try reader.optionalString("accountType", "accountIdentifier").flatMap { $0.isEmpty ? nil : $0 } ?? "msalGraph"
        clientID = try reader.requiredString("clientId", "clientID")
        discoveryURL = try reader.discoveryURL()
        if discoveryURL == nil {
            authority = try reader.requiredURL("authority")
        } else if let authority = try reader.optionalURL("authority") {
            self.authority = authority
        } else {
            authority = URL(string: "https://login.microsoftonline.com/common")!
            discoveredEndpoints = [.authorization, .token]
        }
        scopes = try reader.optionalStringList("scopes", "scope") ?? ["https://graph.microsoft.com/user.read"]
        graphURI = try reader.requiredURL("graphURI", "graphURL")
        redirectURI =
            try reader.optionalURL("redirectUri", "redirectURI")
            ?? URL(string: "https://login.microsoftonline.com/common/oauth2/nativeclient")!
        storageGroup = try reader.optionalString("keychain").flatMap { $0.isEmpty ? nil : $0 } ?? "com.microsoft.adalcache"
    }

    /// The store configuration, with MSAL's reserved scopes added in front of the app's.
    public var accountConfiguration: AccountConfiguration {
        let reserved = ["openid", "profile", "offline_access"]
        return AccountConfiguration.fromAuthority(
            authority, discoveryURL: discoveryURL, discoveredEndpoints: discoveredEndpoints, clientID: clientID,
            scopes: reserved + scopes.filter { !reserved.contains($0) }, redirectURL: redirectURI, storageGroup: storageGroup)
    }
}
