import FoundationEssentials

extension DeviceIdentity {
    /// What is kept of a registration, as one secret: the registration, the authority it was
    /// made at, the keys (sealed by the storage), the PRT and its session key.
    struct Kept: Sendable {
        var registration: DeviceRegistration
        var authority: URL
        var keys: SoftwareDeviceKeys
        var prt: PrimaryRefreshToken
        /// When the PRT was issued or last renewed.
        var primaryRefreshTokenIssued: Date
        /// The registering user's object id and tenant id (what the broker names the account by).
        var userObjectID: String?
        var tenantID: String?

        init(registration: DeviceRegistration, authority: URL, keys: SoftwareDeviceKeys, prt: PrimaryRefreshToken, issued: Date) {
            self.registration = registration
            self.authority = authority
            self.keys = keys
            self.prt = prt
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
            var keys: String
            var primaryRefreshToken: String
            var sessionKey: String
            var expires: Double
            var issued: Double
            var userObjectID: String?
            var tenantID: String?
        }

        var encoded: Secret {
            let form = Form(
                version: 1, deviceID: registration.deviceID, certificate: registration.certificate.base64EncodedString(),
                userPrincipalName: registration.userPrincipalName, endpoint: registration.endpoint, authority: authority,
                keys: keys.exported.revealed, primaryRefreshToken: prt.token.revealed, sessionKey: prt.sessionKeyHex.revealed,
                expires: prt.expiresAt.timeIntervalSince1970, issued: primaryRefreshTokenIssued.timeIntervalSince1970,
                userObjectID: userObjectID, tenantID: tenantID)
            return Secret(String(decoding: (try? JSONEncoder().encode(form)) ?? Data(), as: UTF8.self))
        }

        /// Reads a kept form; anything else is an error that says what to do (it is never guessed at).
        init(decoding secret: Secret) throws(DeviceIdentityError) {
            let unreadable = DeviceIdentityError(
                .storage, "The kept device registration cannot be read: run `sesame device remove`, then register again.")
            guard secret.revealed.utf8.count <= 64 * 1024,
                let form = try? JSONDecoder().decode(Form.self, from: Data(secret.revealed.utf8)),
                form.version == 1, let certificate = Data(base64Encoded: form.certificate), form.sessionKey.count == 64,
                let sessionKey = Self.bytes(hex: form.sessionKey), form.expires.isFinite, form.issued.isFinite
            else { throw unreadable }
            registration = DeviceRegistration(
                deviceID: form.deviceID, certificate: certificate, userPrincipalName: form.userPrincipalName, endpoint: form.endpoint)
            authority = form.authority
            keys = try SoftwareDeviceKeys(exported: Secret(form.keys))
            prt = PrimaryRefreshToken(
                token: Secret(form.primaryRefreshToken), sessionKey: sessionKey, expiresAt: Date(timeIntervalSince1970: form.expires),
                deviceID: form.deviceID)
            primaryRefreshTokenIssued = Date(timeIntervalSince1970: form.issued)
            let guid = { (text: String?) in text.flatMap { UUID(uuidString: $0) == nil ? nil : $0 } }
            userObjectID = guid(form.userObjectID)
            tenantID = guid(form.tenantID)
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
}
