import Crypto
import FoundationEssentials
import SwiftASN1
import X509
import _CryptoExtras

/// The RSA key that signs every token, with the self-signed certificate JWKS publishes in `x5c`.
/// `kid` equals `x5t` (the certificate's SHA-1 thumbprint), as on Entra. Kept in the state
/// directory so tokens stay valid across restarts.
struct SigningKey: Sendable {
    let privateKey: _RSA.Signing.PrivateKey
    /// The certificate's DER bytes (`x5c`).
    let certificateDER: [UInt8]
    /// `kid` and `x5t`.
    let keyID: String
    /// The certificate as PEM (what the state directory keeps).
    let certificatePEM: String

    init(privateKey: _RSA.Signing.PrivateKey, certificate: Certificate, certificatePEM: String) throws {
        self.privateKey = privateKey
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        certificateDER = serializer.serializedBytes
        keyID = Base64URL.encode(Insecure.SHA1.hash(data: certificateDER))
        self.certificatePEM = certificatePEM
    }

    /// Loads the key from `directory`, or creates one (and saves it there when a directory is given).
    /// - Parameter stem: the files' names, `<stem>-key.pem` and `<stem>-certificate.pem`: Entra's
    ///   token signing key is `signing`; the federated organisation's has its own.
    /// - Parameter commonName: the new certificate's subject.
    static func loadOrCreate(
        in directory: URL?, stem: String = "signing", commonName: String = "accounts.accesscontrol.windows.net", now: Date
    ) throws -> SigningKey {
        let keyFile = directory?.appending(path: "\(stem)-key.pem")
        let certificateFile = directory?.appending(path: "\(stem)-certificate.pem")
        if let keyFile, let certificateFile,
            let keyPEM = try? String(contentsOf: keyFile, encoding: .utf8),
            let certificatePEM = try? String(contentsOf: certificateFile, encoding: .utf8)
        {
            do {
                return try SigningKey(
                    privateKey: _RSA.Signing.PrivateKey(pemRepresentation: keyPEM),
                    certificate: Certificate(pemEncoded: certificatePEM), certificatePEM: certificatePEM)
            } catch {
                throw EmulatorConfigurationError(
                    "The signing key in \(keyFile.path) cannot be read (\(error)). Move it away to start with a new key.")
            }
        }
        let signingKey = try create(commonName: commonName, now: now)
        if let directory { try signingKey.save(in: directory, stem: stem) }
        return signingKey
    }

    /// A new key with its self-signed certificate.
    static func create(commonName: String = "accounts.accesscontrol.windows.net", now: Date) throws -> SigningKey {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let name = try DistinguishedName { CommonName(commonName) }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(5 * 365 * 86_400),
            issuer: name, subject: name, signatureAlgorithm: .sha256WithRSAEncryption, extensions: .init(),
            issuerPrivateKey: .init(key))
        return try SigningKey(privateKey: key, certificate: certificate, certificatePEM: certificate.serializeAsPEM().pemString)
    }

    /// Keeps the key (and its certificate) in `directory` as `<stem>-key.pem` and
    /// `<stem>-certificate.pem`, replacing the ones there.
    func save(in directory: URL, stem: String = "signing") throws {
        try StateFile.writeAtomically(Data(privateKey.pemRepresentation.utf8), to: directory.appending(path: "\(stem)-key.pem"))
        try StateFile.writeAtomically(Data(certificatePEM.utf8), to: directory.appending(path: "\(stem)-certificate.pem"))
    }

    /// The JWK: `kty`, `use`, `kid`, `x5t`, `n`, `e`, `x5c`, and `issuer` when given (Entra publishes
    /// a per-key issuer; B2C publishes none, and no certificate).
    func jwk(issuer: String?, b2c: Bool) -> JSON {
        let primitives = try? privateKey.publicKey.getKeyPrimitives()
        let n = primitives.map { Base64URL.encode($0.modulus) } ?? ""
        let e = primitives.map { Base64URL.encode($0.publicExponent) } ?? "AQAB"
        if b2c {
            return .object([
                ("kid", .string(keyID)), ("nbf", .int(1_493_763_266)), ("use", .string("sig")),
                ("kty", .string("RSA")), ("e", .string(e)), ("n", .string(n)),
            ])
        }
        return .members([
            ("kty", .string("RSA")), ("use", .string("sig")), ("kid", .string(keyID)), ("x5t", .string(keyID)),
            ("n", .string(n)), ("e", .string(e)), ("x5c", .array([.string(Data(certificateDER).base64EncodedString())])),
            ("issuer", issuer.map(JSON.string)),
        ])
    }
}
