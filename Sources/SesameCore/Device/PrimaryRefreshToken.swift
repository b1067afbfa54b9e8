import Crypto
import FoundationEssentials

/// A registered device, as the organization issued it.
public struct DeviceRegistration: Sendable, Equatable {
    /// `deviceId`: the certificate's subject.
    public let deviceID: String
    /// The device certificate (DER), signed by the organization's device CA.
    public let certificate: Data
    /// The user who registered it (`User.Upn`).
    public let userPrincipalName: String?
    /// The registration service's endpoint it was registered at (removal goes there).
    public let endpoint: URL
}

/// A Primary Refresh Token and its session key: what lets every later sign-in of the user on
/// this device be silent. Both are secrets; only their expiry and device show.
public struct PrimaryRefreshToken: Sendable, CustomStringConvertible {
    /// The PRT (`refresh_token` of the PRT response).
    public let token: Secret
    /// The session key (32 bytes, hex), decrypted with the transport key.
    let sessionKeyHex: Secret
    /// When the PRT expires unless renewed (`refresh_token_expires_in`).
    public let expiresAt: Date
    /// The device it is bound to.
    public let deviceID: String

    public init(token: Secret, sessionKey: Data, expiresAt: Date, deviceID: String) {
        self.token = token
        self.sessionKeyHex = Secret(sessionKey.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined())
        self.expiresAt = expiresAt
        self.deviceID = deviceID
    }

    /// The PRT a renewal returned: the same session key and device.
    func renewed(as token: Secret, expiresAt: Date) -> PrimaryRefreshToken {
        PrimaryRefreshToken(token: token, sessionKeyHex: sessionKeyHex, expiresAt: expiresAt, deviceID: deviceID)
    }

    private init(token: Secret, sessionKeyHex: Secret, expiresAt: Date, deviceID: String) {
        self.token = token
        self.sessionKeyHex = sessionKeyHex
        self.expiresAt = expiresAt
        self.deviceID = deviceID
    }

    /// The session key, for the one function that signs or decrypts with it.
    var sessionKey: SymmetricKey {
        var bytes = [UInt8]()
        var index = sessionKeyHex.revealed.startIndex
        while index < sessionKeyHex.revealed.endIndex {
            let next = sessionKeyHex.revealed.index(index, offsetBy: 2)
            bytes.append(UInt8(sessionKeyHex.revealed[index..<next], radix: 16) ?? 0)
            index = next
        }
        return SymmetricKey(data: bytes)
    }

    public var description: String { "PrimaryRefreshToken(device: \(deviceID), expires: \(expiresAt))" }
}
