import FoundationEssentials
import Hummingbird
import Logging
import Synchronization

/// What every endpoint family shares: the configuration, the two tenants' directories, the
/// sign-in state (codes, sessions, refresh tokens, consents), the task store, the signing key,
/// the registered clients and the base URL clients reach the emulator at.
final class EmulatorServices: Sendable {
    let configuration: EmulatorConfiguration
    /// Contoso, the workforce tenant (Graph's directory).
    let contoso: Directory
    /// Fabrikam, the B2C tenant.
    let fabrikam: Directory
    let state: IdentityState
    /// Registered devices, nonces and Primary Refresh Tokens.
    let devices: DeviceRegistry
    /// Microsoft Authenticator's requests waiting on users' phones, and the app's activations.
    let authenticator = AuthenticatorPushes()
    /// The CA that signs device certificates.
    let deviceAuthority: DeviceAuthority
    let tasks: TaskStore
    /// The signing keys: the current one and those it replaced.
    let keys: SigningKeys
    /// The key Fabrikam's identity provider signs its assertions with; its certificate is the
    /// federated domain's registered signing certificate on Entra's side.
    let federationKey: SigningKey
    let clients: [ClientRegistration]
    let logger: Logger
    /// The faults in force.
    let faults: FaultInjector
    private let baseURL: Mutex<URL>

    init(
        configuration: EmulatorConfiguration, contoso: Directory, fabrikam: Directory, state: IdentityState, devices: DeviceRegistry,
        deviceAuthority: DeviceAuthority, tasks: TaskStore, keys: SigningKeys, federationKey: SigningKey, base: URL, logger: Logger
    ) {
        self.configuration = configuration
        self.contoso = contoso
        self.fabrikam = fabrikam
        self.state = state
        self.devices = devices
        self.deviceAuthority = deviceAuthority
        self.tasks = tasks
        self.keys = keys
        self.federationKey = federationKey
        clients = configuration.clients
        baseURL = Mutex(base)
        self.logger = logger
        faults = FaultInjector(plan: configuration.faults, seed: configuration.seed, clock: configuration.clock)
    }

    /// The URL clients reach the emulator at (known once it listens).
    var base: URL {
        get { baseURL.withLock { $0 } }
        set { baseURL.withLock { $0 = newValue } }
    }

    /// The identity provider's host name: `--federation-hostname`, or the default for the base's.
    var federationHost: String { configuration.federationHost(forEmulatorHost: base.host ?? "127.0.0.1") }

    /// The base's scheme and port on the federation host name.
    var federationBase: URL {
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false) ?? URLComponents()
        components.host = federationHost
        components.path = ""
        return components.url ?? base
    }

    /// Every federated domain (one: Contoso's `fabrikam.example`), its endpoints on today's base.
    var federatedDomains: [FederatedDomain] {
        [FederatedDomain.fabrikam(identityProvider: federationBase, signingKey: federationKey)]
    }

    /// Where the device registration service is reached: `--device-registration-hostname` on
    /// the base's scheme and port, or the base itself.
    var deviceRegistrationRoot: String {
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false) ?? URLComponents()
        if let host = configuration.deviceRegistrationHostname { components.host = host }
        components.path = ""
        let text = components.url?.absoluteString ?? base.absoluteString
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }

    /// Whether `request` came by the identity provider's host name.
    func isFederationHost(_ request: Request) -> Bool {
        request.hostName == federationHost.lowercased()
    }

    /// The federated domain `userName` belongs to in `tenant`, if any.
    func federatedDomain(forUserName userName: String, in tenant: Tenant) -> FederatedDomain? {
        federatedDomains.first { $0.tenantID == tenant.id && $0.contains(userName: userName) }
    }
}

/// One family of endpoints (sign-in pages, token, discovery, Graph, tasks, B2C) over the shared
/// ``EmulatorServices``. The protocol gives every controller the same names for the shared parts.
protocol EmulatorController: Sendable {
    var services: EmulatorServices { get }
}

extension EmulatorController {
    var configuration: EmulatorConfiguration { services.configuration }
    var contoso: Directory { services.contoso }
    var fabrikam: Directory { services.fabrikam }
    var state: IdentityState { services.state }
    var devices: DeviceRegistry { services.devices }
    var authenticator: AuthenticatorPushes { services.authenticator }
    var tasks: TaskStore { services.tasks }
    /// The key that signs now.
    var key: SigningKey { services.keys.current(now: clock.now) }
    var clients: [ClientRegistration] { services.clients }
    var logger: Logger { services.logger }
    var base: URL { services.base }
    var tenants: [Tenant] { [contoso.tenant, fabrikam.tenant] }
    var clock: EmulatorClock { configuration.clock }
    var issuer: TokenIssuer { TokenIssuer(base: base, key: key, accessTokenLifetime: configuration.accessTokenLifetime) }

    /// The base URL without a trailing slash, for building absolute URLs.
    var root: String {
        let text = base.absoluteString
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }

    func directory(for tenant: Tenant) -> Directory { tenant.kind == .b2c ? fabrikam : contoso }

    /// Prints a tenant's refusal on stdout with the ids its answer carries, as the sign-in logs
    /// keep them: `refused AADSTSnnnn request-id … correlation-id …` (what the help desk is sent).
    func announceRefusal(_ failure: ServiceError, requestID: String, correlationID: String) {
        configuration.announce("refused \(failure.codeText) request-id \(requestID) correlation-id \(correlationID)")
    }

    /// The tenant and policy a request names (B2C policy from the path or `?p=`).
    func endpoint(_ context: BasicRequestContext, _ request: Request) throws(EndpointError) -> IdentityEndpoint {
        let tenant = context.parameters.get("tenant") ?? ""
        let policy = context.parameters.get("policy") ?? request.queryFields["p"]
        return try IdentityEndpoint.resolve(tenant: tenant, policy: policy, tenants: tenants)
    }

    /// As ``endpoint(_:_:)``, failing with a JSON error (token, discovery, keys).
    func endpointForJSON(_ context: BasicRequestContext, _ request: Request) throws -> IdentityEndpoint {
        do {
            return try endpoint(context, request)
        } catch {
            throw JSONFailure(error.serviceError)
        }
    }
}
