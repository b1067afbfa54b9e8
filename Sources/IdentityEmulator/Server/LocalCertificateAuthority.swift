import Crypto
import FoundationEssentials
import NIOSSL
import SwiftASN1
import X509

/// The `--tls` material: a local certificate authority, created once in the state directory, and
/// a server certificate it signs for `localhost`, `127.0.0.1`, `::1`, the `--hostname` the
/// emulator serves under (and, when that is `login.microsoftonline.com`, `graph.microsoft.com`,
/// which the same base URL stands in for), the `--federation-hostname` its organisation's identity
/// provider is reached by and the `--device-registration-hostname`. Clients trust the CA's PEM (`ca-certificate <path>`); nothing is added
/// to the system's trust store. A test that puts the CA in a trust store anyway trusts it for
/// those host names alone: the CA carries critical Name Constraints (RFC 5280 §4.2.1.10)
/// permitting exactly them (addresses cannot be constrained: see ``nameConstraints(for:)``), and
/// lives a year — a leaked CA key cannot vouch for `login.microsoftonline.com`
/// or anything else. A kept CA whose constraints do not cover the names asked for, or that
/// predates the constraints, is replaced.
struct LocalCertificateAuthority {
    let caCertificatePath: String
    let serverCertificatePEM: String
    let serverKeyPEM: String

    /// The CA and the server certificate kept in `directory`, each created (and kept) when it is
    /// not there yet; the server certificate is also renewed when it no longer serves.
    ///
    /// - Parameter hostname: a name the server certificate must also cover (`--hostname`).
    /// - Parameter federationHostname: another one (the identity provider's host name).
    static func loadOrCreate(
        in directory: URL, hostname: String? = nil, federationHostname: String? = nil, deviceRegistrationHostname: String? = nil,
        now: Date
    ) throws -> LocalCertificateAuthority {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let files = Files(directory: directory)
        let names = serverNames(
            [hostname, federationHostname, deviceRegistrationHostname].compactMap { $0 } + microsoftNeighbours(of: hostname))
        let constraints = nameConstraints(for: names)
        var (caKey, ca) = try keptCA(files) ?? createCA(files, constraints: constraints, now: now)
        if !serves(ca, constraints: constraints, now: now) {
            (caKey, ca) = try createCA(files, constraints: constraints, now: now)
        }
        if let kept = keptServerCertificate(files, ca: ca, names: names, now: now) { return kept }
        return try createServerCertificate(files, ca: ca, caKey: caKey, names: names, commonName: hostname ?? "localhost", now: now)
    }

    /// The hosts the emulator's one base URL also stands in for when it stands in for Microsoft's
    /// sign-in service: Graph, whose host clients take from discovery (`msgraph_host`) or hard-code.
    static func microsoftNeighbours(of hostname: String?) -> [String] {
        hostname?.lowercased() == "login.microsoftonline.com" ? ["graph.microsoft.com"] : []
    }

    /// Where the material is kept in the state directory.
    private struct Files {
        let directory: URL
        var caCertificate: URL { directory.appending(path: "ca-certificate.pem") }
        var caKey: URL { directory.appending(path: "ca-key.pem") }
        var serverCertificate: URL { directory.appending(path: "server-certificate.pem") }
        var serverKey: URL { directory.appending(path: "server-key.pem") }
    }

    /// The CA kept from an earlier run, or nil when either of its files is missing. Files that
    /// are there but unreadable are an error, not a reason to make a new CA: clients trust the old
    /// one, so replacing it silently would break them; the message says what to remove.
    private static func keptCA(_ files: Files) throws -> (P256.Signing.PrivateKey, Certificate)? {
        guard let caPEM = try? String(contentsOf: files.caCertificate, encoding: .utf8),
            let caKeyPEM = try? String(contentsOf: files.caKey, encoding: .utf8)
        else { return nil }
        do {
            return (try P256.Signing.PrivateKey(pemRepresentation: caKeyPEM), try Certificate(pemEncoded: caPEM))
        } catch {
            throw EmulatorConfigurationError(
                "The CA in \(files.directory.path) cannot be read (\(error)). Remove ca-certificate.pem and ca-key.pem there to "
                    + "create a new one."
            )
        }
    }

    /// What the CA may vouch for: each server DNS name and its subdomains. Addresses stay
    /// unconstrained: BoringSSL (swift-nio-ssl's, AsyncHTTPClient's) refuses every certificate
    /// with an address under a CA that constrains addresses (`X509_V_ERR_UNSUPPORTED_CONSTRAINT_TYPE`).
    static func nameConstraints(for names: [GeneralName]) -> NameConstraints {
        NameConstraints(
            permittedSubtrees: names.filter { name in
                if case .dnsName = name { return true }
                return false
            })
    }

    /// Whether a kept CA can sign for these names: constrained to them (critically) and valid for
    /// at least 30 more days.
    private static func serves(_ ca: Certificate, constraints: NameConstraints, now: Date) -> Bool {
        guard let kept = try? ca.extensions.nameConstraints,
            ca.extensions.first(where: { $0.oid == .X509ExtensionID.nameConstraints })?.critical == true
        else { return false }
        return Set(constraints.permittedSubtrees).isSubset(of: Set(kept.permittedSubtrees))
            && ca.notValidAfter > now.addingTimeInterval(30 * 86_400)
    }

    /// A new CA for a year, constrained to `constraints`, written to the state directory: its key
    /// private to the user, its certificate readable by all (clients are pointed at it).
    private static func createCA(_ files: Files, constraints: NameConstraints, now: Date) throws -> (P256.Signing.PrivateKey, Certificate) {
        let caKey = P256.Signing.PrivateKey()
        let name = try DistinguishedName {
            OrganizationName("Sesame identity emulator")
            CommonName("Sesame identity emulator local CA")
        }
        let publicKey = Certificate.PublicKey(caKey.publicKey)
        let ca = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: publicKey,
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(365 * 86_400),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                Critical(constraints)
                SubjectKeyIdentifier(hash: publicKey)
            },
            issuerPrivateKey: .init(caKey))
        try StateFile.writeAtomically(Data(caKey.pemRepresentation.utf8), to: files.caKey)
        try StateFile.writeAtomically(Data(ca.serializeAsPEM().pemString.utf8), to: files.caCertificate)
        try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: files.caCertificate.path)
        return (caKey, ca)
    }

    /// The names the server certificate must cover: the loopback names always, then the host
    /// names asked for (each once).
    private static func serverNames(_ hostnames: [String]) -> [GeneralName] {
        var names: [GeneralName] = [
            .dnsName("localhost"),
            .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
            .ipAddress(ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 0, count: 15) + [1]))),
        ]
        for name in hostnames {
            let alternative = Self.subjectAlternativeName(name)
            if !names.contains(alternative) { names.append(alternative) }
        }
        return names
    }

    /// The kept server certificate, if it still serves. It is renewed (nil here) when it is
    /// missing, unreadable, not signed by this CA (a CA made anew), within 30 days of expiry, or not for every name asked.
    private static func keptServerCertificate(
        _ files: Files, ca: Certificate, names: [GeneralName], now: Date
    ) -> LocalCertificateAuthority? {
        guard let pem = try? String(contentsOf: files.serverCertificate, encoding: .utf8),
            let keyPEM = try? String(contentsOf: files.serverKey, encoding: .utf8),
            let certificate = try? Certificate(pemEncoded: pem), certificate.issuer == ca.subject,
            ca.publicKey.isValidSignature(certificate.signature, for: certificate),
            certificate.notValidAfter > now.addingTimeInterval(30 * 86_400),
            let covered = try? certificate.extensions.subjectAlternativeNames, Set(names).isSubset(of: Set(covered))
        else { return nil }
        return LocalCertificateAuthority(caCertificatePath: files.caCertificate.path, serverCertificatePEM: pem, serverKeyPEM: keyPEM)
    }

    /// A new server certificate for a year, signed by the CA for `names`, written next to it.
    private static func createServerCertificate(
        _ files: Files, ca: Certificate, caKey: P256.Signing.PrivateKey, names: [GeneralName], commonName: String, now: Date
    ) throws -> LocalCertificateAuthority {
        let serverKey = P256.Signing.PrivateKey()
        let serverPublicKey = Certificate.PublicKey(serverKey.publicKey)
        let caIdentifier = try ca.extensions.subjectKeyIdentifier?.keyIdentifier
        let server = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: serverPublicKey,
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(365 * 86_400),
            issuer: ca.subject, subject: try DistinguishedName { CommonName(commonName) },
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
        try StateFile.writeAtomically(Data(serverKey.pemRepresentation.utf8), to: files.serverKey)
        try StateFile.writeAtomically(Data(pem.utf8), to: files.serverCertificate)
        return LocalCertificateAuthority(
            caCertificatePath: files.caCertificate.path, serverCertificatePEM: pem, serverKeyPEM: serverKey.pemRepresentation)
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
