import Crypto
import FoundationEssentials
import SwiftASN1
import X509
import _CryptoExtras

/// The organization's device certificate authority ("MS-Organization-Access" in Entra): it signs
/// each registered device's certificate, whose subject is `CN=<deviceId>` alone ([MS-DVRJ]
/// 3.1.5.1.1.3), and later tells a certificate it issued from any other. Its key lives in the
/// state directory (owner-only), so devices stay registered across restarts.
struct DeviceAuthority: Sendable {
    private let key: P256.Signing.PrivateKey
    let certificate: Certificate

    /// Device certificates live ten years, as Entra's do.
    static let certificateLifetime: TimeInterval = 10 * 365 * 86_400

    static func loadOrCreate(in directory: URL?, now: Date) throws -> DeviceAuthority {
        let keyFile = directory?.appending(path: "device-ca-key.pem")
        let certificateFile = directory?.appending(path: "device-ca-certificate.pem")
        if let keyFile, let certificateFile, let keyPEM = try? String(contentsOf: keyFile, encoding: .utf8),
            let certificatePEM = try? String(contentsOf: certificateFile, encoding: .utf8)
        {
            do {
                return DeviceAuthority(
                    key: try P256.Signing.PrivateKey(pemRepresentation: keyPEM), certificate: try Certificate(pemEncoded: certificatePEM))
            } catch {
                throw EmulatorConfigurationError(
                    "The device CA in \(keyFile.deletingLastPathComponent().path) cannot be read (\(error)); remove device-ca-*.pem "
                        + "to start over (every registered device must then register again).")
            }
        }
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("MS-Organization-Access") }
        let publicKey = Certificate.PublicKey(key.publicKey)
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: publicKey,
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(certificateLifetime + 365 * 86_400),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: publicKey)
            },
            issuerPrivateKey: .init(key))
        if let keyFile, let certificateFile {
            try StateFile.writeAtomically(Data(key.pemRepresentation.utf8), to: keyFile)
            try StateFile.writeAtomically(Data(try certificate.serializeAsPEM().pemString.utf8), to: certificateFile)
        }
        return DeviceAuthority(key: key, certificate: certificate)
    }

    /// The device's certificate for a PKCS#10 request (`CertificateRequest.Data`, DER): the
    /// request must be signed by the key it carries, an RSA key of 2048 bits or more or a P-256
    /// key; the certificate names `deviceID` only and is for client authentication.
    func issue(certificateRequest der: Data, deviceID: String, now: Date) throws(DeviceRegistrationError) -> Certificate {
        let request: CertificateSigningRequest
        do {
            request = try CertificateSigningRequest(derEncoded: Array(der))
        } catch {
            throw .badRequest("CertificateRequest.Data is not a PKCS#10 request in DER.")
        }
        guard request.publicKey.isValidSignature(request.signature, for: request) else {
            throw .badRequest("The certificate request is not signed by the key it carries.")
        }
        if let rsa = _RSA.Signing.PublicKey(request.publicKey) {
            guard rsa.keySizeInBits >= 2048 else { throw .badRequest("The device key must be RSA of 2048 bits or more, or P-256.") }
        } else if P256.Signing.PublicKey(request.publicKey) == nil {
            throw .badRequest("The device key must be RSA of 2048 bits or more, or P-256.")
        }
        do {
            return try Certificate(
                version: .v3, serialNumber: .init(), publicKey: request.publicKey,
                notValidBefore: now.addingTimeInterval(-300), notValidAfter: now.addingTimeInterval(Self.certificateLifetime),
                issuer: certificate.subject, subject: try DistinguishedName { CommonName(deviceID) },
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true, keyEncipherment: true))
                    try ExtendedKeyUsage([.clientAuth])
                    AuthorityKeyIdentifier(keyIdentifier: try certificate.extensions.subjectKeyIdentifier?.keyIdentifier)
                },
                issuerPrivateKey: .init(key))
        } catch {
            throw .badRequest("The device certificate could not be made: \(error)")
        }
    }

    /// The device a certificate (DER, as `x5c` carries it) was issued to, when this authority
    /// issued it and it is within its validity; nil for any other certificate.
    func deviceID(ofCertificate der: Data, now: Date) -> (deviceID: String, certificate: Certificate)? {
        guard der.count <= 16 * 1024, let presented = try? Certificate(derEncoded: Array(der)),
            presented.issuer == certificate.subject, certificate.publicKey.isValidSignature(presented.signature, for: presented),
            presented.notValidBefore <= now, now < presented.notValidAfter
        else { return nil }
        for name in presented.subject {
            for attribute in name where attribute.type == .RDNAttributeType.commonName {
                return (String(describing: attribute.value), presented)
            }
        }
        return nil
    }

    /// Whether `signature` over `input` is RS256 (or ES256) by the certificate's key.
    static func isValidSignature(_ signature: Data, of input: Data, by certificate: Certificate) -> Bool {
        if let rsa = _RSA.Signing.PublicKey(certificate.publicKey) {
            return rsa.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5)
        }
        if let ec = P256.Signing.PublicKey(certificate.publicKey), let raw = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        {
            return ec.isValidSignature(raw, for: SHA256.hash(data: input))
        }
        return false
    }

    /// The SHA-1 thumbprint Windows shows (`Certificate.Thumbprint`): upper-case hex.
    static func thumbprint(of certificate: Certificate) throws -> String {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return Insecure.SHA1.hash(data: serializer.serializedBytes).map { String($0, radix: 16).leftPadded(to: 2) }.joined().uppercased()
    }

    /// The certificate as DER.
    static func der(of certificate: Certificate) throws -> Data {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return Data(serializer.serializedBytes)
    }
}

/// The transport key a device sends at registration (`TransportKey`): a BCRYPT_RSAKEY_BLOB
/// (`RSA1`, as Windows and roadtx send it) or a JWK (`{"kty":"RSA","n","e"}`, as macOS and
/// Android send it), base64. The session key of every PRT is encrypted to it.
enum TransportKey {
    static func parse(_ base64: String) throws(DeviceRegistrationError) -> _RSA.Encryption.PublicKey {
        guard base64.utf8.count <= 8192, let bytes = Data(base64Encoded: base64) else {
            throw .badRequest("TransportKey is not base64.")
        }
        do {
            if bytes.starts(with: Data("RSA1".utf8)) { return try rsaBlob(Array(bytes)) }
            if let jwk = JSON.parseObject(bytes), jwk["kty"] as? String == "RSA", let n = jwk["n"] as? String, let e = jwk["e"] as? String,
                let modulus = Data(base64Encoded: n) ?? Base64URL.decode(n), let exponent = Data(base64Encoded: e) ?? Base64URL.decode(e)
            {
                return try key(modulus: modulus, exponent: exponent)
            }
        } catch let error as DeviceRegistrationError {
            throw error
        } catch {
            throw .badRequest("TransportKey is not an RSA public key: \(error)")
        }
        throw .badRequest("TransportKey is neither an RSA1 key blob nor an RSA JWK.")
    }

    /// BCRYPT_RSAKEY_BLOB: magic, bit length, exponent length, modulus length, two prime lengths
    /// (zero for a public key), each a little-endian UInt32; then the exponent and the modulus.
    private static func rsaBlob(_ bytes: [UInt8]) throws -> _RSA.Encryption.PublicKey {
        func field(_ offset: Int) -> Int {
            Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
        }
        guard bytes.count >= 24 else { throw DeviceRegistrationError.badRequest("The RSA1 transport key is truncated.") }
        let (exponentLength, modulusLength) = (field(8), field(12))
        guard (1...8).contains(exponentLength), (256...512).contains(modulusLength), bytes.count >= 24 + exponentLength + modulusLength
        else {
            throw DeviceRegistrationError.badRequest("The RSA1 transport key's lengths do not fit (2048 to 4096 bits).")
        }
        return try key(
            modulus: Data(bytes[(24 + exponentLength)..<(24 + exponentLength + modulusLength)]),
            exponent: Data(bytes[24..<(24 + exponentLength)]))
    }

    private static func key(modulus: Data, exponent: Data) throws -> _RSA.Encryption.PublicKey {
        let key = try _RSA.Encryption.PublicKey(n: modulus, e: exponent)
        guard key.keySizeInBits >= 2048 else {
            throw DeviceRegistrationError.badRequest("The transport key must be RSA of 2048 bits or more.")
        }
        return key
    }
}

/// Why the device registration service refuses a request: its JSON error, as [MS-DVRJ] 3.1.5.1.1.2
/// gives it (`code`, `subcode`, `message`).
struct DeviceRegistrationError: Error, Sendable {
    var status: Int
    var code: String
    var subcode: String?
    var message: String

    static func badRequest(_ message: String) -> DeviceRegistrationError {
        DeviceRegistrationError(status: 400, code: "invalid_request", subcode: nil, message: message)
    }

    var json: JSON {
        .members([
            ("code", .string(code)), ("subcode", subcode.map(JSON.string)), ("message", .string(message)),
            ("operation", .string("Enroll")), ("requestid", .string(Identifiers.guid())), ("time", .string(Date().iso8601Seconds)),
        ])
    }
}
