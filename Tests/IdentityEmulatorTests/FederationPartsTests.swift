import Foundation
import NIOSSL
import SesameTestSupport
import Testing

@testable import IdentityEmulator

/// The pieces of federation on their own: the federation host name and its TLS name.
@Suite("Federation: host names and TLS names")
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

    @Test("the provider's base keeps the emulator's scheme and port; one host name for both is refused")
    func federationBase() async throws {
        var configuration = EmulatorConfiguration()
        configuration.userCount = 0
        let emulator = try await IdentityEmulator(configuration: configuration, base: URL(string: "https://127.0.0.1:8443")!)
        #expect(emulator.federationBase.absoluteString == "https://localhost:8443")

        configuration.federationHostname = "127.0.0.1"
        await #expect(throws: EmulatorConfigurationError.self) {
            _ = try await IdentityEmulator(configuration: configuration, base: URL(string: "http://127.0.0.1:8400")!)
        }
    }
}
