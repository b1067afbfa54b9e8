import Foundation

/// The MSAL sample's settings (the seed keeps them as constants: `kClientID`, `kAuthority`,
/// `kScopes`, `kGraphURI`), read from a `settings.plist` with the same names minus the `k`.
public struct MSALSampleSettings: Sendable, Hashable {
    /// `accountType`: the store's name for this sample; `msalGraph` unless the file says otherwise.
    public var accountType: String
    /// `signInWith`: the embedded view (`webview`, the default) or the system browser (`browser`).
    public var signInWith: SignInMethod = .webview
    /// `clientId` (or `clientID`).
    public var clientID: String
    /// `authority`: `https://login.microsoftonline.com/common` in the seed.
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

    /// Reads the MSAL sample's keys; see ``SampleSettings/load(contentsOf:)``.
    init(_ reader: SettingsReader) throws(SettingsError) {
        signInWith = try reader.signInMethod()
        accountType = try reader.optionalString("accountType").flatMap { $0.isEmpty ? nil : $0 } ?? "msalGraph"
        clientID = try reader.requiredString("clientId", "clientID")
        authority = try reader.requiredURL("authority")
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
        return AccountConfiguration(
            clientID: clientID,
            scopes: reserved + scopes.filter { !reserved.contains($0) },
            authorizationURL: authority.appending(path: "oauth2/v2.0/authorize"),
            tokenURL: authority.appending(path: "oauth2/v2.0/token"),
            redirectURL: redirectURI,
            loginURL: authority.appending(path: "login"),
            storageGroup: storageGroup
        )
    }
}
