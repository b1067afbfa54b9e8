import Foundation

/// One of the seeds' three `settings.plist` shapes, recognised by its keys.
public enum SampleSettings: Sendable, Hashable {
    /// The v2.0 NXOAuth2 + Graph user search sample.
    case graph(GraphSampleSettings)
    /// The Azure AD B2C + task API sample.
    case b2c(B2CSampleSettings)
    /// The MSAL + Graph `/me` sample.
    case msal(MSALSampleSettings)
    /// Any OpenID Connect provider, found through `discoveryURL`.
    case openID(OpenIDSampleSettings)

    /// Reads a settings file and tells which shape it has: `discoveryURL` (without `taskAPI` or
    /// `graphURI`) is any OpenID provider's, `authority` + `graphURI` is MSAL's,
    /// `accountIdentifier`/`authURL`/`taskAPI` is B2C's, `clientId` + `redirectUri` is v2.0's.
    /// - Throws: ``SettingsError`` naming the file and the key to fix.
    public static func load(contentsOf url: URL) throws(SettingsError) -> SampleSettings {
        try parse(SettingsReader(contentsOf: url))
    }

    /// Parses settings from property-list bytes; `file` names them in errors.
    public static func parse(_ data: Data, file: String) throws(SettingsError) -> SampleSettings {
        try parse(SettingsReader(data: data, file: file))
    }

    private static func parse(_ reader: SettingsReader) throws(SettingsError) -> SampleSettings {
        if reader.has("discoveryURL"), !reader.has("taskAPI", "graphURI") {
            return .openID(try OpenIDSampleSettings(reader))
        }
        if reader.has("authURL", "taskAPI", "bhh") {
            return .b2c(try B2CSampleSettings(reader))
        }
        if reader.has("graphURI") || (reader.has("authority") && !reader.has("redirectUri", "redirectURI")) {
            return .msal(try MSALSampleSettings(reader))
        }
        if reader.has("clientId", "clientID", "redirectUri", "redirectURI") {
            return .graph(try GraphSampleSettings(reader))
        }
        throw SettingsError(file: reader.file, key: nil, problem: .unknownShape)
    }

    /// The account type the sample registers with the store.
    public var accountType: String {
        switch self {
        case .graph(let settings): settings.accountType
        case .b2c(let settings): settings.accountType
        case .msal(let settings): settings.accountType
        case .openID(let settings): settings.accountType
        }
    }

    /// Which user agent the account type's interactive sign-in uses (`signInWith`).
    public var signInWith: SignInMethod {
        get {
            switch self {
            case .graph(let settings): settings.signInWith
            case .b2c(let settings): settings.signInWith
            case .msal(let settings): settings.signInWith
            case .openID(let settings): settings.signInWith
            }
        }
        set {
            switch self {
            case .graph(var settings):
                settings.signInWith = newValue
                self = .graph(settings)
            case .b2c(var settings):
                settings.signInWith = newValue
                self = .b2c(settings)
            case .msal(var settings):
                settings.signInWith = newValue
                self = .msal(settings)
            case .openID(var settings):
                settings.signInWith = newValue
                self = .openID(settings)
            }
        }
    }

    /// The store configuration for the sample's account type.
    public var accountConfiguration: AccountConfiguration {
        switch self {
        case .graph(let settings): settings.accountConfiguration
        case .b2c(let settings): settings.accountConfiguration
        case .msal(let settings): settings.accountConfiguration
        case .openID(let settings): settings.accountConfiguration
        }
    }
}
