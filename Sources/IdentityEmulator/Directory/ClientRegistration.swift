import FoundationEssentials

/// A registered public client (an app registration): its id, its name on the consent page and
/// its redirect URIs.
public struct ClientRegistration: Sendable, Hashable {
    /// `client_id`: the Application (client) ID.
    public let clientID: String
    /// The name the consent page shows.
    public let name: String
    /// Registered redirect URIs, matched as Entra matches them.
    public let redirectURIs: [String]
    /// The tenants the app is registered in.
    public let tenantKinds: Set<Tenant.Kind>
    /// The sign-in audience: `false` (Entra's default for new registrations since October 2018)
    /// is "accounts in this organizational directory only", which `/common` and `/organizations`
    /// refuse with AADSTS50194; `true` is "accounts in any organizational directory".
    public var multiTenant: Bool

    public init(
        clientID: String, name: String, redirectURIs: [String], tenantKinds: Set<Tenant.Kind> = [.workforce, .b2c],
        multiTenant: Bool = false
    ) {
        self.clientID = clientID.lowercased()
        self.name = name
        self.redirectURIs = redirectURIs
        self.tenantKinds = tenantKinds
        self.multiTenant = multiTenant
    }

    /// Sesame's bundled samples (Resources/settings): Directory, Me and Tasks. Each also registers
    /// the loopback addresses (any port) its sign-in in the system browser redirects to.
    public static let sesameDefaults: [ClientRegistration] = [
        ClientRegistration(
            clientID: "6731de76-14a6-49ae-97bc-6eba6914391e", name: "Sesame Directory",
            redirectURIs: [
                "https://login.microsoftonline.com/common/oauth2/nativeclient", "urn:ietf:wg:oauth:2.0:oob", "http://localhost",
                "http://127.0.0.1",
            ],
            tenantKinds: [.workforce]),
        ClientRegistration(
            clientID: "66855f8a-60cd-445e-a9bb-8cd8eadbd3fa", name: "Sesame Me",
            redirectURIs: ["https://login.microsoftonline.com/common/oauth2/nativeclient", "http://localhost", "http://127.0.0.1"],
            tenantKinds: [.workforce]),
        ClientRegistration(
            clientID: "90c0fe63-bcf2-44d5-8fb7-b8bbc0b29dc6", name: "Sesame Tasks",
            redirectURIs: [
                "https://fabrikamb2c.b2clogin.com/oauth2/nativeclient", "urn:ietf:wg:oauth:2.0:oob", "http://localhost", "http://127.0.0.1",
            ],
            tenantKinds: [.b2c]),
    ]

    /// Microsoft's own public clients the device registration and the broker protocol involve,
    /// registered in every tenant as Entra has them: the Microsoft Authentication Broker (which
    /// signs in for device registration on Android, macOS and Linux), Windows' Device
    /// Registration Client, Windows Sign In (the PRT's own client on Windows), Azure CLI,
    /// Microsoft Edge, and My Signins (Security info). The first three are preauthorized for the
    /// device registration service.
    public static let microsoftClients: [ClientRegistration] = [
        ClientRegistration(
            clientID: brokerClientID, name: "Microsoft Authentication Broker",
            redirectURIs: [
                "https://login.microsoftonline.com/common/oauth2/nativeclient", "ms-appx-web://Microsoft.AAD.BrokerPlugin/DRSFF",
                "urn:ietf:wg:oauth:2.0:oob",
            ],
            tenantKinds: [.workforce], multiTenant: true),
        ClientRegistration(
            clientID: "dd762716-544d-4aeb-a526-687b73838a22", name: "Device Registration Client",
            redirectURIs: ["ms-app://windows.immersivecontrolpanel/", "https://login.microsoftonline.com/common/oauth2/nativeclient"],
            tenantKinds: [.workforce], multiTenant: true),
        ClientRegistration(
            clientID: "38aa3b87-a06d-4817-b275-7a316988d93b", name: "Windows Sign In",
            redirectURIs: ["https://login.microsoftonline.com/common/oauth2/nativeclient"], tenantKinds: [.workforce],
            multiTenant: true),
        ClientRegistration(
            clientID: "04b07795-8ddb-461a-bbee-02f9e1bf7b46", name: "Microsoft Azure CLI",
            redirectURIs: [
                "http://localhost", "https://login.microsoftonline.com/common/oauth2/nativeclient",
                "ms-appx-web://Microsoft.AAD.BrokerPlugin/04b07795-8ddb-461a-bbee-02f9e1bf7b46",
            ],
            tenantKinds: [.workforce], multiTenant: true),
        ClientRegistration(
            clientID: edgeClientID, name: "Microsoft Edge",
            redirectURIs: [
                "https://login.microsoftonline.com/common/oauth2/nativeclient",
                "ms-appx-web://Microsoft.AAD.BrokerPlugin/ecd6b820-32c2-49b6-98a6-444530e5a77a",
            ],
            tenantKinds: [.workforce], multiTenant: true),
        // "My Signins" (mysignins.microsoft.com): Security info, where users add and remove their
        // methods; the emulator serves it at its own `/security-info`.
        ClientRegistration(
            clientID: mySignInsClientID, name: "My Signins", redirectURIs: ["https://mysignins.microsoft.com/security-info"],
            tenantKinds: [.workforce], multiTenant: true),
    ]

    /// "My Signins"' client id (Microsoft's first-party app behind Security info).
    public static let mySignInsClientID = "19db86c3-b2b9-44cc-b339-36da233a3be2"

    /// The Microsoft Authentication Broker's client id.
    public static let brokerClientID = "29d9ed98-a469-4536-ade2-f981bc1d605e"
    /// Microsoft Edge's client id (linux-entra-sso asks for its cookies with it).
    public static let edgeClientID = "ecd6b820-32c2-49b6-98a6-444530e5a77a"

    /// Whether `clientID` is one of Microsoft's clients that Entra preauthorizes for the device
    /// registration service (and, for a PRT, its `client_id`): the broker, the Device Registration
    /// Client, Windows Sign In and Azure CLI. No other app can get a token for it.
    static func mayRegisterDevices(_ clientID: String) -> Bool {
        [
            brokerClientID, "dd762716-544d-4aeb-a526-687b73838a22", "38aa3b87-a06d-4817-b275-7a316988d93b",
            "04b07795-8ddb-461a-bbee-02f9e1bf7b46",
        ].contains(clientID.lowercased())
    }

    /// Whether users need not consent to `clientID`: Microsoft's own clients are preauthorized.
    var isMicrosoftClient: Bool { Self.microsoftClients.contains { $0.clientID == clientID } }

    /// The task API's own B2C app registration (the B2C sample's web API is registered apart from
    /// the desktop app): its access tokens' `aud`. Its App ID URI is
    /// `https://fabrikamb2c.onmicrosoft.com/tasks`, with the scopes `read` and `write`.
    public static let taskAPIAppID = "3b7a5c1e-9d2f-4e8a-b6c4-2f1e0d9c8b7a"

    /// Parses the command line's `ID=URI[,URI…]`.
    public static func parse(commandLine text: String) throws -> ClientRegistration {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[0].isEmpty else {
            throw EmulatorConfigurationError("--client needs ID=REDIRECT_URI[,REDIRECT_URI…], got '\(text)'.")
        }
        let uris = parts[1].split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
        guard !uris.isEmpty else { throw EmulatorConfigurationError("--client \(parts[0]) has no redirect URI after '='.") }
        for uri in uris where URL(string: uri)?.scheme == nil {
            throw EmulatorConfigurationError("--client \(parts[0]): '\(uri)' is not an absolute URI (e.g. http://localhost).")
        }
        return ClientRegistration(clientID: parts[0], name: "App \(parts[0].prefix(8))", redirectURIs: uris)
    }

    /// Where the service sends the browser for a `redirect_uri` sent on /authorize, or nil when
    /// it is not registered. Entra's rules: an exact match; for `http://localhost` and
    /// `http://127.0.0.1` any port; a URI registered without a path comes back with a trailing
    /// `/`. The emulator also stands in for Microsoft's hosts, so a registered
    /// `https://login.microsoftonline.com/…` (or `https://mysignins.microsoft.com/…`) URI matches
    /// the same path on the emulator's base.
    func replyURI(for sent: String, emulatorBase: URL) -> String? {
        for registered in redirectURIs {
            if Self.matches(registered: registered, sent: sent, emulatorBase: emulatorBase) {
                return Self.withTrailingSlash(sent)
            }
        }
        return nil
    }

    private static let standInHosts = ["login.microsoftonline.com", "fabrikamb2c.b2clogin.com", "mysignins.microsoft.com"]

    private static func matches(registered: String, sent: String, emulatorBase: URL) -> Bool {
        if registered == sent { return true }
        guard let r = URLComponents(string: registered), let s = URLComponents(string: sent) else { return false }
        let loopback = ["localhost", "127.0.0.1"]
        if r.scheme == "http", s.scheme == "http", let host = r.host, loopback.contains(host), s.host == host,
            r.port == nil, normalizedPath(r.path) == normalizedPath(s.path), r.query == s.query
        {
            return true
        }
        if let host = r.host, standInHosts.contains(host), s.scheme == emulatorBase.scheme, s.host == emulatorBase.host,
            s.port == emulatorBase.port, r.path == s.path, r.query == s.query
        {
            return true
        }
        return false
    }

    private static func normalizedPath(_ path: String) -> String { path.isEmpty ? "/" : path }

    private static func withTrailingSlash(_ uri: String) -> String {
        guard var components = URLComponents(string: uri), components.host != nil, components.path.isEmpty else { return uri }
        components.path = "/"
        return components.string ?? uri
    }
}

/// A command-line or configuration mistake, said in a way that tells what to change.
public struct EmulatorConfigurationError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
