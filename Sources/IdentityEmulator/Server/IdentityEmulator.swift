import FoundationEssentials
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// A local Microsoft identity platform (Entra v2.0 and Azure AD B2C), Microsoft Graph's users API
/// and the B2C sample's task API, on one base URL.
///
/// ```swift
/// let emulator = try await IdentityEmulator(configuration: configuration)
/// try await emulator.run { base, caCertificate in print("listening on \(base)") }
/// ```
public final class IdentityEmulator: Sendable {
    /// How it was started.
    public var configuration: EmulatorConfiguration { services.configuration }
    /// Contoso, the workforce tenant (Graph's directory).
    public var contoso: Directory { services.contoso }
    /// Fabrikam, the B2C tenant.
    public var fabrikam: Directory { services.fabrikam }
    let services: EmulatorServices
    /// The service group serving, while ``run(onListening:)`` runs; and whether ``stop()`` came first.
    private let serving = Mutex<(group: ServiceGroup?, stopped: Bool)>((nil, false))

    /// The signing key (tests compare key ids).
    var key: SigningKey { services.keys.current(now: clock.now) }
    var clock: EmulatorClock { configuration.clock }

    /// The URL clients reach the emulator at (known once it listens; tests may set it).
    public var base: URL { services.base }

    /// The URL of the federated organisation's identity provider: the base's scheme and port, the
    /// federation host name (`--federation-hostname`).
    public var federationBase: URL { services.federationBase }

    /// The tenants' federated domains (`fabrikam.example`), with their identity provider's endpoints.
    public var federatedDomains: [FederatedDomain] { services.federatedDomains }

    /// Builds the directories, loads (or creates) the signing key and the saved state.
    public init(configuration: EmulatorConfiguration, base: URL? = nil) async throws {
        if let directory = configuration.stateDirectory {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        guard configuration.userCount >= 0 else { throw EmulatorConfigurationError("--users must be 0 or more.") }
        if let lifetime = configuration.accessTokenLifetime, lifetime <= 0 {
            throw EmulatorConfigurationError("--access-token-lifetime must be a positive number of seconds, not \(lifetime).")
        }
        let emulatorHost = base?.host ?? Self.displayHost(configuration)
        if configuration.federationHost(forEmulatorHost: emulatorHost).equalsIgnoringCase(emulatorHost) {
            throw EmulatorConfigurationError(
                "--federation-hostname must differ from the emulator's own host name (\(emulatorHost)): the identity provider is "
                    + "told apart by its host name.")
        }
        // The service's clock is off from the start: its Date headers and its tokens' times.
        if configuration.clockOffset != 0 { configuration.clock.advance(by: configuration.clockOffset) }
        var logger = Logger(label: "identity-emulator")
        logger.logLevel = .warning
        let fabrikam = Directory(tenant: .fabrikamB2C, users: DirectoryGenerator.fabrikamFixedUsers)
        let state = IdentityState(stateDirectory: configuration.stateDirectory, policies: configuration.policies)
        services = EmulatorServices(
            configuration: configuration,
            contoso: Directory(
                tenant: .contoso, users: DirectoryGenerator.contosoUsers(count: configuration.userCount, seed: configuration.seed)),
            fabrikam: fabrikam, state: state, devices: DeviceRegistry(stateDirectory: configuration.stateDirectory),
            deviceAuthority: try DeviceAuthority.loadOrCreate(in: configuration.stateDirectory, now: configuration.clock.now),
            tasks: TaskStore(stateDirectory: configuration.stateDirectory),
            keys: try SigningKeys(
                directory: configuration.stateDirectory, interval: configuration.keyRolloverInterval, now: configuration.clock.now),
            federationKey: try SigningKey.loadOrCreate(
                in: configuration.stateDirectory, stem: "federation-signing",
                commonName: "ADFS Signing - \(FederatedDomain.fabrikamName)", now: configuration.clock.now),
            base: base ?? URL(string: "http://\(emulatorHost):\(configuration.port)")!, logger: logger)
        for user in await state.signedUpUsers { fabrikam.restore(user) }
        try await MethodsControlController(services: services).register(configuration.policies)
    }

    /// Problems with files in the state directory found while loading (kept aside, not deleted).
    public var warnings: [String] {
        get async {
            await services.state.warnings + services.devices.warnings + [await services.tasks.warning].compactMap { $0 }
        }
    }

    // MARK: Routes

    /// Every endpoint, on Hummingbird's router: the one place that says which controller answers
    /// which path.
    public func router() -> Router<BasicRequestContext> {
        let signIn = SignInController(services: services)
        let token = TokenController(services: services)
        let discovery = DiscoveryController(services: services)
        let graph = GraphController(services: services)
        let tasks = TaskController(services: services)
        let device = DeviceCodeController(services: services)
        let federation = FederationController(services: services)
        let adfs = ADFSController(services: services)
        let controls = ControlController(services: services)
        let broker = PrimaryRefreshTokenController(services: services)
        let registration = DeviceRegistrationController(services: services)
        let adminConsent = AdminConsentController(services: services)
        let authenticator = AuthenticatorController(services: services)
        let methods = MethodsControlController(services: services)
        let securityInfo = SecurityInfoController(services: services)

        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: ServiceHeadersMiddleware())
        router.add(middleware: FaultMiddleware(injector: services.faults))

        // Authorization, sign-in pages, token, logout, discovery and keys, in every path form:
        // /{tenant}/…, /{tenant}/{policy}/… and /tfp/{tenant}/{policy}/… (policy also as ?p=).
        for prefix in ["/:tenant", "/:tenant/:policy", "/tfp/:tenant/:policy"] {
            router.get("\(prefix)/oauth2/v2.0/authorize") { request, context in
                try await signIn.authorize(request, endpoint: signIn.endpoint(context, request))
            }
            router.post("\(prefix)/oauth2/v2.0/token") { request, context in
                try await token.token(request, context: context, endpoint: token.endpointForJSON(context, request))
            }
            router.post("\(prefix)/oauth2/v2.0/devicecode") { request, context in
                try await device.deviceAuthorization(request, endpoint: device.endpointForJSON(context, request))
            }
            router.get("\(prefix)/oauth2/v2.0/logout") { request, context in
                try await signIn.logout(request, endpoint: signIn.endpoint(context, request))
            }
            router.get("\(prefix)/v2.0/adminconsent") { request, context in
                try await adminConsent.adminConsent(request, endpoint: adminConsent.endpoint(context, request))
            }
            router.post("\(prefix)/v2.0/adminconsent") { request, context in
                try await adminConsent.adminConsent(request, endpoint: adminConsent.endpoint(context, request))
            }
            router.get("\(prefix)/v2.0/.well-known/openid-configuration") { request, context in
                try discovery.discovery(request, endpoint: discovery.endpointForJSON(context, request))
            }
            router.get("\(prefix)/.well-known/openid-configuration") { request, context in
                try discovery.discoveryVersionOne(endpoint: discovery.endpointForJSON(context, request))
            }
            router.get("\(prefix)/discovery/keys") { request, context in
                try discovery.keys(endpoint: discovery.endpointForJSON(context, request))
            }
            router.get("\(prefix)/discovery/v2.0/keys") { request, context in
                try discovery.keys(endpoint: discovery.endpointForJSON(context, request))
            }
        }
        // v1's token endpoint: `resource=`, and the broker protocol (nonce, PRT, PRT-signed requests).
        router.post("/:tenant/oauth2/token") { request, context in
            try await broker.token(request, endpoint: broker.endpointForJSON(context, request))
        }
        // Where a user name signs in (managed or federated), as Entra's v1 realm discovery says.
        // (A constant first segment such as `/common` would hide every `/:tenant` route from
        // `/common/…`: the router does not backtrack.)
        router.get("/:tenant/UserRealm/:user") { request, context in
            discovery.userRealm(context.parameters.get("user") ?? "", request: request)
        }
        // The device registration service (under its own host name when one is given).
        router.get("/:tenant/Discover") { request, context in
            try registration.discover(request, endpoint: registration.endpointForJSON(context, request))
        }
        router.post("/EnrollmentServer/device/") { request, _ in await registration.enroll(request) }
        router.delete("/EnrollmentServer/device/:id") { request, context in
            await registration.remove(request, deviceID: context.parameters.get("id") ?? "")
        }
        // Instance discovery, as MSAL asks it (aliases of the sign-in host, the tenant's metadata).
        router.get("/:tenant/discovery/instance") { request, _ in try discovery.instanceDiscovery(request) }
        // The device code flow's verification page (Microsoft's microsoft.com/devicelogin).
        router.post("/:tenant/SAS/EndAuth") { request, _ in try await authenticator.endAuth(request) }
        router.get("/devicelogin") { _, _ in device.verificationPage() }
        router.post("/devicelogin") { request, _ in try await device.enterCode(request) }
        // "Security info" (My Sign-Ins): the signed-in user's methods.
        router.get(RouterPath(SecurityInfoController.path)) { request, _ in await securityInfo.show(request) }
        router.post(RouterPath(SecurityInfoController.path)) { request, _ in try await securityInfo.change(request) }
        router.post("/security-info/authenticator/status") { request, _ in try await securityInfo.authenticatorStatus(request) }
        router.post("/security-info/passkey/options") { request, _ in try await securityInfo.passkeyOptions(request) }
        router.post("/security-info/passkey") { request, _ in try await securityInfo.registerPasskey(request) }
        router.post("/:tenant/login") { request, context in
            try await signIn.login(request, tenantSegment: context.parameters.require("tenant"))
        }
        router.get("/:tenant/login") { request, context in
            try await signIn.login(request, tenantSegment: context.parameters.require("tenant"))
        }
        // Federation: the answers of federated domains' identity providers come back to Entra
        // here; Fabrikam's AD FS itself answers under the federation host name only.
        router.post(RouterPath(FederationController.signInResponsePath)) { request, _ in await federation.signInResponse(request) }
        router.get(RouterPath(ADFSController.passivePath)) { request, _ in await adfs.passiveSignIn(request) }
        router.post(RouterPath(ADFSController.passivePath)) { request, _ in await adfs.passiveSignIn(request) }

        // Microsoft Graph.
        router.get("/v1.0/me") { request, _ in await graph.graphMe(request) }
        router.get("/v1.0/users") { request, _ in await graph.graphUsers(request) }
        router.get("/v1.0/me/registeredDevices") { request, _ in await graph.registeredDevices(request) }
        router.delete("/v1.0/devices/:id") { request, context in
            await graph.deleteDevice(request, objectID: context.parameters.get("id") ?? "")
        }
        router.get("/v1.0/users/:id") { request, context in await graph.graphUser(request, id: context.parameters.get("id") ?? "") }
        router.post("/v1.0/me/revokeSignInSessions") { request, _ in await graph.graphRevoke(request, id: nil) }
        router.post("/v1.0/users/:id/revokeSignInSessions") { request, context in
            await graph.graphRevoke(request, id: context.parameters.get("id"))
        }
        router.get("/oidc/userinfo") { request, _ in await graph.userInfo(request) }

        // The B2C sample's task API.
        router.get("/api/tasks") { request, _ in await tasks.listTasks(request) }
        router.post("/api/tasks") { request, _ in await tasks.addTask(request) }
        router.delete("/api/tasks/:id") { request, context in await tasks.deleteTask(request, id: context.parameters.get("id") ?? "") }

        // The emulator's own controls, for test harnesses and `make bench`: never for a web page
        // (a cross-origin form post, or a page whose name was rebound to this computer).
        let controlPaths = router.group("/.emulator").add(
            middleware: ControlRequestGuard(
                servedHosts: [
                    services.base.host, services.federationBase.host, configuration.hostname, configuration.deviceRegistrationHostname,
                ].compactMap { $0 }))
        controlPaths.post("users/:user/revokeSignInSessions") { _, context in
            await controls.revokeSignInSessions(user: context.parameters.get("user") ?? "")
        }
        controlPaths.post("clients/:client/adminConsent") { _, context in
            await controls.adminConsent(clientID: context.parameters.get("client") ?? "")
        }
        controlPaths.post("users/:user/requireMFA") { _, context in
            await controls.requireMFA(user: context.parameters.get("user") ?? "")
        }
        controlPaths.get("users/:user/methods") { _, context in await methods.methods(user: context.parameters.get("user") ?? "") }
        controlPaths.post("users/:user/methods") { request, context in
            try await methods.setMethods(user: context.parameters.get("user") ?? "", request)
        }
        controlPaths.post("users/:user/temporaryAccessPass") { request, context in
            try await methods.issuePass(user: context.parameters.get("user") ?? "", request)
        }
        controlPaths.post("users/:user/authenticator") { request, context in
            try await authenticator.phoneAnswers(user: context.parameters.get("user") ?? "", request)
        }
        controlPaths.post("authenticator/activate") { request, _ in try await authenticator.activate(request) }
        controlPaths.post("devices/:id/disable") { _, context in
            try await controls.setDevice(context.parameters.get("id") ?? "", enabled: false)
        }
        controlPaths.post("devices/:id/enable") { _, context in
            try await controls.setDevice(context.parameters.get("id") ?? "", enabled: true)
        }
        controlPaths.post("throttle") { request, _ in await controls.throttle(request) }
        controlPaths.post("keys/rotate") { _, _ in try await controls.rotateKeys() }
        controlPaths.post("benchmark/signatures") { request, _ in try await controls.signatureRate(request) }
        controlPaths.post("faults") { request, _ in try await controls.replaceFaults(request) }
        controlPaths.post("policy") { request, _ in try await controls.replacePolicy(request) }
        controlPaths.get("adminConsentRequests") { _, _ in await controls.adminConsentRequests() }
        controlPaths.get("requests") { _, _ in controls.receivedRequests() }
        router.get("/") { _, _ in Self.homePage() }
        return router
    }

    // MARK: Running

    /// Listens (HTTP, or HTTPS with `tls`) until ``stop()`` or SIGINT/SIGTERM (a graceful shutdown,
    /// bounded: ``shutdownLimit``), or until cancelled. `onListening` gets the base URL and, with
    /// TLS, the path of the CA certificate clients should trust.
    ///
    /// Stop it with ``stop()``, not by cancelling its task: a cancellation while connections are
    /// accepted but not yet served traps in NIO ("Deinited NIOAsyncWriter without calling
    /// finish()", apple/swift-nio#3481); a graceful shutdown closes the listener first, then
    /// serves what it accepted.
    public func run(onListening: @escaping @Sendable (URL, String?) -> Void) async throws {
        let scheme = configuration.tls ? "https" : "http"
        let server: HTTPServerBuilder
        var caPath: String?
        // Only a clock that is off on purpose speaks in the Date header; otherwise Hummingbird's.
        let clock = clock
        let http1: HTTPServerBuilder =
            configuration.clockOffset == 0
            ? .http1() : .http1(configuration: .init(additionalChannelHandlers: [ClockDateHeaderHandler(clock: clock)]))
        if configuration.tls {
            let authority = try LocalCertificateAuthority.loadOrCreate(
                in: configuration.tlsDirectory, hostname: configuration.hostname,
                federationHostname: configuration.federationHost(forEmulatorHost: Self.displayHost(configuration)),
                deviceRegistrationHostname: configuration.deviceRegistrationHostname, now: clock.now)
            caPath = authority.caCertificatePath
            server = try .tls(http1, tlsConfiguration: authority.serverConfiguration())
        } else {
            server = http1
        }
        let displayHost = Self.displayHost(configuration)
        let app = Application(
            router: router(),
            server: server,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "identity-emulator"),
            onServerRunning: { [caPath] channel in
                let port = channel.localAddress?.port ?? self.configuration.port
                // As Entra writes its URLs: the scheme's default port left out (never `:443`).
                let shownPort = port == (scheme == "https" ? 443 : 80) ? "" : ":\(port)"
                let url = URL(string: "\(scheme)://\(displayHost)\(shownPort)")!
                self.services.base = url
                onListening(url, caPath)
            },
            logger: services.logger)
        // A graceful shutdown is never cut short by cancelling the server: a cancellation while
        // connections are accepted but not yet served traps in NIO (apple/swift-nio#3481,
        // swift-server/swift-http-server#137), and on a busy machine any time limit is passed.
        // The program bounds its own end (`shutdownLimit`: it exits, nothing is cancelled); in a
        // test process, a stopped emulator finishes what it accepted in its own time.
        var group = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: services.logger)
        group.maximumGracefulShutdownDuration = nil
        let serviceGroup = ServiceGroup(configuration: group)
        let stoppedAlready = serving.withLock { serving in
            serving.group = serviceGroup
            return serving.stopped
        }
        if stoppedAlready { await serviceGroup.triggerGracefulShutdown() }
        try await serviceGroup.run()
    }

    /// Ends ``run(onListening:)`` as SIGTERM does: the listener closes, what was accepted is
    /// served, then it returns.
    public func stop() async {
        let group = serving.withLock { serving in
            serving.stopped = true
            return serving.group
        }
        await group?.triggerGracefulShutdown()
    }

    /// How long after SIGTERM the `identity-emulator` program has ended at the latest: what is
    /// still cancelling by then ends with the process.
    public static let shutdownLimit: Duration = .milliseconds(1_500)

    /// The host name of the base URL: `--hostname`, or the listen address (`127.0.0.1` for `0.0.0.0`).
    static func displayHost(_ configuration: EmulatorConfiguration) -> String {
        configuration.hostname ?? (configuration.host == "0.0.0.0" ? "127.0.0.1" : configuration.host)
    }

    private static func homePage() -> Response {
        .html(
            PageLayout.microsoft(
                title: "Identity emulator",
                body: """
                    <h1 id="pageTitle">Identity emulator</h1>
                    <p>A local Microsoft identity platform, Microsoft Graph users API and B2C task API.</p>
                    <p class="small">Discovery: /common/v2.0/.well-known/openid-configuration · B2C: \
                    /fabrikamb2c.onmicrosoft.com/B2C_1_SignUpSignIn/v2.0/.well-known/openid-configuration</p>
                    """))
    }
}

/// A JSON error answer thrown out of a handler (token endpoint, discovery).
struct JSONFailure: Error, HTTPResponseError {
    let error: ServiceError
    init(_ error: ServiceError) { self.error = error }

    var status: HTTPResponse.Status { .init(code: error.status) }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let correlation = request.headers[.clientRequestID] ?? Identifiers.guid()
        return .json(
            error.json(traceID: Identifiers.guid(), correlationID: correlation, at: Date()), status: status,
            headers: [.cacheControl: "no-store, no-cache", .pragma: "no-cache"])
    }
}

/// The `/.emulator/…` controls answer programs (test harnesses, `curl`), never web pages: a
/// request that names another origin (`Origin`, or a browser's `Sec-Fetch-Site` other than
/// `same-origin`/`none`) is refused, and so is one addressed to a host name the emulator does not
/// serve (a page whose own name was rebound to this computer's address: DNS rebinding).
struct ControlRequestGuard: RouterMiddleware {
    typealias Context = BasicRequestContext
    /// The host names the emulator serves under, besides the loopback ones.
    let servedHosts: Set<String>

    init(servedHosts: [String]) {
        self.servedHosts = Set((servedHosts + ["localhost", "127.0.0.1", "::1"]).map { $0.lowercased() })
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let authority = request.head.authority ?? request.headers[.host] ?? ""
        guard let addressed = Self.host(ofAuthority: authority), servedHosts.contains(addressed) else {
            return Self.refusal("The emulator's controls answer only under the names it serves, not \(authority).")
        }
        if let origin = request.headers[.origin] {
            guard let url = URL(string: origin), let host = url.host?.lowercased(),
                Self.host(ofAuthority: authority) == host, Self.port(ofAuthority: authority) == url.port
            else {
                return Self.refusal("The emulator's controls refuse requests from web pages (Origin \(origin)).")
            }
        }
        if let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!], !["same-origin", "none"].contains(site.lowercased()) {
            return Self.refusal("The emulator's controls refuse requests from web pages (Sec-Fetch-Site \(site)).")
        }
        return try await next(request, context)
    }

    /// The host of `host[:port]` or `[v6]:port`, lower-cased, without brackets.
    static func host(ofAuthority authority: String) -> String? {
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            return String(authority[authority.index(after: authority.startIndex)..<close]).lowercased()
        }
        guard let name = authority.split(separator: ":", omittingEmptySubsequences: false).first, !name.isEmpty else { return nil }
        return name.lowercased()
    }

    static func port(ofAuthority authority: String) -> Int? {
        guard let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") else { return nil }
        return Int(authority[authority.index(after: colon)...])
    }

    private static func refusal(_ message: String) -> Response {
        Response(
            status: .forbidden, headers: [.contentType: "text/plain; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: message + "\n")))
    }
}

/// Headers every answer carries, as Microsoft's services send them.
struct ServiceHeadersMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        if response.headers[.xMSRequestID] == nil { response.headers[.xMSRequestID] = Identifiers.guid() }
        if let clientRequestID = request.headers[.clientRequestID], response.headers[.clientRequestID] == nil {
            response.headers[.clientRequestID] = clientRequestID
        }
        return response
    }
}
