import Crypto
import FoundationEssentials

/// The directory's devices and what was issued to them: registered devices, the nonces handed
/// out (`srv_challenge`), and Primary Refresh Tokens with their session keys. PRTs are kept only
/// as SHA-256 digests; devices and PRTs survive a restart when a state directory is given.
actor DeviceRegistry {
    /// A Primary Refresh Token: the sign-in it stands for (with the device), its session key.
    struct PrimaryRefreshToken: Codable, Sendable {
        var grant: Grant
        /// The session key (32 bytes): the service's copy, to check what the device signs with it.
        var sessionKey: Data
        var issuedAt: Date
        var expiresAt: Date
    }

    /// What a presented PRT is.
    enum Outcome: Sendable {
        case valid(PrimaryRefreshToken, RegisteredDevice)
        /// Not a PRT this service issued (or one revoked with its device).
        case unknown
        case expired
        /// Its device is no longer in the directory (AADSTS700003).
        case deviceGone(String)
        /// Its device was disabled by an administrator (AADSTS135011).
        case deviceDisabled(String)
    }

    /// A nonce is good for five minutes.
    static let nonceLifetime: TimeInterval = 300
    /// A PRT is valid for 14 days and renewed while in use (§3.1.5.1.3.4; Entra's documentation).
    static let lifetime: TimeInterval = 14 * 86_400

    private struct Persisted: Codable {
        var devices: [String: RegisteredDevice] = [:]
        /// SHA-256 of the PRT (base64url) → the PRT.
        var tokens: [String: PrimaryRefreshToken] = [:]
    }

    private let file: URL?
    private var persisted = Persisted()
    private var nonces: [String: Date] = [:]
    private(set) var warnings: [String] = []

    init(stateDirectory: URL?) {
        file = stateDirectory?.appending(path: "devices.json")
        if let file {
            let (value, warning) = StateFile.read(Persisted.self, from: file)
            if let value { persisted = value }
            if let warning { warnings.append(warning) }
        }
    }

    // MARK: Nonces

    /// A new nonce (`srv_challenge`'s `Nonce`), base64url.
    func issueNonce(now: Date) -> String {
        nonces = nonces.filter { $0.value > now }
        let nonce = Identifiers.opaque(bytes: 48)
        nonces[nonce] = now + Self.nonceLifetime
        return nonce
    }

    /// Whether `nonce` was handed out here and has not expired.
    func isLive(nonce: String?, now: Date) -> Bool {
        guard let nonce, let expires = nonces[nonce] else { return false }
        return expires > now
    }

    // MARK: Devices

    func register(_ device: RegisteredDevice) throws {
        persisted.devices[device.deviceID.lowercased()] = device
        try save()
    }

    /// The device with this `deviceId` (any case).
    func device(id deviceID: String) -> RegisteredDevice? { persisted.devices[deviceID.lowercased()] }

    func device(objectID: String) -> RegisteredDevice? { persisted.devices.values.first { $0.objectID.equalsIgnoringCase(objectID) } }

    /// `userID`'s devices, the oldest first.
    func devices(ownedBy userID: String) -> [RegisteredDevice] {
        persisted.devices.values.filter { $0.ownerID == userID }.sorted { $0.registeredAt < $1.registeredAt }
    }

    /// Removes a device: every PRT issued to it answers "device not found" from now on (its
    /// records stay until they expire, so a client is told why rather than "unknown").
    @discardableResult
    func remove(deviceID: String) throws -> RegisteredDevice? {
        guard let device = device(id: deviceID) else { return nil }
        persisted.devices[device.deviceID.lowercased()] = nil
        try save()
        return device
    }

    /// Whether the device a grant names still stands: in the directory (else AADSTS700003) and
    /// enabled (else AADSTS135011), the errors Entra answers a PRT, or a token from its sign-in, with.
    func checkStanding(of deviceID: String, tenant: String) throws(ServiceError) {
        guard let device = device(id: deviceID) else { throw RefusalErrors.deviceNotFound(deviceID, tenant: tenant) }
        guard device.accountEnabled else { throw RefusalErrors.deviceDisabled }
    }

    func setEnabled(_ enabled: Bool, deviceID: String) throws {
        guard let device = device(id: deviceID) else { return }
        persisted.devices[device.deviceID.lowercased()]?.accountEnabled = enabled
        try save()
    }

    // MARK: Primary Refresh Tokens

    /// A new PRT for `grant` (which names its device) with `sessionKey`; the device's last sign-in
    /// is now. The PRT is opaque and contains a `.`, as Entra's do (clients rely on it).
    func issue(for grant: Grant, sessionKey: Data, now: Date) throws -> String {
        let token = "1.AV" + Identifiers.opaque(bytes: 48) + "." + Identifiers.opaque(bytes: 96)
        persisted.tokens = persisted.tokens.filter { $0.value.expiresAt > now }
        persisted.tokens[Self.digest(token)] = PrimaryRefreshToken(
            grant: grant, sessionKey: sessionKey, issuedAt: now, expiresAt: now + Self.lifetime)
        if let deviceID = grant.deviceID?.lowercased() { persisted.devices[deviceID]?.lastSignIn = now }
        try save()
        return token
    }

    /// What a presented PRT is; a valid one marks its device as signed in now.
    func use(_ token: String, now: Date) -> Outcome {
        guard token.utf8.count <= 4096, let record = persisted.tokens[Self.digest(token)] else { return .unknown }
        guard record.expiresAt > now else { return .expired }
        guard let deviceID = record.grant.deviceID?.lowercased(), let device = persisted.devices[deviceID] else {
            return .deviceGone(record.grant.deviceID ?? "")
        }
        guard device.accountEnabled else { return .deviceDisabled(deviceID) }
        persisted.devices[deviceID]?.lastSignIn = now
        return .valid(record, device)
    }

    private static func digest(_ token: String) -> String { Base64URL.encode(SHA256.hash(data: Data(token.utf8))) }

    private func save() throws {
        guard let file else { return }
        try StateFile.writeAtomically(try JSONEncoder.state.encode(persisted), to: file)
    }
}
