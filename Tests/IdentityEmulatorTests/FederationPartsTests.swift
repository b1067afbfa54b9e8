import Crypto
import Foundation
import NIOSSL
import SesameTestSupport
import Testing
import X509

@testable import IdentityEmulator

/// The pieces of federation on their own: the federation host name and its TLS name, and the
/// provider's signed answer (the XML reader, the SAML times, the signature).
@Suite("Federation: host names, TLS names, the signed answer")
struct FederationPartsTests {
    @Test("the federation host name: localhost for 127.0.0.1, 127.0.0.1 for localhost, sts.<name> otherwise, or the option")
    func defaultHostnames() throws {
        #expect(EmulatorConfiguration.defaultFederationHostname(forEmulatorHost: "127.0.0.1") == "localhost")
        #expect(EmulatorConfiguration.defaultFederationHostname(forEmulatorHost: "localhost") == "127.0.0.1")
        #expect(EmulatorConfiguration.defaultFederationHostname(forEmulatorHost: "login.contoso.test") == "sts.login.contoso.test")
        var configuration = EmulatorConfiguration()
        configuration.federationHostname = "sts.fabrikam.test"
        #expect(configuration.federationHost(forEmulatorHost: "127.0.0.1") == "sts.fabrikam.test")
    }

    @Test("the --tls certificate also names the federation host (a DNS name, or an address)")
    func certificateNames() throws {
        func names(hostname: String?, federationHostname: String) throws -> (dns: [String], addresses: [[UInt8]]) {
            let directory = Repository.temporaryDirectory("federation-tls")
            defer { try? FileManager.default.removeItem(at: directory) }
            let authority = try LocalCertificateAuthority.loadOrCreate(
                in: directory, hostname: hostname, federationHostname: federationHostname, now: Date())
            let certificate = try NIOSSLCertificate(bytes: Array(authority.serverCertificatePEM.utf8), format: .pem)
            let all = Array(certificate._subjectAlternativeNames())
            return (
                all.filter { $0.nameType == .dnsName }.map { String(decoding: Array($0.contents), as: UTF8.self) },
                all.filter { $0.nameType == .ipAddress }.map { Array($0.contents) }
            )
        }
        let named = try names(hostname: "login.contoso.test", federationHostname: "sts.fabrikam.test")
        #expect(Set(named.dns) == ["localhost", "login.contoso.test", "sts.fabrikam.test"])
        let address = try names(hostname: nil, federationHostname: "10.1.2.3")
        #expect(address.addresses.contains([10, 1, 2, 3]))
        #expect(address.dns == ["localhost"])
    }

    @Test("the --tls CA vouches only for the host names it serves (critical Name Constraints), for a year; other names fail to verify")
    func constrainedAuthority() async throws {
        let directory = Repository.temporaryDirectory("constrained-ca")
        defer { try? FileManager.default.removeItem(at: directory) }
        let now = Date()
        let authority = try LocalCertificateAuthority.loadOrCreate(
            in: directory, hostname: "login.contoso.test", federationHostname: "sts.fabrikam.test", now: now)
        let ca = try Certificate(pemEncoded: String(contentsOfFile: authority.caCertificatePath, encoding: .utf8))
        let constraints = try #require(try ca.extensions.nameConstraints, "the CA is not constrained")
        #expect(ca.extensions.first { $0.oid == .X509ExtensionID.nameConstraints }?.critical == true)
        #expect(Set(constraints.permittedDNSDomains) == ["localhost", "login.contoso.test", "sts.fabrikam.test"])
        #expect(ca.notValidAfter.timeIntervalSince(now) <= 366 * 86_400)

        // The CA's own key signs a certificate for a name it was not made for: no verifier trusts it.
        let caKey = try P256.Signing.PrivateKey(
            pemRepresentation: String(contentsOf: directory.appending(path: "ca-key.pem"), encoding: .utf8))
        func verifies(_ name: GeneralName) async throws -> Bool {
            let key = P256.Signing.PrivateKey()
            let leaf = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey), notValidBefore: now.addingTimeInterval(-60),
                notValidAfter: now.addingTimeInterval(3600), issuer: ca.subject, subject: try DistinguishedName { CommonName("x") },
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    SubjectAlternativeNames([name])
                }, issuerPrivateKey: .init(caKey))
            var verifier = Verifier(rootCertificates: CertificateStore([ca])) { RFC5280Policy() }
            guard case .validCertificate = await verifier.validate(leaf: leaf, intermediates: CertificateStore()) else { return false }
            return true
        }
        #expect(try await verifies(.dnsName("login.contoso.test")))
        #expect(try await verifies(.dnsName("sts.fabrikam.test")))
        #expect(try await !verifies(.dnsName("login.microsoftonline.com")), "the CA vouched for Microsoft")
        #expect(try await !verifies(.dnsName("contoso.test")))

        // A kept CA made for other names is replaced, and the server certificate with it.
        let again = try LocalCertificateAuthority.loadOrCreate(in: directory, hostname: "other.test", now: now)
        let replaced = try Certificate(pemEncoded: String(contentsOfFile: again.caCertificatePath, encoding: .utf8))
        #expect(replaced.serialNumber != ca.serialNumber)
        let server = try Certificate(pemEncoded: again.serverCertificatePEM)
        #expect(replaced.publicKey.isValidSignature(server.signature, for: server))
    }

    @Test(
        "standing in for login.microsoftonline.com, the --tls certificate and its CA also cover graph.microsoft.com (one base URL serves both)"
    )
    func microsoftGraphName() async throws {
        let directory = Repository.temporaryDirectory("microsoft-tls")
        defer { try? FileManager.default.removeItem(at: directory) }
        let now = Date()
        let authority = try LocalCertificateAuthority.loadOrCreate(
            in: directory, hostname: "login.microsoftonline.com", deviceRegistrationHostname: "enterpriseregistration.windows.net", now: now
        )
        let server = try Certificate(pemEncoded: authority.serverCertificatePEM)
        let covered = try #require(try server.extensions.subjectAlternativeNames)
        #expect(covered.contains(.dnsName("graph.microsoft.com")), "a client of graph.microsoft.com refuses the certificate")
        let ca = try Certificate(pemEncoded: String(contentsOfFile: authority.caCertificatePath, encoding: .utf8))
        let constraints = try #require(try ca.extensions.nameConstraints)
        #expect(constraints.permittedDNSDomains.contains("graph.microsoft.com"), "the CA may not vouch for graph.microsoft.com")
        var verifier = Verifier(rootCertificates: CertificateStore([ca])) { RFC5280Policy() }
        guard case .validCertificate = await verifier.validate(leaf: server, intermediates: CertificateStore()) else {
            Issue.record("the server certificate does not verify under its CA")
            return
        }

        // Another host name stands in for no Microsoft host: its CA stays without graph.microsoft.com.
        let other = try LocalCertificateAuthority.loadOrCreate(in: directory, hostname: "login.contoso.test", now: now)
        let otherCA = try Certificate(pemEncoded: String(contentsOfFile: other.caCertificatePath, encoding: .utf8))
        #expect(try otherCA.extensions.nameConstraints?.permittedDNSDomains.contains("graph.microsoft.com") == false)
    }

    @Test("the provider's base keeps the emulator's scheme and port; one host name for both is refused")
    func federationBase() async throws {
        var configuration = EmulatorConfiguration()
        configuration.userCount = 0
        let emulator = try await IdentityEmulator(configuration: configuration, base: URL(string: "https://127.0.0.1:8443")!)
        #expect(emulator.federationBase.absoluteString == "https://localhost:8443")
        #expect(emulator.federatedDomains.first?.passiveEndpoint.absoluteString == "https://localhost:8443/adfs/ls/")
        #expect(emulator.federatedDomains.first?.issuerURI == "http://localhost/adfs/services/trust")

        configuration.federationHostname = "127.0.0.1"
        await #expect(throws: EmulatorConfigurationError.self) {
            _ = try await IdentityEmulator(configuration: configuration, base: URL(string: "http://127.0.0.1:8400")!)
        }
    }

    @Test("a signed answer reads back and verifies; every cut of it is refused without a trap")
    func answerRoundTrip() throws {
        let key = try SigningKey.create(now: Date())
        let now = Date(timeIntervalSince1970: 1_800_000_000.25)
        let assertion = SAMLAssertion(
            id: "_0f9e1d2c-aaaa-4bbb-8ccc-123456789abc", issuer: "http://sts.example/adfs/services/trust", issueInstant: now,
            notBefore: now, notOnOrAfter: now.addingTimeInterval(3600), audience: WSFederation.microsoftOnlineRealm,
            immutableID: "VGhpcyBpcyBhIHRlc3Q=", userPrincipalName: "o'neil&co@fabrikam.example", authenticationInstant: now)
        let wresult = try WSFederationResponse.signed(assertion, with: key)
        let read = try WSFederationResponse(reading: wresult)
        #expect(read.assertion == assertion)
        try read.verify(with: key)
        #expect(throws: WSFederationResponse.Failure.unknownSigningKey) { try read.verify(with: try SigningKey.create(now: now)) }

        var refused = 0
        for length in stride(from: 0, to: wresult.utf8.count, by: 7) {
            let cut = String(decoding: Array(wresult.utf8).prefix(length), as: UTF8.self)
            if (try? WSFederationResponse(reading: cut)) == nil { refused += 1 }
        }
        #expect(refused == (wresult.utf8.count + 6) / 7)
        // Two assertions (signature wrapping) are refused.
        let wrapped = wresult.replacingOccurrences(
            of: "<t:RequestedSecurityToken>", with: "<t:RequestedSecurityToken>" + assertion.xml(signature: ""))
        #expect(throws: WSFederationResponse.Failure.self) { try WSFederationResponse(reading: wrapped) }
    }

    @Test("the XML reader refuses DOCTYPEs, comments, deep nesting, bad references and unbalanced tags")
    func xmlBounds() {
        let refused = [
            #"<!DOCTYPE r [<!ENTITY a "a">]><r>&a;</r>"#, "<r><!-- c --></r>", "<r><![CDATA[x]]></r>", "<r>&#0;</r>", "<r>&#x110000;</r>",
            "<r>&bogus;</r>", "<r a=1/>", #"<r a="1" a="2"/>"#, "<r></s>", "<r>", "<r/><r/>", "", "text", "<r>&amp</r>",
            String(repeating: "<a>", count: 40) + String(repeating: "</a>", count: 40), #"<r a="<"/>"#, "<?php ?><r/>",
        ]
        for text in refused {
            #expect(throws: XMLTree.Failure.self, "\(text.prefix(30))") { try XMLTree(parsing: text) }
        }
        let tree = try? XMLTree(parsing: #"<?xml version="1.0"?> <p:r x='&lt;1&#x41;&#66;'>a<c>b</c>&amp;d</p:r> "#)
        #expect(tree?.root.localName == "r")
        #expect(tree?.root.attribute("x") == "<1AB")
        #expect(tree?.root.text == "a&d")
    }

    @Test("SAML times: AD FS's form with milliseconds; anything else is no time")
    func samlTimes() {
        let date = Date(timeIntervalSince1970: 1_800_000_000.5)
        #expect(date.samlTimestamp == "2027-01-15T08:00:00.500Z")
        #expect(Date(samlTimestamp: "2027-01-15T08:00:00.500Z") == date)
        #expect(Date(samlTimestamp: "2027-01-15T08:00:00Z") == Date(timeIntervalSince1970: 1_800_000_000))
        for bad in [
            "2027-01-15T08:00:00", "2027-02-30T08:00:00Z", "2027-01-15 08:00:00Z", "2027-01-15T08:00:00.Z", "x", "", "2027-13-01T00:00:00Z",
        ] {
            #expect(Date(samlTimestamp: bad) == nil, "\(bad)")
        }
    }
}
