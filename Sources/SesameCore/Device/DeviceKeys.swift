import Crypto
import Dispatch
import FoundationEssentials
import SwiftASN1
import X509
import _CryptoExtras

/// The two keys a registered device holds ([MS-DVRJ], [MS-OAPXBC]): the **device key**, whose
/// certificate the organization issues and which signs the request for a Primary Refresh Token,
/// and the **transport key**, to which the service encrypts the PRT's session key. Neither ever
/// leaves the device; a key store (software keys sealed in the Secret Service, or a TPM) keeps them.
public protocol DeviceKeys: Sendable {
    /// Where the keys live, as `sesame doctor` names it (`software`, `tpm`): the name of the
    /// ``DeviceKeyStore`` that reads ``sealed`` back.
    var storeName: String { get }
    /// Where the keys live and what is kept of them, in words (`sesame doctor`, `sesame device
    /// status`): "software keys, kept in the Secret Service".
    func whereKept(storage: String) -> String
    /// What the device identity's storage keeps of the keys (a secret: never a file, never a
    /// log): the keys themselves for software keys, the TPM's encrypted blobs for a TPM's.
    var sealed: Secret { get }
    /// A PKCS#10 certificate request (DER) for the device key, with `subject` as its only name.
    func certificateRequest(commonName: String) throws -> Data
    /// The transport key's public half as Windows sends it (`TransportKey`): a BCRYPT RSA1 blob.
    var transportKeyBlob: Data { get }
    /// RS256 (RSASSA-PKCS1-v1_5, SHA-256) over `data` with the device key.
    func sign(_ data: Data) throws -> Data
    /// RSA-OAEP (SHA-1, as the service encrypts) decryption with the transport key.
    func decrypt(_ data: Data) throws -> Data
    /// The PRT's session key sealed by the key store (a TPM seals it to itself), or nil when the
    /// device identity's storage alone keeps it (software keys: the Secret Service).
    func seal(sessionKey: Data) throws -> Data?
    /// A session key ``seal(sessionKey:)`` sealed.
    func unseal(sessionKey sealed: Data) throws -> Data
}

extension DeviceKeys {
    public func whereKept(storage: String) -> String { "\(storeName) keys, kept in the \(storage)" }
    public func seal(sessionKey: Data) throws -> Data? { nil }
    public func unseal(sessionKey sealed: Data) throws -> Data {
        throw DeviceIdentityError(.keysUnreadable, "Keys kept in \(storeName) do not seal the session key.")
    }
}

/// Where device keys are made and read back from: software keys sealed in the Secret Service,
/// or a TPM.
public protocol DeviceKeyStore: Sendable {
    /// The name ``DeviceKeys/storeName`` gives keys from here.
    var name: String { get }
    /// New device and transport keys (slow: two RSA-2048 keys).
    func makeKeys() async throws(DeviceIdentityError) -> any DeviceKeys
    /// Keys as their ``DeviceKeys/sealed`` form was kept.
    func keys(sealed: Secret) throws(DeviceIdentityError) -> any DeviceKeys
}

/// Keys made in this process and kept, sealed, by the Secret Service.
public struct SoftwareDeviceKeyStore: DeviceKeyStore {
    public init() {}
    public var name: String { "software" }
    public func makeKeys() async throws(DeviceIdentityError) -> any DeviceKeys {
        do { return try await SoftwareDeviceKeys.generate() } catch {
            throw DeviceIdentityError(.keysUnreadable, "The device's keys could not be made: \(error)")
        }
    }
    public func keys(sealed: Secret) throws(DeviceIdentityError) -> any DeviceKeys { try SoftwareDeviceKeys(exported: sealed) }
}

/// Device and transport keys made and held in this process (RSA 2048), for a key store that
/// seals them elsewhere: ``exported`` is what it seals, ``init(exported:)`` reads it back.
public struct SoftwareDeviceKeys: DeviceKeys {
    private let deviceKey: _RSA.Signing.PrivateKey
    /// The transport key's PKCS#8 DER (swift-crypto's encryption key is not `Sendable`: it is
    /// read back for each decryption).
    private let transportKeyDER: Data
    private var transportKey: _RSA.Encryption.PrivateKey {
        get throws { try _RSA.Encryption.PrivateKey(derRepresentation: transportKeyDER) }
    }

    public var storeName: String { "software" }

    /// New keys, made off Swift's task threads: finding two 2048-bit RSA keys' primes takes
    /// seconds on a slow or busy machine, and a task thread held that long starves everything
    /// else in the process (as many task threads as cores: two on a small machine).
    public static func generate() async throws -> SoftwareDeviceKeys {
        try await withCheckedThrowingContinuation { continuation in
            keyMaking.async { continuation.resume(with: Result { try SoftwareDeviceKeys() }) }
        }
    }

    private static let keyMaking = DispatchQueue(label: "sesame.device-keys")

    /// New keys, made on the calling thread (``generate()`` keeps task threads free).
    public init() throws {
        deviceKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        transportKeyDER = try _RSA.Encryption.PrivateKey(keySize: .bits2048).derRepresentation
    }

    /// Keys as ``exported`` wrote them (two PKCS#8 PEM documents).
    public init(exported: Secret) throws(DeviceIdentityError) {
        let documents = exported.revealed.components(separatedBy: "-----END PRIVATE KEY-----")
            .map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }.map { $0 + "\n-----END PRIVATE KEY-----" }
        guard documents.count == 2, let device = try? _RSA.Signing.PrivateKey(pemRepresentation: documents[0]),
            let transport = try? _RSA.Encryption.PrivateKey(pemRepresentation: documents[1])
        else { throw DeviceIdentityError(.keysUnreadable, "The device's keys could not be read back from where they were kept.") }
        deviceKey = device
        transportKeyDER = transport.derRepresentation
    }

    public var sealed: Secret { exported }

    /// Both keys, PKCS#8 PEM, for a key store to seal (a secret: never a file, never a log).
    public var exported: Secret {
        Secret(deviceKey.pkcs8PEMRepresentation + "\n" + ((try? transportKey.pkcs8PEMRepresentation) ?? "") + "\n")
    }

    public func certificateRequest(commonName: String) throws -> Data {
        let request = try CertificateSigningRequest(
            version: .v1, subject: try DistinguishedName { CommonName(commonName) }, privateKey: Certificate.PrivateKey(deviceKey),
            attributes: CertificateSigningRequest.Attributes(), signatureAlgorithm: .sha256WithRSAEncryption)
        var serializer = DER.Serializer()
        try serializer.serialize(request)
        return Data(serializer.serializedBytes)
    }

    public var transportKeyBlob: Data {
        let primitives = try? transportKey.publicKey.getKeyPrimitives()
        return TransportKeyBlob.encode(modulus: primitives?.modulus ?? Data(), exponent: primitives?.publicExponent ?? Data())
    }

    public func sign(_ data: Data) throws -> Data {
        try deviceKey.signature(for: SHA256.hash(data: data), padding: .insecurePKCS1v1_5).rawRepresentation
    }

    public func decrypt(_ data: Data) throws -> Data {
        try transportKey.decrypt(data, padding: .PKCS1_OAEP)
    }
}

/// A PKCS#10 request (DER) for an RSA key held elsewhere (a TPM): the request's information is
/// made with the public key, then signed by `sign` (RS256 over those bytes).
public enum DeviceCertificateRequest {
    public static func make(commonName: String, modulus: Data, exponent: Data, sign: (Data) throws -> Data) throws -> Data {
        let publicKey = Certificate.PublicKey(try _RSA.Signing.PublicKey(n: modulus, e: exponent))
        let subject = try DistinguishedName { CommonName(commonName) }
        // The request's information as DER: serialized once with no signature, then signed.
        let unsigned = try CertificateSigningRequest(
            version: .v1, subject: subject, publicKey: publicKey, attributes: CertificateSigningRequest.Attributes(),
            signatureAlgorithm: .sha256WithRSAEncryption,
            signature: try Certificate.Signature(signatureAlgorithm: .sha256WithRSAEncryption, signatureBytes: ASN1BitString(bytes: [0])))
        var serializer = DER.Serializer()
        try serializer.serialize(unsigned)
        guard case .constructed(let parts) = try DER.parse(serializer.serializedBytes).content, let info = parts.first(where: { _ in true })
        else { throw DeviceIdentityError(.keysUnreadable, "The certificate request could not be made.") }
        let signature = try sign(Data(info.encodedBytes))
        let request = try CertificateSigningRequest(
            version: .v1, subject: subject, publicKey: publicKey, attributes: CertificateSigningRequest.Attributes(),
            signatureAlgorithm: .sha256WithRSAEncryption,
            signature: try Certificate.Signature(
                signatureAlgorithm: .sha256WithRSAEncryption, signatureBytes: ASN1BitString(bytes: ArraySlice(signature))))
        var signed = DER.Serializer()
        try signed.serialize(request)
        return Data(signed.serializedBytes)
    }
}

/// BCRYPT_RSAKEY_BLOB for a public key: `RSA1`, the bit length, the exponent's and the modulus'
/// lengths and two zero prime lengths (little-endian UInt32), then the exponent and the modulus
/// (big-endian), as Windows' `TransportKey` carries it.
public enum TransportKeyBlob {
    public static func encode(modulus: Data, exponent: Data) -> Data {
        let modulus = Data(modulus.drop { $0 == 0 })
        let exponent = Data(exponent.drop { $0 == 0 })
        func field(_ value: Int) -> Data {
            Data([UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24 & 0xFF)])
        }
        return Data("RSA1".utf8) + field(modulus.count * 8) + field(exponent.count) + field(modulus.count) + field(0) + field(0) + exponent
            + modulus
    }
}
