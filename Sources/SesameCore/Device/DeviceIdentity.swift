import FoundationEssentials
import Logging

/// Where a device identity is kept: one secret (the registration, its keys, the PRT and its
/// session key), in the Secret Service — never a file.
public protocol DeviceIdentityStorage: Sendable {
    /// Where it is kept, as `sesame doctor` names it.
    var location: String { get }
    func load() throws -> Secret?
    func save(_ value: Secret) throws
    func clear() throws
}

/// This computer's identity in an organization, with one owner: the registration, its keys and
/// the Primary Refresh Token live here and are written only here. It registers (the user signs
/// in to the Microsoft Authentication Broker for the registration service; Sesame never sees a
/// password), gets the PRT from that sign-in, gives any app its tokens from the PRT (renewing it
/// as Windows does, every four hours of use), notices when the organization removed or disabled
/// the device, and removes it when the user asks.
public actor DeviceIdentity {
    /// What `sesame doctor` and the window show: no key, token or cookie.
    public struct Status: Sendable, Equatable {
        public let deviceID: String
        public let userPrincipalName: String?
        /// The sign-in service it is registered with (`https://login.microsoftonline.com`).
        public let authority: URL
        public let keyStore: String
        public let storage: String
        /// When the PRT was issued or last renewed; it is renewed once ``renewalAge`` has passed.
        public let primaryRefreshTokenIssued: Date
        public let primaryRefreshTokenExpires: Date
    }

    private let storage: any DeviceIdentityStorage
    private let transport: any HTTPTransport
    private let logger: Logger
    private let now: @Sendable () -> Date
    private var kept: Kept?
    private var loaded = false
    /// Why the registration was found gone (removed or disabled in the organization) in this
    /// process and not yet said: ``takeLoss()``.
    private var loss: DeviceIdentityError?

    /// A PRT in use is renewed when this much of its life has passed (Windows: four hours).
    public static let renewalAge: TimeInterval = 4 * 3600

    public init(
        storage: any DeviceIdentityStorage, transport: any HTTPTransport, logger: Logger = Logger(label: "sesame.device"),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.storage = storage
        self.transport = transport
        self.logger = logger
        self.now = now
    }

    /// The registration, when this computer has one.
    public func status() throws(DeviceIdentityError) -> Status? {
        guard let kept = try current() else { return nil }
        return Status(
            deviceID: kept.registration.deviceID, userPrincipalName: kept.registration.userPrincipalName, authority: kept.authority,
            keyStore: "software",
            storage: storage.location, primaryRefreshTokenIssued: kept.primaryRefreshTokenIssued,
            primaryRefreshTokenExpires: kept.prt.expiresAt)
    }

    // MARK: Registering

    /// Registers this computer with the organization `authority` names
    /// (`https://login.microsoftonline.com/{tenant}`): the user signs in, in `userAgent`, to the
    /// Microsoft Authentication Broker for the registration service; the device's keys are made,
    /// the device enrolled ("Entra registered") and the PRT requested with that sign-in.
    public func register(
        authority: URL, tenant: String, displayName: String, osVersion: String, using userAgent: any SignInUserAgent
    ) async throws(DeviceIdentityError) -> DeviceRegistration {
        try await register(authority: authority, tenant: tenant, displayName: displayName, osVersion: osVersion, signIn: .page(userAgent))
    }

    /// How the user signs in for the registration: on a page (the window's), or with a code typed
    /// on any device (`sesame device register` in a terminal).
    public enum RegistrationSignIn: Sendable {
        case page(any SignInUserAgent)
        case deviceCode(show: @Sendable (DeviceAuthorizationResponse) async -> Void)
    }

    /// Registers this computer (see ``register(authority:tenant:displayName:osVersion:using:)``),
    /// the user signing in as `signIn` says. `tenant` `organizations` or `common`: the user's own.
    public func register(
        authority: URL, tenant: String, displayName: String, osVersion: String, signIn: RegistrationSignIn
    ) async throws(DeviceIdentityError) -> DeviceRegistration {
        let root = DeviceIdentityClient(transport: transport, authority: authority)
        let tokens = try await brokerSignIn(authority: authority, root: root.authority, signIn: signIn)
        let tenant = ["organizations", "common"].contains(tenant.lowercased()) ? Self.tenant(of: tokens.accessToken) ?? tenant : tenant
        guard let refreshToken = tokens.refreshToken else {
            throw DeviceIdentityError(.invalidResponse, "The sign-in for the registration gave no refresh token.")
        }
        let keys: SoftwareDeviceKeys
        do { keys = try await SoftwareDeviceKeys.generate() } catch {
            throw DeviceIdentityError(.keysUnreadable, "The device's keys could not be made: \(error)")
        }
        let registration = try await root.register(
            accessToken: tokens.accessToken, tenant: tenant, keys: keys, displayName: displayName, osVersion: osVersion)
        let prt: PrimaryRefreshToken
        do {
            prt = try await root.requestPRT(refreshToken: refreshToken, registration: registration, keys: keys)
        } catch {
            // No device left half-made in the organization.
            try? await root.remove(registration, accessToken: tokens.accessToken)
            throw error
        }
        try keep(Kept(registration: registration, authority: root.authority, keys: keys, prt: prt, issued: now()))
        logger.info("device registered", metadata: ["deviceId": "\(registration.deviceID)"])
        return registration
    }

    /// The broker's sign-in for the registration service, its code redeemed here: the tokens are
    /// used for the enrolment and the PRT request, then dropped (never cached).
    private func brokerSignIn(authority: URL, root: URL, signIn: RegistrationSignIn) async throws(DeviceIdentityError) -> TokenResponse {
        var configuration = AccountConfiguration(
            clientID: DeviceIdentityClient.brokerClientID,
            scopes: ["\(DeviceIdentityClient.registrationResource)/.default", "offline_access"],
            authorizationURL: authority.appending(path: "oauth2/v2.0/authorize"), tokenURL: authority.appending(path: "oauth2/v2.0/token"),
            redirectURL: root.appending(path: "common/oauth2/nativeclient"), storageGroup: "device-registration")
        let userAgent: any SignInUserAgent
        switch signIn {
        case .page(let agent): userAgent = agent
        case .deviceCode(let show):
            let flow = DeviceCodeFlow(
                transport: transport, tokenEndpoint: TokenEndpointClient(transport: transport, logger: logger),
                metadata: ProviderMetadataCache(transport: transport, logger: logger), now: now,
                sleep: { try await Task.sleep(for: $0) }, logger: logger)
            do {
                return try await flow.tokens(configuration: configuration, accountType: "device-registration", show: show)
            } catch {
                throw DeviceIdentityError(.signInFailed, error.message, serviceCode: error.serviceCode)
            }
        }
        do {
            configuration.redirectURL = try await userAgent.redirectURI(for: configuration)
        } catch {
            throw DeviceIdentityError(.signInFailed, "The sign-in cannot receive its answer: \(error)")
        }
        let request = AuthorizationRequest(configuration: configuration)
        let session = SignInSession(accountType: "device-registration", configuration: configuration, request: request)
        do {
            try await userAgent.present(session)
        } catch {
            await userAgent.dismiss(session)
            throw DeviceIdentityError(.signInFailed, "The sign-in page could not be shown: \(error)")
        }
        let ending = await session.ending()
        await userAgent.dismiss(session)
        switch ending {
        case .answered(.code(let answer)):
            do {
                return try await TokenEndpointClient(transport: transport, logger: logger).send(
                    AuthorizationCodeRequest(code: answer.code, answering: session.request), configuration: configuration,
                    accountType: "device-registration")
            } catch {
                throw DeviceIdentityError(.signInFailed, error.message, serviceCode: error.serviceCode)
            }
        case .answered(.error(let refusal)):
            let error = AccountStoreError.from(refusal, accountType: "device-registration")
            throw DeviceIdentityError(.signInFailed, error.message, serviceCode: error.serviceCode)
        case .failed(let error): throw DeviceIdentityError(.signInFailed, error.message)
        case .cancelled, .handedOff: throw DeviceIdentityError(.signInFailed, "The sign-in was cancelled; this computer is not registered.")
        }
    }

    /// The `tid` claim of a token just received from the token endpoint (read, not checked: it
    /// only names where to enrol, and the enrolment checks the token itself).
    private static func tenant(of token: Secret) -> String? {
        let parts = token.revealed.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[1].utf8.count < 16 * 1024, let payload = Base64URL.decode(parts[1]),
            case .object(let claims)? = try? JSONDecoder().decode(JSONValue.self, from: payload),
            let tid = claims["tid"]?.stringValue, UUID(uuidString: tid) != nil
        else { return nil }
        return tid
    }

    // MARK: Using the PRT

    /// Tokens for `clientID` (any app the organization knows), from the PRT: no page; the device
    /// is in them. A device the organization removed is forgotten here, and said so.
    public func tokens(clientID: String, scope: String, redirectURI: String? = nil) async throws(DeviceIdentityError) -> TokenResponse {
        var kept = try registered()
        let client = DeviceIdentityClient(transport: transport, authority: kept.authority)
        do {
            if now().timeIntervalSince(kept.primaryRefreshTokenIssued) > Self.renewalAge {
                kept.prt = try await client.renew(kept.prt)
                kept.primaryRefreshTokenIssued = now()
                try keep(kept)
            }
            return try await client.tokens(from: kept.prt, clientID: clientID, scope: scope, redirectURI: redirectURI)
        } catch {
            if error.code == .deviceRemoved { try? forget() }
            if error.code == .deviceRemoved || error.code == .deviceDisabled { loss = error }
            throw error
        }
    }

    /// The organization's removal (or disabling) of this computer, found at a PRT use in this
    /// process, once: what a command says before it ends ("… sign-ins show their pages again").
    public func takeLoss() -> DeviceIdentityError? {
        defer { loss = nil }
        return loss
    }

    /// The browser's SSO credential for the sign-in that handed out `nonce`.
    public func ssoCookie(nonce: String) throws(DeviceIdentityError) -> Secret {
        let kept = try registered()
        return DeviceIdentityClient(transport: transport, authority: kept.authority).ssoCookie(kept.prt, nonce: nonce)
    }

    /// Removes this computer from the organization (a registration token from the PRT) and
    /// forgets it here. A device the organization already removed is just forgotten.
    public func remove() async throws(DeviceIdentityError) {
        let kept = try registered()
        let client = DeviceIdentityClient(transport: transport, authority: kept.authority)
        do {
            let token = try await client.tokens(
                from: kept.prt, clientID: DeviceIdentityClient.brokerClientID,
                scope: "\(DeviceIdentityClient.registrationResource)/.default")
            try await client.remove(kept.registration, accessToken: token.accessToken)
        } catch  where error.code == .deviceRemoved {
            // Gone there already.
        }
        try forget()
        logger.info("device removed", metadata: ["deviceId": "\(kept.registration.deviceID)"])
    }

    // MARK: What is kept

    private func registered() throws(DeviceIdentityError) -> Kept {
        guard let kept = try current() else {
            throw DeviceIdentityError(
                .notRegistered, "This computer is not registered with an organization: `sesame device register` does it.")
        }
        return kept
    }

    private func current() throws(DeviceIdentityError) -> Kept? {
        if loaded { return kept }
        let secret: Secret?
        do { secret = try storage.load() } catch {
            throw DeviceIdentityError(.storage, "The device's registration could not be read from \(storage.location): \(error)")
        }
        kept = try secret.map(Kept.init(decoding:))
        loaded = true
        return kept
    }

    private func keep(_ value: Kept) throws(DeviceIdentityError) {
        do { try storage.save(value.encoded) } catch {
            throw DeviceIdentityError(.storage, "The device's registration could not be kept in \(storage.location): \(error)")
        }
        kept = value
        loaded = true
    }

    private func forget() throws(DeviceIdentityError) {
        do { try storage.clear() } catch {
            throw DeviceIdentityError(.storage, "The device's registration could not be removed from \(storage.location): \(error)")
        }
        kept = nil
        loaded = true
    }
}
