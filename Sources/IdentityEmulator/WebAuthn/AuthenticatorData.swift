import FoundationEssentials

/// The flags byte of authenticator data (WebAuthn Level 3 §6.1).
struct AuthenticatorFlags: OptionSet, Sendable, Equatable {
    let rawValue: UInt8
    /// UP: the user was present (touched the key, clicked).
    static let userPresent = AuthenticatorFlags(rawValue: 0x01)
    /// UV: the authenticator verified the user (PIN, biometric).
    static let userVerified = AuthenticatorFlags(rawValue: 0x04)
    /// BE: the credential may be backed up (a synced passkey).
    static let backupEligible = AuthenticatorFlags(rawValue: 0x08)
    /// BS: the credential is backed up now.
    static let backedUp = AuthenticatorFlags(rawValue: 0x10)
    /// AT: attested credential data follows the counter.
    static let attestedCredentialData = AuthenticatorFlags(rawValue: 0x40)
    /// ED: an extensions map ends the data.
    static let extensionData = AuthenticatorFlags(rawValue: 0x80)
}

/// Why authenticator data was refused.
enum AuthenticatorDataError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Shorter than the 37 bytes of rpIdHash, flags and counter, or cut inside what the flags announce.
    case truncated
    /// Bytes follow what the flags announce.
    case trailingBytes
    /// A credential id longer than 1023 bytes (§6.5.1).
    case credentialIDTooLong
    /// BS set without BE: a credential that cannot be backed up is said to be (§6.1.3).
    case backupStateWithoutEligibility
    case publicKey(COSEKeyError)
    /// The extensions (ED) are not a CBOR map.
    case extensions(CBORError)
    case extensionsNotAMap

    var description: String {
        switch self {
        case .truncated: "the authenticator data is cut short"
        case .trailingBytes: "bytes follow the authenticator data"
        case .credentialIDTooLong: "the credential id is longer than 1023 bytes"
        case .backupStateWithoutEligibility: "the authenticator data says backed up but not backup eligible"
        case .publicKey(let error): error.description
        case .extensions(let error): "the authenticator extensions are not CBOR: \(error)"
        case .extensionsNotAMap: "the authenticator extensions are not a map"
        }
    }
}

/// The attested credential data of a registration (§6.5.1): which authenticator model, which
/// credential, and its public key.
struct AttestedCredentialData: Sendable, Equatable {
    /// The authenticator model's AAGUID (16 bytes; all zero when not disclosed).
    let aaguid: UUID
    let credentialID: [UInt8]
    let publicKey: COSEKey
    /// The COSE_Key exactly as the authenticator encoded it: what the relying party stores.
    let publicKeyBytes: [UInt8]
}

/// Authenticator data (§6.1): `rpIdHash` (32) ‖ flags (1) ‖ signCount (4, big-endian) ‖
/// attested credential data (AT) ‖ extensions (ED).
struct AuthenticatorData: Sendable, Equatable {
    static let maximumSize = 16 * 1024

    let rpIDHash: [UInt8]
    let flags: AuthenticatorFlags
    let signCount: UInt32
    let attestedCredential: AttestedCredentialData?
    let extensions: CBORValue?
    /// The bytes as received: signatures cover them.
    let raw: [UInt8]

    init(_ bytes: [UInt8]) throws(AuthenticatorDataError) {
        guard bytes.count >= 37 else { throw .truncated }
        guard bytes.count <= Self.maximumSize else { throw .trailingBytes }
        raw = bytes
        rpIDHash = Array(bytes[0..<32])
        flags = AuthenticatorFlags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        if flags.contains(.backedUp) && !flags.contains(.backupEligible) { throw .backupStateWithoutEligibility }
        var offset = 37
        if flags.contains(.attestedCredentialData) {
            guard bytes.count - offset >= 18 else { throw .truncated }
            let aaguidBytes = Array(bytes[offset..<offset + 16])
            let length = Int(bytes[offset + 16]) << 8 | Int(bytes[offset + 17])
            offset += 18
            guard length <= 1023 else { throw .credentialIDTooLong }
            guard bytes.count - offset >= length else { throw .truncated }
            let credentialID = Array(bytes[offset..<offset + length])
            offset += length
            let keyValue: CBORValue
            let keyEnd: Int
            do { (keyValue, keyEnd) = try CBORDecoder.decodePrefix(bytes, from: offset) } catch {
                throw .publicKey(.cbor(error))
            }
            let key: COSEKey
            do { key = try COSEKey(value: keyValue) } catch { throw .publicKey(error) }
            attestedCredential = AttestedCredentialData(
                aaguid: UUID(uuid: Self.uuid(aaguidBytes)), credentialID: credentialID, publicKey: key,
                publicKeyBytes: Array(bytes[offset..<keyEnd]))
            offset = keyEnd
        } else {
            attestedCredential = nil
        }
        if flags.contains(.extensionData) {
            let value: CBORValue
            do { (value, offset) = try CBORDecoder.decodePrefix(bytes, from: offset) } catch { throw .extensions(error) }
            guard value.mapEntries != nil else { throw .extensionsNotAMap }
            extensions = value
        } else {
            extensions = nil
        }
        guard offset == bytes.count else { throw .trailingBytes }
    }

    static func uuid(_ b: [UInt8]) -> uuid_t {
        (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
    }
}
