import Foundation
import SesameTestSupport
import Testing

@testable import IdentityEmulator

@Suite("Generated directory")
struct DirectoryTests {
    @Test("the same seed gives the same directory; another seed another one")
    func deterministic() {
        let a = DirectoryGenerator.contosoUsers(count: 500, seed: "one")
        let b = DirectoryGenerator.contosoUsers(count: 500, seed: "one")
        let c = DirectoryGenerator.contosoUsers(count: 500, seed: "two")
        #expect(a == b)
        #expect(a != c)
        #expect(a.count == 500)
        #expect(Set(a.map(\.userPrincipalName)).count == 500)
        #expect(Set(a.map(\.id)).count == 500)
    }

    @Test("names in English, Spanish, Greek and Chinese; apostrophes; users without mail; several phones")
    func variety() {
        let users = DirectoryGenerator.contosoUsers(count: 2000, seed: "sesame")
        #expect(users.contains { $0.displayName.contains("'") })
        #expect(users.contains { $0.displayName.unicodeScalars.contains { (0x0391...0x03C9).contains($0.value) } })
        #expect(users.contains { $0.displayName.unicodeScalars.contains { (0x4E00...0x9FFF).contains($0.value) } })
        #expect(users.contains { $0.displayName.contains("á") || $0.displayName.contains("í") || $0.displayName.contains("ñ") })
        #expect(users.contains { $0.mail == nil })
        #expect(users.contains { $0.businessPhones.count >= 2 })
        #expect(users.contains { $0.businessPhones.isEmpty })
        #expect(users.allSatisfy { $0.userPrincipalName.allSatisfy(\.isASCII) })
    }

    @Test("demo accounts exist in every directory, even a tiny one")
    func demoAccounts() {
        let directory = Directory(tenant: .contoso, users: DirectoryGenerator.contosoUsers(count: 0, seed: "x"))
        #expect(directory.user(signInName: "ALEX@contoso.onmicrosoft.com")?.checks(password: "Passw0rd!") == true)
        #expect(directory.user(signInName: "megan@contoso.onmicrosoft.com")?.requiresMFA == true)
        let fabrikam = Directory(tenant: .fabrikamB2C, users: DirectoryGenerator.fabrikamFixedUsers)
        #expect(fabrikam.user(signInName: "sam@example.com") != nil)
        #expect(fabrikam.user(signInName: "kim@example.com") != nil)
    }

    @Test("the prefix index finds exactly what a scan finds, for every indexed property")
    func indexMatchesScan() {
        let users = DirectoryGenerator.contosoUsers(count: 3000, seed: "index")
        let directory = Directory(tenant: .contoso, users: users)
        directory.read { sorted, index in
            var random = SeededGenerator(seed: 7)
            for _ in 0..<200 {
                let user = sorted[Int(random.next() % UInt64(sorted.count))]
                for property in UserProperty.indexed {
                    guard let text = property.text(of: user) else { continue }
                    let prefix = String(text.prefix(Int(1 + random.next() % 4))).uppercased()
                    let scanned = sorted.indices.filter {
                        property.text(of: sorted[$0])?.lowercased().hasPrefix(prefix.lowercased()) ?? false
                    }
                    #expect(index.ordinals(of: property, startingWith: prefix) == scanned, "\(property) \(prefix)")
                }
            }
            return ()
        }
    }

    @Test("the bundled clients match Resources/settings")
    func bundledClients() throws {
        let settings = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../Resources/settings").standardized
        for (file, key, redirectKey) in [
            ("directory.plist", "clientId", "redirectUri"), ("me.plist", "clientId", "redirectUri"), ("tasks.plist", "clientID", "bhh"),
        ] {
            let plist = try #require(
                try PropertyListSerialization.propertyList(from: Data(contentsOf: settings.appending(path: file)), format: nil)
                    as? [String: Any])
            let id = try #require(plist[key] as? String)
            let client = try #require(ClientRegistration.sesameDefaults.first { $0.clientID == id }, "\(file)")
            #expect(client.redirectURIs.contains(try #require(plist[redirectKey] as? String)), "\(file)")
        }
    }

    @Test("--client parses ID=URI[,URI] and says what is wrong otherwise")
    func clientOption() throws {
        let client = try ClientRegistration.parse(commandLine: "abc=http://localhost,https://app.example/cb")
        #expect(client.redirectURIs == ["http://localhost", "https://app.example/cb"])
        #expect(throws: EmulatorConfigurationError.self) { try ClientRegistration.parse(commandLine: "abc") }
        #expect(throws: EmulatorConfigurationError.self) { try ClientRegistration.parse(commandLine: "abc=not a uri") }
    }
}
