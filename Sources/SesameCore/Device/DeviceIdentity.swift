import Crypto
import FoundationEssentials
import Logging

/// Where a device identity is kept: one secret (the registration, its keys, the PRT and its
/// session key), in the Secret Service — never a file.
public protocol DeviceIdentityStorage: Sendable {
    /// Where it is kept, as `sesame doctor` names it.
    var location: String { get }
    func load() throws -> Secret?
    /// Keeps `value`, and changes ``version()`` for every process.
    func save(_ value: Secret) throws
    /// Removes what is kept, and changes ``version()`` for every process.
    func clear() throws
    /// A cheap stamp of what is kept, read without the keyring: any process's ``save(_:)`` or
    /// ``clear()`` changes it, so a copy read under a stamp serves while the stamp holds (and its
    /// age limit, for a keyring item a person deletes without stamping). `nil`: read every time.
    func version() -> StoredVersion?
}

extension DeviceIdentityStorage {
    /// The storage cannot tell: every use reads it.
    public func version() -> StoredVersion? { nil }
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
        /// That user's object id (`oid`) and tenant id (`tid`), when known (registrations kept
        /// before they were recorded have neither).
        public let userObjectID: String?
        public let tenantID: String?
        /// The sign-in service it is registered with (`https://login.microsoftonline.com`).
        public let authority: URL
        public let keyStore: String
        /// Where the keys are and what is kept of them, in words.
        public let keysKept: String
        public let storage: String
        /// When the PRT was issued or last renewed; it is renewed once ``renewalAge`` has passed.
        public let primaryRefreshTokenIssued: Date
        public let primaryRefreshTokenExpires: Date
    }

    private let storage: any DeviceIdentityStorage
    /// Where new keys are made (the first), and every store kept keys are read back from.
    private let keyStores: [any DeviceKeyStore]
    private let transport: any HTTPTransport
    private let logger: Logger
    private let now: @Sendable () -> Date
    private var kept: KeptRegistration?
    /// What ``kept`` was read (or written) from: the storage's stamp and when, and the kept
    /// form's digest (a stamp that moved on a write of the same form decodes nothing again).
    /// `nil`: read at the next use.
    private var read: (version: StoredVersion?, at: ContinuousClock.Instant, digest: SHA256.Digest)?
    /// Why the registration was found gone (removed or disabled in the organization) in this
    /// process and not yet said: ``takeLoss()``.
    private var loss: DeviceIdentityError?

    /// A PRT in use is renewed when this much of its life has passed (Windows: four hours).
    public static let renewalAge: TimeInterval = 4 * 3600

    public init(
        storage: any DeviceIdentityStorage, keyStores: [any DeviceKeyStore] = [SoftwareDeviceKeyStore()], transport: any HTTPTransport,
        logger: Logger = Logger(label: "sesame.device"), now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.storage = storage
        self.keyStores = keyStores.isEmpty ? [SoftwareDeviceKeyStore()] : keyStores
        self.transport = transport
        self.logger = logger
        self.now = now
    }

    /// The registration, when this computer has one.
    public func status() throws(DeviceIdentityError) -> Status? {
        guard let kept = try current() else { return nil }
        return Status(
            deviceID: kept.registration.deviceID, userPrincipalName: kept.registration.userPrincipalName,
            userObjectID: kept.userObjectID, tenantID: kept.tenantID, authority: kept.authority,
            keyStore: kept.keys.storeName, keysKept: kept.keys.whereKept(storage: storage.location),
            storage: storage.location, primaryRefreshTokenIssued: kept.primaryRefreshTokenIssued,
            primaryRefreshTokenExpires: kept.expiresAt)
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

    /// Registers this computer (see ``register(authority:tenant:displayName:osVersion:using:)``),
    /// the user signing in as `signIn` says. `tenant` `organizations` or `common`: the user's own.
    public func register(
        authority: URL, tenant: String, displayName: String, osVersion: String, signIn: RegistrationSignIn
    ) async throws(DeviceIdentityError) -> DeviceRegistration {
        let root = DeviceIdentityClient(transport: transport, authority: authority)
        let tokens = try await BrokerRegistrationSignIn(transport: transport, logger: logger, now: now).tokens(
            authority: authority, root: root.authority, signIn: signIn)
        let user = Self.user(of: tokens.accessToken)
        let tenant = ["organizations", "common"].contains(tenant.lowercased()) ? user.tenantID ?? tenant : tenant
        guard let refreshToken = tokens.refreshToken else {
            throw DeviceIdentityError(.invalidResponse, "The sign-in for the registration gave no refresh token.")
        }
        let keys = try await keyStores[0].makeKeys()
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
        let kept: KeptRegistration
        do {
            kept = try KeptRegistration(
                registration: registration, authority: root.authority, keys: keys, prt: prt, issued: now(), user: user)
        } catch {
            try? await root.remove(registration, accessToken: tokens.accessToken)
            throw error
        }
        try keep(kept)
        logger.info("device registered", metadata: ["deviceId": "\(registration.deviceID)"])
        return registration
    }

    /// The `oid` and `tid` claims of a token just received from the token endpoint (read, not
    /// checked: they name where to enrol and whose registration it is; the enrolment checks the
    /// token itself). Each only when it is a GUID.
    private static func user(of token: Secret) -> (objectID: String?, tenantID: String?) {
        guard let claims = (try? JSONWebToken(compact: token))?.claims else { return (nil, nil) }
        let guid = { (name: String) in claims[name]?.stringValue.flatMap { UUID(uuidString: $0) == nil ? nil : $0.lowercased() } }
        return (guid("oid"), guid("tid"))
    }

    // MARK: Using the PRT

    /// Tokens for `clientID` (any app the organization knows), from the PRT: no page; the device
    /// is in them. A device the organization removed is forgotten here, and said so.
    public func tokens(clientID: String, scope: String, redirectURI: String? = nil) async throws(DeviceIdentityError) -> TokenResponse {
        var kept = try registered()
        let client = DeviceIdentityClient(transport: transport, authority: kept.authority)
        do throws(DeviceIdentityError) {
            if now().timeIntervalSince(kept.primaryRefreshTokenIssued) > Self.renewalAge {
                let renewed = try await client.renew(try kept.prt())
                // Removed meanwhile (here, or by another program's `sesame device remove`): the
                // renewal must not write the registration back.
                guard try current()?.registration.deviceID == kept.registration.deviceID else { throw Self.notRegistered }
                kept.renew(to: renewed, at: now())
                try keep(kept)
            }
            return try await client.tokens(from: try kept.prt(), clientID: clientID, scope: scope, redirectURI: redirectURI)
        } catch {
            if error.code == .deviceRemoved { try? forget() }
            if [.deviceRemoved, .deviceDisabled, .keysUnreadable].contains(error.code) { loss = error }
            throw error
        }
    }

    /// The organization's removal (or disabling) of this computer, or its keys found unusable (a
    /// TPM away), found at a PRT use in this process, once: what a command says before it ends ("… sign-ins show their pages again").
    public func takeLoss() -> DeviceIdentityError? {
        defer { loss = nil }
        return loss
    }

    /// The browser's SSO credential for the sign-in that handed out `nonce`.
    public func ssoCookie(nonce: String) throws(DeviceIdentityError) -> Secret {
        let kept = try registered()
        return DeviceIdentityClient(transport: transport, authority: kept.authority).ssoCookie(try kept.prt(), nonce: nonce)
    }

    /// The browser's SSO credential (`x-ms-RefreshTokenCredential`) for a request to `ssoURL`: for
    /// the `sso_nonce` Entra put in it, or, with none, a nonce the service hands out now. Only for
    /// the sign-in service this computer is registered with: its scheme, host and port (a cookie
    /// for `http://` would travel in clear text to whoever answers there).
    public func ssoCookie(for ssoURL: URL) async throws(DeviceIdentityError) -> Secret {
        let kept = try registered()
        guard ssoURL.scheme?.lowercased() == kept.authority.scheme?.lowercased(),
            ssoURL.host?.lowercased() == kept.authority.host?.lowercased(), ssoURL.port == kept.authority.port
        else {
            throw DeviceIdentityError(
                .refused, "This computer's sign-in cookie is only for \(Self.origin(of: kept.authority)), not \(Self.origin(of: ssoURL)).")
        }
        let client = DeviceIdentityClient(transport: transport, authority: kept.authority)
        let given = URLComponents(url: ssoURL, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "sso_nonce" }?.value
        let nonce: String
        if let given, !given.isEmpty, given.utf8.count < 4096 { nonce = given } else { nonce = try await client.nonce() }
        return client.ssoCookie(try kept.prt(), nonce: nonce)
    }

    /// Removes this computer from the organization (a registration token from the PRT) and
    /// forgets it here. A device the organization already removed is just forgotten.
    public func remove() async throws(DeviceIdentityError) {
        let kept = try registered()
        let prt: PrimaryRefreshToken
        do { prt = try kept.prt() } catch {
            // Keys that cannot be used (a TPM cleared, replaced or away) cannot ask for the removal.
            try forget()
            throw DeviceIdentityError(
                .keysUnreadable,
                "\(error.message) Sesame has forgotten the registration here; remove the device in your organization too "
                    + "(My Account, Devices: https://myaccount.microsoft.com/device-list).")
        }
        let client = DeviceIdentityClient(transport: transport, authority: kept.authority)
        do {
            let token = try await client.tokens(
                from: prt, clientID: DeviceIdentityClient.brokerClientID,
                scope: "\(DeviceIdentityClient.registrationResource)/.default")
            try await client.remove(kept.registration, accessToken: token.accessToken)
        } catch  where error.code == .deviceRemoved {
            // Gone there already.
        }
        try forget()
        logger.info("device removed", metadata: ["deviceId": "\(kept.registration.deviceID)"])
    }

    /// `scheme://host[:port]`, what a refusal names (never the path or query, which may carry a nonce).
    private static func origin(of url: URL) -> String {
        "\(url.scheme ?? "?")://\(url.host ?? "?")" + (url.port.map { ":\($0)" } ?? "")
    }

    // MARK: What is kept

    private static let notRegistered = DeviceIdentityError(
        .notRegistered, "This computer is not registered with an organization: `sesame device register` does it.")

    private func registered() throws(DeviceIdentityError) -> KeptRegistration {
        guard let kept = try current() else { throw Self.notRegistered }
        return kept
    }

    /// The registration as kept now. Another process registers or removes this computer
    /// (`sesame device register` while the service runs): its write moves the storage's stamp,
    /// and the next use here reads it — a removed registration's keys and PRT leave this
    /// process's memory then, not at its restart.
    private func current() throws(DeviceIdentityError) -> KeptRegistration? {
        let version = storage.version()
        if let read, let version, read.version == version, version.maximumAge.map({ read.at.duration(to: .now) < $0 }) ?? true {
            return kept
        }
        let secret: Secret?
        do { secret = try storage.load() } catch {
            throw DeviceIdentityError(.storage, "The device's registration could not be read from \(storage.location): \(error)")
        }
        let digest = SHA256.hash(data: Data((secret?.revealed ?? "").utf8))
        if let read, read.digest == digest {
            self.read = (version, .now, digest)
            return kept
        }
        // Forgotten before it is read anew: a registration that cannot be read is not kept either.
        kept = nil
        self.read = nil
        kept = try secret.map { (secret) throws(DeviceIdentityError) in try KeptRegistration(decoding: secret, stores: keyStores) }
        self.read = (version, .now, digest)
        return kept
    }

    private func keep(_ value: KeptRegistration) throws(DeviceIdentityError) {
        let encoded = value.encoded
        let version = storage.version()
        do { try storage.save(encoded) } catch {
            throw DeviceIdentityError(.storage, "The device's registration could not be kept in \(storage.location): \(error)")
        }
        kept = value
        // The stamp as it was before this write: the write moved it, so the next use reads once
        // (and finds this form's digest: nothing decoded again).
        read = (version, .now, SHA256.hash(data: Data(encoded.revealed.utf8)))
    }

    private func forget() throws(DeviceIdentityError) {
        do { try storage.clear() } catch {
            throw DeviceIdentityError(.storage, "The device's registration could not be removed from \(storage.location): \(error)")
        }
        kept = nil
        read = nil
    }
}
