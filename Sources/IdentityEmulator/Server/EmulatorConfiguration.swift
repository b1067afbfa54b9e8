import FoundationEssentials

/// How an emulator starts: the command line's options, as a value.
public struct EmulatorConfiguration: Sendable {
    /// `--host`: the address to listen on.
    public var host: String = "127.0.0.1"
    /// `--hostname`: the name the emulator is reached by — in its base URL, every URL it prints
    /// or puts in a page, discovery, tokens' issuers and its TLS certificate — when that is not
    /// the listen address (behind a proxy, or at a name only the proxy resolves). `nil`: the
    /// listen address (`127.0.0.1` for `0.0.0.0`).
    public var hostname: String?
    /// `--federation-hostname`: the name the federated organisation's identity provider (Fabrikam's
    /// AD FS, paths under `/adfs/`) is reached by. The same listener serves it, but only under this
    /// name, as another server would be: a browser that signs a federated user in really crosses
    /// hosts. `nil`: ``defaultFederationHostname(forEmulatorHost:)``.
    public var federationHostname: String?
    /// `--device-registration-hostname`: the name the device registration service is reached by
    /// (`enterpriseregistration.windows.net`, which clients hard-code); the TLS certificate
    /// covers it. nil: the emulator's own host name.
    public var deviceRegistrationHostname: String?
    /// `--port`: 0 picks any free port.
    public var port: Int = 0
    /// `--tls`: serve HTTPS with a local CA kept in the state directory.
    public var tls: Bool = false
    /// `--state-dir`: where refresh tokens, sessions, consents, sign-ups, tasks, the signing key and
    /// the TLS material are kept. Without it everything but TLS material lives in memory.
    public var stateDirectory: URL?
    /// `--users`: how many Contoso users (at least the fixed demo users).
    public var userCount: Int = 300
    /// `--seed`: the same seed builds the same directory.
    public var seed: String = "sesame"
    /// `--client`: public clients registered besides Sesame's bundled ones.
    public var extraClients: [ClientRegistration] = []
    /// `--multi-tenant ID`: clients whose sign-in audience is any organization (the others are
    /// single-tenant, as Entra registers new apps, and `/common` refuses them).
    public var multiTenantClients: Set<String> = []
    /// `--user-consent`: whether users may consent to apps themselves (Entra's tenant setting).
    public var userConsent: UserConsentPolicy = .allowed
    /// `--policy`: each tenant's refusals (Conditional Access, consent, account states); changed
    /// while running with `POST /.emulator/policy`.
    public var policies = TenantPolicies()
    /// `--key-rollover`: seconds after which the signing key rolls over by itself (nil: only on
    /// command). The key it replaced stays published.
    public var keyRolloverInterval: TimeInterval?
    /// `--lenient`: the friendlier emulator of old, for demos only: every app multi-tenant, the
    /// task API one registration with the desktop app, Graph answering every property whatever the
    /// permission, user consent always allowed. Tests run strict.
    public var lenient = false
    /// `--authenticator-timeout`: seconds a Microsoft Authenticator notification waits for the
    /// phone before the sign-in page says "We didn't hear from you" (Entra: about 55).
    public var authenticatorTimeout: TimeInterval = 55
    /// `--demo`: show one-time codes on the pages too (they are always printed on stdout).
    public var demoMode: Bool = false
    /// `--access-token-lifetime`: seconds an access token lives (`expires_in`). nil: 60–90 minutes
    /// at random for Entra, one hour for B2C, as the services do. Entra's token lifetime policies
    /// allow 10 minutes to a day; the emulator takes any positive value, so that a test can make
    /// a client refresh on every call.
    public var accessTokenLifetime: Int?
    /// `--device-code-lifetime`: seconds a device code lives (`expires_in`; Entra's 900).
    public var deviceCodeLifetime: Int = 900
    /// `--device-code-interval`: seconds a device waits between polls (`interval`; Entra's 5).
    public var deviceCodeInterval: Int = 5
    /// The time source; tests move it forward.
    public var clock: EmulatorClock = EmulatorClock()
    /// `--clock-offset`: seconds the service's clock runs ahead of this computer's (negative:
    /// behind), as a real service's or this computer's may be off: each emulator made with this
    /// configuration moves ``clock`` that far when it starts, and every answer's `Date` header
    /// then tells the clock's time (`sesame doctor` compares its own clock with it).
    public var clockOffset: TimeInterval = 0
    /// What a refresh token redeemed twice does: nothing (Entra keeps the old one valid), or
    /// revoke its whole family (`--refresh-token-reuse revoke-family`, as strict servers do).
    public var refreshTokenReuse: RefreshTokenReuse = .allowed
    /// Faults to inject from the start (`--faults`); ``FaultPlan`` describes them.
    public var faults = FaultPlan()
    /// Receives the lines the emulator prints for people and tools (`mfa-code <user> <code>`).
    public var announce: @Sendable (String) -> Void = { print($0) }

    public init() {}

    /// Every registered client: Sesame's, Microsoft's own, then `--client` ones (which win on
    /// the same id).
    var clients: [ClientRegistration] {
        let extraIDs = Set(extraClients.map(\.clientID))
        let multiTenant = Set(multiTenantClients.map { $0.lowercased() })
        let defaults = ClientRegistration.sesameDefaults + ClientRegistration.microsoftClients
        return (defaults.filter { !extraIDs.contains($0.clientID) } + extraClients).map { client in
            var client = client
            if lenient || multiTenant.contains(client.clientID) { client.multiTenant = true }
            return client
        }
    }

    /// The federation host name of an emulator reached as `emulatorHost`: `--federation-hostname`,
    /// or the default.
    public func federationHost(forEmulatorHost emulatorHost: String) -> String {
        federationHostname ?? Self.defaultFederationHostname(forEmulatorHost: emulatorHost)
    }

    /// `localhost` for an emulator reached as `127.0.0.1` and `127.0.0.1` for one reached as
    /// `localhost` (both resolve without DNS), otherwise `sts.<its host name>` (AD FS's usual name).
    public static func defaultFederationHostname(forEmulatorHost emulatorHost: String) -> String {
        switch emulatorHost.lowercased() {
        case "127.0.0.1": "localhost"
        case "localhost": "127.0.0.1"
        default: "sts.\(emulatorHost.lowercased())"
        }
    }

    /// Where TLS material lives: the state directory, or `$XDG_STATE_HOME/identity-emulator`.
    var tlsDirectory: URL {
        if let stateDirectory { return stateDirectory }
        let environment = ProcessInfo.processInfo.environment
        let stateHome =
            environment["XDG_STATE_HOME"].map { URL(filePath: $0) }
            ?? URL(filePath: environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path).appending(path: ".local/state")
        return stateHome.appending(path: "identity-emulator")
    }
}

/// The tenant's "Consent and permissions" setting for users.
public enum UserConsentPolicy: String, Sendable, CaseIterable {
    /// Users may consent to permissions that do not need an administrator.
    case allowed
    /// "Do not allow user consent": every app needs an administrator's approval first.
    case adminOnly = "admin-only"
}

/// How the token endpoint treats a refresh token redeemed a second time.
public enum RefreshTokenReuse: String, Sendable {
    /// Entra: the old token stays valid after rotation.
    case allowed
    /// Reuse detection: the whole rotation family is revoked.
    case revokeFamily = "revoke-family"
}
