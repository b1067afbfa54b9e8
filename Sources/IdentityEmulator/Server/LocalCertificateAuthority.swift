import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// The `--tls` material: a local certificate authority, created once in the state directory, and
/// a server certificate it signs for `localhost`, `127.0.0.1`, `::1`, the `--hostname` the
/// emulator serves under and the `--federation-hostname` its organisation's identity provider is
/// reached by. Clients trust the CA's PEM (`ca-certificate <path>`); nothing is added
/// to the system's trust store.
struct LocalCertificateAuthority {
    let caCertificatePath: String
    let serverCertificatePEM: String
    let serverKeyPEM: String

    /// - Parameter hostname: a name the server certificate must also cover (`--hostname`).
    /// - Parameter federationHostname: another one (the identity provider's host name).
    static func loadOrCreate(
        in directory: URL, hostname: String? = nil, federationHostname: String? = nil, now: Date
    ) throws -> LocalCertificateAuthority {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let caFile = directory.appending(path: "ca-certificate.pem")
        let caKeyFile = directory.appending(path: "ca-key.pem")
        let serverFile = directory.appending(path: "server-certificate.pem")
        let serverKeyFile = directory.appending(path: "server-key.pem")

        let caKey: P256.Signing.PrivateKey
        let ca: Certificate
        if let caPEM = try? String(contentsOf: caFile, encoding: .utf8), let caKeyPEM = try? String(contentsOf: caKeyFile, encoding: .utf8)
        {
            do {
                caKey = try P256.Signing.PrivateKey(pemRepresentation: caKeyPEM)
                ca = try Certificate(pemEncoded: caPEM)
            } catch {
                throw EmulatorConfigurationError(
                    "The CA in \(directory.path) cannot be read (\(error)). Remove ca-certificate.pem and ca-key.pem there to "
                        + "create a new one."
                )
            }
        } else {
            caKey = P256.Signing.PrivateKey()
            let name = try DistinguishedName {
                OrganizationName("Sesame identity emulator")
                CommonName("Sesame identity emulator local CA")
            }
            let publicKey = Certificate.PublicKey(caKey.publicKey)
            ca = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: publicKey,
                notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(10 * 365 * 86_400),
                issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                    SubjectKeyIdentifier(hash: publicKey)
                },
                issuerPrivateKey: .init(caKey))
            try StateFile.writeAtomically(Data(caKey.pemRepresentation.utf8), to: caKeyFile)
            try StateFile.writeAtomically(Data(ca.serializeAsPEM().pemString.utf8), to: caFile)
            try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: caFile.path)
        }

        // The server certificate is renewed when it is missing, unreadable, within 30 days of
        // expiry, or not for the host name asked.
        var names: [GeneralName] = [
            .dnsName("localhost"),
            .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
            .ipAddress(ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 0, count: 15) + [1]))),
        ]
        for name in [hostname, federationHostname].compactMap({ $0 }) {
            let alternative = Self.subjectAlternativeName(name)
            if !names.contains(alternative) { names.append(alternative) }
        }
        if let pem = try? String(contentsOf: serverFile, encoding: .utf8),
            let keyPEM = try? String(contentsOf: serverKeyFile, encoding: .utf8),
            let certificate = try? Certificate(pemEncoded: pem), certificate.issuer == ca.subject,
            certificate.notValidAfter > now.addingTimeInterval(30 * 86_400),
            let covered = try? certificate.extensions.subjectAlternativeNames, Set(names).isSubset(of: Set(covered))
        {
            return LocalCertificateAuthority(caCertificatePath: caFile.path, serverCertificatePEM: pem, serverKeyPEM: keyPEM)
        }
        let serverKey = P256.Signing.PrivateKey()
        let serverPublicKey = Certificate.PublicKey(serverKey.publicKey)
        let caIdentifier = try ca.extensions.subjectKeyIdentifier?.keyIdentifier
        let server = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: serverPublicKey,
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(365 * 86_400),
            issuer: ca.subject, subject: try DistinguishedName { CommonName(hostname ?? "localhost") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true, keyEncipherment: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
                SubjectKeyIdentifier(hash: serverPublicKey)
                AuthorityKeyIdentifier(keyIdentifier: caIdentifier)
            },
            issuerPrivateKey: .init(caKey))
        let pem = try server.serializeAsPEM().pemString
        try StateFile.writeAtomically(Data(serverKey.pemRepresentation.utf8), to: serverKeyFile)
        try StateFile.writeAtomically(Data(pem.utf8), to: serverFile)
        return LocalCertificateAuthority(
            caCertificatePath: caFile.path, serverCertificatePEM: pem, serverKeyPEM: serverKey.pemRepresentation)
    }

    /// An IPv4 address as an `iPAddress` name (a client connecting by address checks that one),
    /// anything else as a `dNSName`.
    static func subjectAlternativeName(_ name: String) -> GeneralName {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        let octets = parts.compactMap { $0.count <= 3 && $0.allSatisfy(\.isASCII) ? UInt8($0) : nil }
        guard parts.count == 4, octets.count == 4 else { return .dnsName(name) }
        return .ipAddress(ASN1OctetString(contentBytes: ArraySlice(octets)))
    }

    func serverConfiguration() throws -> TLSConfiguration {
        TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(serverCertificatePEM.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(serverKeyPEM.utf8), format: .pem)))
    }
}
