import FoundationEssentials

/// What ``HealthCheck`` found for one account type: one ``Finding`` per thing checked (the
/// settings file, the proxy of each endpoint, discovery and the keys, each server's certificate,
/// the endpoints and client authentication in use, the clock), each fine or a typed problem.
/// `sesame doctor` prints them; nothing in them is a secret.
public struct Diagnosis: Sendable {
    /// The account type checked.
    public let accountType: String
    /// The shape of its settings.
    public let shape: SampleSettings.Shape
    /// The settings file's path, when the settings came from one.
    public let settingsFile: String?
    /// What was found, in the order it was checked.
    public var findings: [Finding]

    /// A diagnosis; see each property.
    public init(accountType: String, shape: SampleSettings.Shape, settingsFile: String?, findings: [Finding]) {
        self.accountType = accountType
        self.shape = shape
        self.settingsFile = settingsFile
        self.findings = findings
    }

    /// Whether nothing needs fixing.
    public var isHealthy: Bool { !findings.contains { $0.outcome.isProblem } }

    /// One thing checked and what was found.
    public struct Finding: Sendable {
        /// What was checked.
        public let subject: Subject
        /// What was found.
        public let outcome: Outcome

        /// A finding; see each property.
        public init(_ subject: Subject, _ outcome: Outcome) {
            self.subject = subject
            self.outcome = outcome
        }
    }

    /// What a finding is about.
    public enum Subject: Sendable, Hashable {
        /// The settings file: the keys its shape does not read.
        case settings
        /// The route the desktop's proxy settings give for the endpoints on one host.
        case proxy(host: String)
        /// The provider's OpenID configuration.
        case discovery(URL)
        /// The provider's signing keys (its `jwks_uri`; `nil` when discovery did not say where).
        case signingKeys(URL?)
        /// The certificate a host presents, and who issued it.
        case certificate(host: String)
        /// An endpoint the sign-in uses.
        case endpoint(EndpointRole)
        /// How the client proves itself at the token endpoint.
        case clientAuthentication
        /// This computer's clock against the service's.
        case clock
        /// The app registration, as the sign-in page sees it: the client id in the tenant, the
        /// redirect URI registered.
        case appRegistration
        /// Whether the desktop's keyring (Secret Service) answers.
        case keyring
        /// Where sign-ins are kept.
        case tokenStorage
    }

    /// What an endpoint is for.
    public enum EndpointRole: String, Sendable, Hashable, CaseIterable {
        /// The authorization endpoint: the sign-in pages.
        case authorization
        /// The token endpoint.
        case token
        /// The OpenID configuration.
        case discovery
        /// The signing keys.
        case signingKeys
        /// The sample's API: Microsoft Graph, the task API, the provider's userinfo endpoint.
        case resource
    }

    /// Where an endpoint in use comes from.
    public enum EndpointSource: Sendable, Hashable {
        /// The settings file names it (or its authority, which it is derived from).
        case settingsFile
        /// The provider's discovery document.
        case discovery
    }

    /// What was found.
    public enum Outcome: Sendable {
        /// Fine, and what was seen.
        case ok(Detail)
        /// Something to fix.
        case problem(Problem)
        /// Not checked, because something it needs failed.
        case notChecked(NotChecked)

        /// Whether this needs fixing.
        public var isProblem: Bool {
            if case .problem = self { return true }
            return false
        }
    }

    /// What a check that passed saw.
    public enum Detail: Sendable {
        /// Every key of the settings file is one its shape reads.
        case settingsRead(file: String?)
        /// The route of the endpoints on a host (credentials masked when printed).
        case route(ProxyRoute, roles: [EndpointRole])
        /// A document fetched: how long the exchange took, and what it says in a few words (the
        /// issuer; the number of keys).
        case fetched(url: URL, elapsed: Duration, summary: String)
        /// The host's certificate chain is trusted; who issued the host's certificate.
        case trustedCertificate(issuer: CertificateIssuer)
        /// Plain HTTP on this computer (the local emulator): there is no certificate.
        case plainHTTPOnThisComputer
        /// An endpoint in use, and where it comes from.
        case endpoint(URL, source: EndpointSource)
        /// The client authentication chosen.
        case clientAuthentication(ClientAuthentication)
        /// The sign-in page opens for this client id and redirect URI (nobody signs in).
        case signInPageOpens(clientID: String, redirectURI: URL)
        /// The clocks agree within the tolerance; the difference seen (positive: the service's
        /// clock is ahead).
        case clockAgrees(offsetSeconds: Int)
        /// The keyring answers, or none does and sign-ins are kept in files.
        case keyring(answers: Bool)
        /// Where sign-ins are kept: a folder, or the Secret Service (its collection's name when
        /// known).
        case storage(TokenStorageLocation)
    }

    /// What needs fixing.
    public enum Problem: Sendable {
        /// Keys of the settings file its shape does not read.
        case settingsWarnings([SettingsWarning])
        /// No answer: refused, no such host, a proxy's failure… (the window's sentence fits).
        case transport(HTTPTransportError)
        /// The host's certificate is not trusted (or not for it); who issued it, when it could be
        /// read without trusting it.
        case untrustedCertificate(HTTPTransportError, issuer: CertificateIssuer?)
        /// The server answered with an error status.
        case httpStatus(Int, url: URL)
        /// The answer is not the document expected.
        case unreadableDocument(url: URL, expected: String)
        /// The endpoints or client authentication cannot be decided from the document (Core's
        /// sentence, as a sign-in would fail with it).
        case configuration(AccountStoreError)
        /// The clocks differ by more than the tolerance (positive: the service's clock is ahead,
        /// this computer's behind).
        case clockSkew(offsetSeconds: Int)
        /// The keyring or the token storage cannot be used, in the storage's own sentence.
        case storage(reason: String)
        /// The identity service's sign-in page refuses this app registration (`AADSTS50011`,
        /// `700016`, `90002`, `50194`): the code, the client id and the redirect URI asked with.
        case appRegistration(serviceCode: String, clientID: String, redirectURI: URL)
    }

    /// Why a check was not made.
    public enum NotChecked: Sendable {
        /// It needs the discovery document, which could not be fetched.
        case discoveryFailed
        /// The server could not be reached at all (see the discovery line).
        case unreachable
        /// The service's answer carried no `Date` header to compare with.
        case noDateHeader
        /// Through a SOCKS proxy the certificate is not read (the exchanges themselves go through it).
        case socksProxy
    }
}

/// Where sign-ins are kept, as `sesame doctor` says it.
public enum TokenStorageLocation: Sendable, Hashable {
    /// Files in a folder readable by the user only.
    case files(String)
    /// The desktop's Secret Service; the name of the collection items go to, when it answers.
    case secretService(collection: String?)
}
