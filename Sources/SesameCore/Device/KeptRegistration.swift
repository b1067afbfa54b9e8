import FoundationEssentials

/// What ``DeviceIdentity`` keeps of a registration, as one secret: the registration, the authority it was
/// made at, the keys (as their store sealed them), the PRT and its session key (sealed by the
/// key store when it can: a TPM's keys seal it to the TPM).
struct KeptRegistration: Sendable {
    let registration: DeviceRegistration
    let authority: URL
    let keys: any DeviceKeys
    /// The PRT (`refresh_token`) and when it expires; its session key is ``sessionKey``.
    private(set) var primaryRefreshToken: Secret
    private(set) var expiresAt: Date
    /// The PRT's session key as kept: as it is (software keys: the storage seals it), or sealed
    /// by the key store (a TPM), unsealed only when the PRT is used (``prt()``).
    let sessionKey: SessionKey
    enum SessionKey {
        case plain(Data)
        case sealed(Data)
    }
    /// When the PRT was issued or last renewed.
    private(set) var primaryRefreshTokenIssued: Date
    /// The registering user's object id and tenant id (what the broker names the account by).
    let userObjectID: String?
    let tenantID: String?

    init(
        registration: DeviceRegistration, authority: URL, keys: any DeviceKeys, prt: PrimaryRefreshToken, issued: Date,
        user: (objectID: String?, tenantID: String?)
    ) throws(DeviceIdentityError) {
        (userObjectID, tenantID) = user
        self.registration = registration
        self.authority = authority
        self.keys = keys
        primaryRefreshToken = prt.token
        expiresAt = prt.expiresAt
        primaryRefreshTokenIssued = issued
        let plain = Self.bytes(hex: prt.sessionKeyHex.revealed) ?? Data()
        do { sessionKey = try keys.seal(sessionKey: plain).map(SessionKey.sealed) ?? .plain(plain) } catch {
            throw Self.keysError(error)
        }
    }

    /// The PRT with its session key (unsealed by the key store: a TPM must be there).
    func prt() throws(DeviceIdentityError) -> PrimaryRefreshToken {
        let key: Data
        switch sessionKey {
        case .plain(let plain): key = plain
        case .sealed(let sealed):
            do { key = try keys.unseal(sessionKey: sealed) } catch { throw Self.keysError(error) }
            guard key.count == 32 else { throw DeviceIdentityError(.keysUnreadable, "The unsealed session key is not 32 bytes.") }
        }
        return PrimaryRefreshToken(token: primaryRefreshToken, sessionKey: key, expiresAt: expiresAt, deviceID: registration.deviceID)
    }

    /// The PRT a renewal gave (the same session key).
    mutating func renew(to prt: PrimaryRefreshToken, at issued: Date) {
        primaryRefreshToken = prt.token
        expiresAt = prt.expiresAt
        primaryRefreshTokenIssued = issued
    }

    /// The kept form's fields (version 1). Secrets are written only here, spelled out.
    private struct Form: Codable {
        var version: Int
        var deviceID: String
        var certificate: String
        var userPrincipalName: String?
        var endpoint: URL
        var authority: URL
        /// Where the keys are (``DeviceKeyStore/name``); absent: `software`.
        var keyStore: String?
        var keys: String
        var primaryRefreshToken: String
        /// The session key, hex, when no key store sealed it; else `sealedSessionKey`, base64.
        var sessionKey: String?
        var sealedSessionKey: String?
        var expires: Double
        var issued: Double
        var userObjectID: String?
        var tenantID: String?
    }

    var encoded: Secret {
        let form = Form(
            version: 1, deviceID: registration.deviceID, certificate: registration.certificate.base64EncodedString(),
            userPrincipalName: registration.userPrincipalName, endpoint: registration.endpoint, authority: authority,
            keyStore: keys.storeName, keys: keys.sealed.revealed, primaryRefreshToken: primaryRefreshToken.revealed,
            sessionKey: sessionKey.hex, sealedSessionKey: sessionKey.sealedBase64, expires: expiresAt.timeIntervalSince1970,
            issued: primaryRefreshTokenIssued.timeIntervalSince1970,
            userObjectID: userObjectID, tenantID: tenantID)
        return Secret(String(decoding: (try? JSONEncoder().encode(form)) ?? Data(), as: UTF8.self))
    }

    /// Reads a kept form, its keys by the store of their name among `stores`; anything else is
    /// an error that says what to do (it is never guessed at).
    init(decoding secret: Secret, stores: [any DeviceKeyStore]) throws(DeviceIdentityError) {
        let unreadable = DeviceIdentityError(
            .storage, "The kept device registration cannot be read: run `sesame device remove`, then register again.")
        guard secret.revealed.utf8.count <= 64 * 1024,
            let form = try? JSONDecoder().decode(Form.self, from: Data(secret.revealed.utf8)),
            form.version == 1, let certificate = Data(base64Encoded: form.certificate), form.expires.isFinite, form.issued.isFinite
        else { throw unreadable }
        let storeName = form.keyStore ?? "software"
        guard let store = stores.first(where: { $0.name == storeName }) else {
            throw DeviceIdentityError(.keysUnreadable, "This computer's keys are kept in \(storeName), which this program cannot open.")
        }
        keys = try store.keys(sealed: Secret(form.keys))
        if let sealed = form.sealedSessionKey {
            guard let blob = Data(base64Encoded: sealed), blob.count < 4096 else { throw unreadable }
            sessionKey = .sealed(blob)
        } else {
            guard let hex = form.sessionKey, hex.count == 64, let bytes = Self.bytes(hex: hex) else { throw unreadable }
            sessionKey = .plain(bytes)
        }
        registration = DeviceRegistration(
            deviceID: form.deviceID, certificate: certificate, userPrincipalName: form.userPrincipalName, endpoint: form.endpoint)
        authority = form.authority
        primaryRefreshToken = Secret(form.primaryRefreshToken)
        expiresAt = Date(timeIntervalSince1970: form.expires)
        primaryRefreshTokenIssued = Date(timeIntervalSince1970: form.issued)
        let guid = { (text: String?) in text.flatMap { UUID(uuidString: $0) == nil ? nil : $0 } }
        userObjectID = guid(form.userObjectID)
        tenantID = guid(form.tenantID)
    }

    private static func keysError(_ error: any Error) -> DeviceIdentityError {
        error as? DeviceIdentityError ?? DeviceIdentityError(.keysUnreadable, "The device's keys could not be used: \(error)")
    }

    private static func bytes(hex: String) -> Data? {
        var bytes = Data()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) ?? hex.endIndex
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}

extension KeptRegistration.SessionKey {
    /// The kept form's `sessionKey` (hex) for a key kept as it is.
    var hex: String? {
        guard case .plain(let key) = self else { return nil }
        return key.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
    /// The kept form's `sealedSessionKey` (base64) for a sealed one.
    var sealedBase64: String? {
        guard case .sealed(let blob) = self else { return nil }
        return blob.base64EncodedString()
    }
}
