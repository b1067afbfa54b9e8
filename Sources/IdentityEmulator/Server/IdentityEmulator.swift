import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import Synchronization

/// A local Microsoft identity platform (Entra v2.0 and Azure AD B2C), Microsoft Graph's users API
/// and the B2C sample's task API, on one base URL.
///
/// ```swift
/// let emulator = try await IdentityEmulator(configuration: configuration)
/// try await emulator.run { base, caCertificate in print("listening on \(base)") }
/// ```
public final class IdentityEmulator: Sendable {
    public let configuration: EmulatorConfiguration
    /// Contoso, the workforce tenant (Graph's directory).
    public let contoso: Directory
    /// Fabrikam, the B2C tenant.
    public let fabrikam: Directory
    let state: IdentityState
    let tasks: TaskStore
    let key: SigningKey
    let clients: [ClientRegistration]
    private let baseURL: Mutex<URL>
    let logger: Logger

    var tenants: [Tenant] { [contoso.tenant, fabrikam.tenant] }
    var clock: EmulatorClock { configuration.clock }
    /// The URL clients reach the emulator at (known once it listens; tests may set it).
    public var base: URL {
        get { baseURL.withLock { $0 } }
    }
    var issuer: TokenIssuer { TokenIssuer(base: base, key: key, accessTokenLifetime: configuration.accessTokenLifetime) }

    /// Builds the directories, loads (or creates) the signing key and the saved state.
    public init(configuration: EmulatorConfiguration, base: URL? = nil) async throws {
        self.configuration = configuration
        if let directory = configuration.stateDirectory {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        guard configuration.userCount >= 0 else { throw EmulatorConfigurationError("--users must be 0 or more.") }
        if let lifetime = configuration.accessTokenLifetime, lifetime <= 0 {
            throw EmulatorConfigurationError("--access-token-lifetime must be a positive number of seconds, not \(lifetime).")
        }
        contoso = Directory(tenant: .contoso, users: DirectoryGenerator.contosoUsers(count: configuration.userCount, seed: configuration.seed))
        fabrikam = Directory(tenant: .fabrikamB2C, users: DirectoryGenerator.fabrikamFixedUsers)
        state = IdentityState(stateDirectory: configuration.stateDirectory)
        tasks = TaskStore(stateDirectory: configuration.stateDirectory)
        key = try SigningKey.loadOrCreate(in: configuration.stateDirectory, now: configuration.clock.now)
        clients = configuration.clients
        baseURL = Mutex(base ?? URL(string: "http://\(configuration.host):\(configuration.port)")!)
        var logger = Logger(label: "identity-emulator")
        logger.logLevel = .warning
        self.logger = logger
        for user in await state.signedUpUsers { fabrikam.restore(user) }
    }

    /// Problems with files in the state directory found while loading (kept aside, not deleted).
    public var warnings: [String] {
        get async { await state.warnings + [await tasks.warning].compactMap { $0 } }
    }

    func setBase(_ url: URL) { baseURL.withLock { $0 = url } }

    func directory(for tenant: Tenant) -> Directory { tenant.kind == .b2c ? fabrikam : contoso }

    // MARK: Routes

    /// Every endpoint, on Hummingbird's router.
    public func router() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: ServiceHeadersMiddleware())

        // Authorization, sign-in pages, token, logout, discovery and keys, in every path form:
        // /{tenant}/…, /{tenant}/{policy}/… and /tfp/{tenant}/{policy}/… (policy also as ?p=).
        for prefix in ["/:tenant", "/:tenant/:policy", "/tfp/:tenant/:policy"] {
            router.get("\(prefix)/oauth2/v2.0/authorize") { request, context in
                try await self.authorize(request, endpoint: self.endpoint(context, request))
            }
            router.post("\(prefix)/oauth2/v2.0/token") { request, context in
                try await self.token(request, context: context, endpoint: self.endpointForJSON(context, request))
            }
            router.get("\(prefix)/oauth2/v2.0/logout") { request, context in
                try await self.logout(request, endpoint: self.endpoint(context, request))
            }
            router.get("\(prefix)/v2.0/.well-known/openid-configuration") { request, context in
                try self.discovery(request, endpoint: self.endpointForJSON(context, request))
            }
            router.get("\(prefix)/discovery/v2.0/keys") { request, context in
                try self.keys(endpoint: self.endpointForJSON(context, request))
            }
        }
        router.post("/:tenant/login") { request, context in try await self.login(request, tenantSegment: context.parameters.require("tenant")) }
        router.get("/:tenant/login") { request, context in try await self.login(request, tenantSegment: context.parameters.require("tenant")) }

        // Microsoft Graph.
        router.get("/v1.0/me") { request, _ in await self.graphMe(request) }
        router.get("/v1.0/users") { request, _ in await self.graphUsers(request) }
        router.get("/v1.0/users/:id") { request, context in await self.graphUser(request, id: context.parameters.get("id") ?? "") }
        router.post("/v1.0/me/revokeSignInSessions") { request, _ in await self.graphRevoke(request, id: nil) }
        router.post("/v1.0/users/:id/revokeSignInSessions") { request, context in await self.graphRevoke(request, id: context.parameters.get("id")) }
        router.get("/oidc/userinfo") { request, _ in await self.userInfo(request) }

        // The B2C sample's task API.
        router.get("/api/tasks") { request, _ in await self.listTasks(request) }
        router.post("/api/tasks") { request, _ in await self.addTask(request) }
        router.delete("/api/tasks/:id") { request, context in await self.deleteTask(request, id: context.parameters.get("id") ?? "") }

        // The emulator's own controls, for test harnesses.
        router.post("/.emulator/users/:user/revokeSignInSessions") { _, context in
            await self.controlRevoke(user: context.parameters.get("user") ?? "")
        }
        router.get("/") { _, _ in self.homePage() }
        return router
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

    // MARK: Running

    /// Listens (HTTP, or HTTPS with `tls`) until cancelled or sent SIGINT/SIGTERM. `onListening`
    /// gets the base URL and, with TLS, the path of the CA certificate clients should trust.
    public func run(onListening: @escaping @Sendable (URL, String?) -> Void) async throws {
        let scheme = configuration.tls ? "https" : "http"
        let server: HTTPServerBuilder
        var caPath: String?
        if configuration.tls {
            let authority = try LocalCertificateAuthority.loadOrCreate(in: configuration.tlsDirectory, now: clock.now)
            caPath = authority.caCertificatePath
            server = try .tls(.http1(), tlsConfiguration: authority.serverConfiguration())
        } else {
            server = .http1()
        }
        let displayHost = configuration.host == "0.0.0.0" ? "127.0.0.1" : configuration.host
        let app = Application(
            router: router(),
            server: server,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "identity-emulator"),
            onServerRunning: { [caPath] channel in
                let port = channel.localAddress?.port ?? self.configuration.port
                let url = URL(string: "\(scheme)://\(displayHost):\(port)")!
                self.setBase(url)
                onListening(url, caPath)
            },
            logger: logger)
        try await app.runService()
    }

    private func homePage() -> Response {
        .html(PageLayout.microsoft(title: "Identity emulator", body: """
            <h1 id="pageTitle">Identity emulator</h1>
            <p>A local Microsoft identity platform, Microsoft Graph users API and B2C task API.</p>
            <p class="small">Discovery: /common/v2.0/.well-known/openid-configuration · B2C: /fabrikamb2c.onmicrosoft.com/B2C_1_SignUpSignIn/v2.0/.well-known/openid-configuration</p>
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
        return .json(error.json(traceID: Identifiers.guid(), correlationID: correlation, at: Date()), status: status,
                     headers: [.cacheControl: "no-store, no-cache", .pragma: "no-cache"])
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
