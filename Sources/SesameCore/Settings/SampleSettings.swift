import FoundationEssentials

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

    /// Reads a settings file and tells which shape it has: `discoveryURL` without any other
    /// shape's own keys (`taskAPI`, `graphURI`, `graphApiUrl`, `apiversion`, `authority`) is any
    /// OpenID provider's, `authority` + `graphURI` is MSAL's, `accountIdentifier`/`authURL`/`taskAPI`
    /// is B2C's, `clientId` + `redirectUri` is v2.0's. Keys the shape does not read are dropped
    /// here; ``SettingsFile/load(contentsOf:)`` returns them as warnings.
    /// - Throws: ``SettingsError`` naming the file and the key to fix.
    public static func load(contentsOf url: URL) throws(SettingsError) -> SampleSettings {
        try SettingsFile.load(contentsOf: url).settings
    }

    /// Parses settings from property-list bytes; `file` names them in errors.
    public static func parse(_ data: Data, file: String) throws(SettingsError) -> SampleSettings {
        try SettingsFile.parse(data, file: file).settings
    }

    /// The keys that name one of the Microsoft shapes: with any of them, `discoveryURL` is that
    /// shape's provider, not a sign of the OpenID shape.
    private static let microsoftShapeKeys = [
        "taskAPI", "graphURI", "graphApiUrl", "graphApiUrlString", "graphURL", "apiversion", "apiVersion", "authority",
    ]

    static func parse(_ reader: SettingsReader) throws(SettingsError) -> SampleSettings {
        if reader.has("discoveryURL"), !microsoftShapeKeys.contains(where: { reader.has($0) }) {
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

    /// Which of the shapes a settings file has, as a user knows the samples.
    public enum Shape: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// The v2.0 NXOAuth2 sample's: sign in, search the directory.
        case directory
        /// The Azure AD B2C sample's: sign in through a user flow, the task list.
        case tasks
        /// The MSAL sample's: sign in, Graph's `/me`.
        case me
        /// Any OpenID Connect provider's.
        case openID

        /// The shape's name: `Tasks (B2C)`.
        public var description: String {
            switch self {
            case .directory: "Directory (v2.0)"
            case .tasks: "Tasks (B2C)"
            case .me: "Me (MSAL)"
            case .openID: "OpenID Connect"
            }
        }

        /// The shape as a sentence names a file of it: `a Tasks (B2C) settings file`.
        public var settingsFileName: String {
            (self == .openID ? "an " : "a ") + description + " settings file"
        }
    }

    /// The shape these settings were read from.
    public var shape: Shape {
        switch self {
        case .graph: .directory
        case .b2c: .tasks
        case .msal: .me
        case .openID: .openID
        }
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
