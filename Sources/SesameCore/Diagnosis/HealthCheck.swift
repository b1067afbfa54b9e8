import FoundationEssentials

/// What an administrator asks when sign-in fails at work, answered for one account type at a
/// time (`sesame doctor`): which proxy each endpoint takes, whether discovery and the keys can be
/// fetched and how long that takes, who issued each server's certificate, which endpoints and
/// client authentication a sign-in would use, and whether this computer's clock agrees with the
/// service's. It goes through the same transport and proxy resolver as the app, and decides
/// endpoints and client authentication with the same code as the account store, so what it
/// finds is what a sign-in would meet. It sends no token request and never a secret.
///
/// ```swift
/// let check = HealthCheck(transport: transport, proxyResolver: resolver)
/// let diagnosis = await check.diagnose(try SettingsFile.load(contentsOf: url))
/// if !diagnosis.isHealthy { … }
/// ```
public struct HealthCheck: Sendable {
    /// How far apart the clocks may be: tokens carry their times to the second, and Entra and
    /// Sesame allow five minutes of skew.
    public static let clockTolerance: TimeInterval = 5 * 60

    private let transport: any HTTPTransport
    private let proxyResolver: any ProxyResolver
    private let certificates: any CertificateInspector
    private let now: @Sendable () -> Date

    /// A check over the app's transport and proxy resolver (the transport must route through the
    /// same resolver: the routes it reports are the resolver's).
    /// - Parameters:
    ///   - certificates: reads each server's certificate; the real one makes its own handshake.
    ///   - now: this computer's clock; tests move it.
    public init(
        transport: any HTTPTransport, proxyResolver: any ProxyResolver,
        certificates: any CertificateInspector = TLSCertificateInspector(), now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.transport = transport
        self.proxyResolver = proxyResolver
        self.certificates = certificates
        self.now = now
    }

    /// Diagnoses a settings file's account type (its warnings included).
    public func diagnose(_ file: SettingsFile) async -> Diagnosis {
        await diagnose(file.settings, warnings: file.warnings, file: file.path)
    }

    /// Diagnoses an account type's settings.
    public func diagnose(_ settings: SampleSettings, warnings: [SettingsWarning] = [], file: String? = nil) async -> Diagnosis {
        var findings: [Finding] = [
            Finding(.settings, warnings.isEmpty ? .ok(.settingsRead(file: file)) : .problem(.settingsWarnings(warnings)))
        ]
        let configuration = settings.accountConfiguration
        let discoveryURL = configuration.resolvedDiscoveryURL

        // Discovery, then the keys it names: the first exchanges of every sign-in.
        let discovery = await fetch(OpenIDConfiguration.self, from: discoveryURL, expected: "an OpenID configuration")
        let provider = discovery.document
        var keys: Fetched<JSONWebKeySet>?
        if let provider { keys = await fetch(JSONWebKeySet.self, from: provider.jwksURI, expected: "a JSON Web Key Set") }

        var (endpoints, endpointFindings) = Self.endpoints(of: configuration, provider: provider)
        endpoints.append((.discovery, discoveryURL))
        if let provider { endpoints.append((.signingKeys, provider.jwksURI)) }
        if let resource = Self.resource(of: settings, provider: provider) { endpoints.append((.resource, resource)) }

        let (routeFindings, routeOfHost) = await routes(of: endpoints)
        findings += routeFindings
        // Each identity host's certificate (before the documents in the report: TLS comes first on
        // the wire), unless the exchanges with it could not reach it at all.
        let unreachable = Set(
            [discovery.failure, keys?.failure].compactMap { $0 }.filter { !Self.isCertificateFailure($0.kind) }.map(\.host))
        findings += await certificates(of: endpoints, unreachable: unreachable, routes: routeOfHost)

        findings.append(Self.finding(.discovery(discoveryURL), url: discoveryURL, discovery) { "issuer \(Self.printable($0.issuer))" })
        if let keys, let provider {
            findings.append(
                Self.finding(.signingKeys(provider.jwksURI), url: provider.jwksURI, keys) {
                    $0.keys.count == 1 ? "1 key" : "\($0.keys.count) keys"
                })
        } else {
            findings.append(Finding(.signingKeys(nil), .notChecked(.discoveryFailed)))
        }

        findings += endpointFindings
        if configuration.decidesClientAuthenticationAlone || provider != nil {
            findings.append(Finding(.clientAuthentication, .ok(.clientAuthentication(configuration.clientAuthentication(with: provider)))))
        } else {
            findings.append(Finding(.clientAuthentication, .notChecked(.discoveryFailed)))
        }
        findings.append(Finding(.clock, Self.clockOutcome(discovery)))
        if let authorization = endpoints.first(where: { $0.role == .authorization })?.url {
            findings.append(await appRegistration(configuration, authorization: authorization))
        }
        return Diagnosis(accountType: settings.accountType, shape: settings.shape, settingsFile: file, findings: findings)
    }

    private typealias Finding = Diagnosis.Finding
    private typealias Endpoint = (role: Diagnosis.EndpointRole, url: URL)

    /// The endpoints a sign-in would use — the file's, or discovery's (checked as the store
    /// checks them) — and a finding for each.
    private static func endpoints(
        of configuration: AccountConfiguration, provider: OpenIDConfiguration?
    ) -> (endpoints: [Endpoint], findings: [Finding]) {
        var endpoints: [Endpoint] = []
        var findings: [Finding] = []
        for (role, which, named) in [
            (Diagnosis.EndpointRole.authorization, AccountConfiguration.DiscoveredEndpoints.authorization, configuration.authorizationURL),
            (.token, .token, configuration.tokenURL),
        ] {
            guard configuration.discoveredEndpoints.contains(which) else {
                endpoints.append((role, named))
                findings.append(Finding(.endpoint(role), .ok(.endpoint(named, source: .settingsFile))))
                continue
            }
            guard provider != nil else {
                findings.append(Finding(.endpoint(role), .notChecked(.discoveryFailed)))
                continue
            }
            do {
                let url = try configuration.endpoint(which, from: provider)
                endpoints.append((role, url))
                findings.append(Finding(.endpoint(role), .ok(.endpoint(url, source: .discovery))))
            } catch {
                findings.append(Finding(.endpoint(role), .problem(.configuration(error))))
            }
        }
        return (endpoints, findings)
    }

    /// The route of every endpoint, one finding per host and route, and each host's first route.
    private func routes(of endpoints: [Endpoint]) async -> (findings: [Finding], routeOfHost: [String: ProxyRoute]) {
        var routes: [(host: String, route: ProxyRoute, roles: [Diagnosis.EndpointRole])] = []
        var routeOfHost: [String: ProxyRoute] = [:]
        for (role, url) in endpoints {
            let route = await proxyResolver.route(for: url)
            let host = Self.hostAndPort(url)
            routeOfHost[host] = routeOfHost[host] ?? route
            if let index = routes.firstIndex(where: { $0.host == host && $0.route == route }) {
                if !routes[index].roles.contains(role) { routes[index].roles.append(role) }
            } else {
                routes.append((host, route, [role]))
            }
        }
        return (routes.map { Finding(.proxy(host: $0.host), .ok(.route($0.route, roles: $0.roles))) }, routeOfHost)
    }

    /// Each identity host's certificate, once per host; not checked where the exchanges could not
    /// reach the host at all (`unreachable`, as their failures name it).
    private func certificates(
        of endpoints: [Endpoint], unreachable: Set<String>, routes routeOfHost: [String: ProxyRoute]
    ) async -> [Finding] {
        var inspected: Set<String> = []
        var findings: [Finding] = []
        for (role, url) in endpoints where role != .resource {
            let host = Self.hostAndPort(url)
            guard inspected.insert(host).inserted else { continue }
            let transportHost = HTTPTransportError(url: url, reason: "").host
            if url.scheme?.lowercased() != "https" {
                findings.append(Finding(.certificate(host: host), .ok(.plainHTTPOnThisComputer)))
            } else if unreachable.contains(transportHost) {
                findings.append(Finding(.certificate(host: host), .notChecked(.unreachable)))
            } else {
                let inspection = await certificates.inspect(
                    host: url.host ?? host, port: url.port ?? 443, route: routeOfHost[host] ?? .direct)
                findings.append(Finding(.certificate(host: host), Self.outcome(of: inspection)))
            }
        }
        return findings
    }

    // MARK: Fetching

    /// One GET: the decoded document or what went wrong, how long it took, and what the
    /// answer's `Date` said against this computer's clock at the middle of the exchange.
    private struct Fetched<Document: Sendable>: Sendable {
        var document: Document?
        var problem: Diagnosis.Problem?
        var elapsed: Duration = .zero
        /// The service's clock minus this computer's, in seconds; `nil` without a usable `Date`.
        var clockOffset: TimeInterval?
        /// Whether any HTTP answer came (an error status carries a `Date` too).
        var answered = false

        /// The exchange's failure when no answer came.
        var failure: HTTPTransportError? {
            if case .transport(let failure) = problem { return failure }
            return nil
        }
    }

    private func fetch<Document: Decodable & Sendable>(
        _ documentType: Document.Type, from url: URL, expected: String
    ) async -> Fetched<Document> {
        let clock = ContinuousClock()
        let started = clock.now
        let sent = now()
        let response: HTTPResponse
        do {
            response = try await transport.send(HTTPRequest(method: "GET", url: url, headers: ["Accept": "application/json"]))
        } catch {
            let failure =
                error as? HTTPTransportError
                ?? HTTPTransportError(url: url, reason: "the exchange failed (\(type(of: error)))", kind: .unreachable)
            return Fetched(problem: .transport(failure), elapsed: clock.now - started)
        }
        var fetched = Fetched<Document>(elapsed: clock.now - started, answered: true)
        let received = now()
        let middle = sent.addingTimeInterval(received.timeIntervalSince(sent) / 2)
        fetched.clockOffset = response.headers["Date"].flatMap(HTTPDate.parse).map { $0.timeIntervalSince(middle) }
        if !response.isSuccess {
            fetched.problem = .httpStatus(response.status, url: url)
        } else if let document = try? JSONDecoder().decode(Document.self, from: response.body) {
            fetched.document = document
        } else {
            fetched.problem = .unreadableDocument(url: url, expected: expected)
        }
        return fetched
    }

    /// Whether the sign-in page opens for the app registration: the authorization endpoint asked
    /// as a sign-in would ask it (no `state`, nobody signs in), its answer read for the codes
    /// Entra refuses a registration with — on its page (it never redirects for them) or, for a
    /// service that does, in the redirect.
    private func appRegistration(_ configuration: AccountConfiguration, authorization: URL) async -> Finding {
        let url = FormEncoding.url(
            authorization,
            appending: [
                ("client_id", configuration.clientID), ("response_type", "code"),
                ("redirect_uri", configuration.redirectURL.absoluteString), ("scope", configuration.scopes.joined(separator: " ")),
                ("response_mode", "query"),
            ])
        let response: HTTPResponse
        do {
            response = try await transport.send(HTTPRequest(method: "GET", url: url, headers: ["Accept": "text/html"]))
        } catch {
            return Finding(.appRegistration, .notChecked(.unreachable))
        }
        let text =
            String(decoding: response.body.prefix(1 << 20), as: UTF8.self) + " "
            + (FormEncoding.unescape(response.headers["Location"] ?? "") ?? "")
        for code in ["AADSTS50011", "AADSTS700016", "AADSTS90002", "AADSTS50194"] where text.contains(code) {
            return Finding(
                .appRegistration,
                .problem(.appRegistration(serviceCode: code, clientID: configuration.clientID, redirectURI: configuration.redirectURL)))
        }
        guard response.status < 400 else { return Finding(.appRegistration, .problem(.httpStatus(response.status, url: authorization))) }
        return Finding(.appRegistration, .ok(.signInPageOpens(clientID: configuration.clientID, redirectURI: configuration.redirectURL)))
    }

    private static func finding<Document>(
        _ subject: Diagnosis.Subject, url: URL, _ fetched: Fetched<Document>, summary: (Document) -> String
    ) -> Diagnosis.Finding {
        guard let document = fetched.document else {
            return Diagnosis.Finding(subject, fetched.problem.map { .problem($0) } ?? .notChecked(.unreachable))
        }
        return Diagnosis.Finding(subject, .ok(.fetched(url: url, elapsed: fetched.elapsed, summary: summary(document))))
    }

    // MARK: Judging

    private static func clockOutcome<Document>(_ discovery: Fetched<Document>) -> Diagnosis.Outcome {
        guard discovery.answered else { return .notChecked(.discoveryFailed) }
        guard let offset = discovery.clockOffset else { return .notChecked(.noDateHeader) }
        let seconds = Int(offset.rounded())
        return abs(offset) > clockTolerance ? .problem(.clockSkew(offsetSeconds: seconds)) : .ok(.clockAgrees(offsetSeconds: seconds))
    }

    private static func outcome(of inspection: CertificateInspection) -> Diagnosis.Outcome {
        switch inspection {
        case .trusted(let issuer): .ok(.trustedCertificate(issuer: issuer))
        case .untrusted(let failure, let issuer): .problem(.untrustedCertificate(failure, issuer: issuer))
        case .failed(let failure): .problem(.transport(failure))
        case .notInspected: .notChecked(.socksProxy)
        }
    }

    private static func isCertificateFailure(_ kind: HTTPTransportError.Kind) -> Bool {
        kind == .untrustedCertificate || kind == .tlsFailed
    }

    /// The sample's API, the last thing a sign-in leads to: Graph, the task API, userinfo.
    private static func resource(of settings: SampleSettings, provider: OpenIDConfiguration?) -> URL? {
        switch settings {
        case .graph(let graph): graph.graphBaseURL
        case .b2c(let b2c): b2c.taskAPI
        case .msal(let msal): msal.graphURI
        case .openID: provider?.userinfoEndpoint
        }
    }

    /// `host` or `host:port` as the URL names it.
    static func hostAndPort(_ url: URL) -> String {
        let host = url.host ?? "?"
        let shown = host.contains(":") ? "[\(host)]" : host
        return url.port.map { "\(shown):\($0)" } ?? shown
    }

    /// Text from a server as a terminal may show it: no control characters, at most 200 characters.
    static func printable(_ text: String) -> String {
        let kept = String(
            String.UnicodeScalarView(
                text.unicodeScalars.filter { $0.properties.generalCategory != .control && $0.properties.generalCategory != .format }))
        return kept.count > 200 ? String(kept.prefix(200)) + "…" : kept
    }
}
