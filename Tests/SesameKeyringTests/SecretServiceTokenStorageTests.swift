import Foundation
import SesameCore
import SesameKeyring
import Testing

/// These run against the real Secret Service that `make test` starts (gnome-keyring in a
/// private `dbus-run-session`). Under `make test` a missing Secret Service is a failure, not
/// a skip; a bare `swift test` without one skips them.
@Suite(
    "Secret Service storage (real gnome-keyring)",
    .enabled(
        if: ProcessInfo.processInfo.environment["SESAME_REQUIRE_SECRET_SERVICE"] == "1" || SecretServiceTokenStorage.isAvailable(),
        "no Secret Service on this session bus; `make test` provides one"))
struct SecretServiceTokenStorageTests {
    func group() -> String { "org.sesame.tests.\(UUID().uuidString)" }

    @Test("the device identity is one keyring item: kept, read back whole, and gone when cleared")
    func deviceIdentity() throws {
        let storage = SecretServiceDeviceIdentityStorage()
        defer { try? storage.clear() }
        let kept = Secret(#"{"version":1,"note":"what DeviceIdentity writes"}"#)
        try storage.save(kept)
        #expect(try storage.load() == kept)
        try storage.clear()
        #expect(try storage.load() == nil)
    }

    @Test("a Secret Service answers under make test")
    func available() {
        #expect(SecretServiceTokenStorage.isAvailable())
        #expect(SecretServiceTokenStorage.preferred() is SecretServiceTokenStorage)
    }

    @Test("the first run records the keyring as this user's store, with no notice; later runs keep it")
    func chosenOnce() throws {
        let data = FileManager.default.temporaryDirectory.appending(path: "sesame-choice-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let environment = ["XDG_DATA_HOME": data.path, "HOME": data.path]
        let first = try SecretServiceTokenStorage.chosen(environment: environment)
        #expect(first.storage is SecretServiceTokenStorage)
        #expect(first.notice == nil)
        #expect(try String(contentsOf: data.appending(path: "sesame/storage"), encoding: .utf8) == "secret-service\n")
        #expect(try SecretServiceTokenStorage.chosen(environment: environment).storage is SecretServiceTokenStorage)
    }

    @Test("sesame doctor's storage lines: the keyring answers, sign-ins go to its default collection, and nothing is recorded")
    func diagnosis() throws {
        let data = FileManager.default.temporaryDirectory.appending(path: "sesame-doctor-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let findings = SecretServiceTokenStorage.diagnosis(environment: ["XDG_DATA_HOME": data.path, "HOME": data.path])
        #expect(findings.map(\.subject) == [.keyring, .tokenStorage])
        guard case .ok(.keyring(answers: true)) = findings.first?.outcome,
            case .ok(.storage(.secretService(let collection?))) = findings.last?.outcome
        else {
            Issue.record("\(findings)")
            return
        }
        #expect(!collection.isEmpty)
        // A diagnosis only looks: the first real run still makes the choice.
        #expect(!FileManager.default.fileExists(atPath: data.appending(path: "sesame/storage").path))
    }

    @Test("bytes written to a group are read back, and groups are separate")
    func roundTrip() throws {
        let storage = SecretServiceTokenStorage()
        let (first, second) = (group(), group())
        defer {
            try? storage.clear(group: first)
            try? storage.clear(group: second)
        }
        _ = try storage.transact(group: first) { current in
            #expect(current == nil)
            return .write(Data(#"{"Account":{}}"#.utf8))
        }
        var seen: Data?
        _ = try storage.transact(group: first) { current in
            seen = current
            return .keep
        }
        #expect(seen == Data(#"{"Account":{}}"#.utf8))
        _ = try storage.transact(group: second) { current in
            #expect(current == nil)
            return .keep
        }
        // The item is visible to other Secret Service clients (secret-tool), as a desktop user would see it.
        let lookup = Process()
        lookup.executableURL = URL(fileURLWithPath: "/usr/bin/secret-tool")
        lookup.arguments = ["lookup", "group", first, "kind", "cache"]
        let pipe = Pipe()
        lookup.standardOutput = pipe
        try lookup.run()
        lookup.waitUntilExit()
        #expect(String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) == #"{"Account":{}}"#)
    }

    @Test("unreadable bytes are kept in a separate item when replaced")
    func setAside() throws {
        let storage = SecretServiceTokenStorage()
        let name = group()
        defer { try? storage.clear(group: name) }
        _ = try storage.transact(group: name) { _ in .write(Data("{truncated".utf8)) }
        let aside = try storage.transact(group: name) { _ in .setAsideAndWrite(Data("{}".utf8)) }
        #expect(aside?.contains("unreadable-") == true)
        var seen: Data?
        _ = try storage.transact(group: name) {
            seen = $0
            return .keep
        }
        #expect(seen == Data("{}".utf8))
    }

    @Test("the account store keeps its MSAL cache in the keyring; sign-out clears the tokens")
    func accountStoreOnKeyring() async throws {
        let storage = SecretServiceTokenStorage()
        let configuration = AccountConfiguration(
            clientID: "c", scopes: ["User.Read"],
            authorizationURL: URL(string: "https://login.microsoftonline.com/common/oauth2/v2.0/authorize")!,
            tokenURL: URL(string: "https://login.microsoftonline.com/common/oauth2/v2.0/token")!,
            redirectURL: URL(string: "https://login.microsoftonline.com/common/oauth2/nativeclient")!,
            storageGroup: group())
        defer { try? storage.clear(group: configuration.storageGroup) }
        // A cache as MSAL (or another Sesame process) would have written it.
        var cache = TokenCache()
        let response = try JSONDecoder().decode(
            TokenResponse.self, from: Data(#"{"access_token":"a","refresh_token":"r","expires_in":3600,"scope":"User.Read"}"#.utf8))
        cache.save(
            TokenCache.Grant(
                homeAccountID: "u.t", environment: "login.microsoftonline.com", realm: "common", clientID: "c",
                requestedScopes: ["User.Read"], response: response, idTokenClaims: nil, accountSource: "authorization_code",
                now: Int(Date().timeIntervalSince1970)))
        _ = try storage.transact(group: configuration.storageGroup) { _ in .write(try cache.jsonData()) }

        let store = AccountStore(storage: storage)
        await store.setConfiguration(configuration, forAccountType: "graph")
        let accounts = try await store.accounts(ofType: "graph")
        #expect(accounts.map(\.homeAccountID) == ["u.t"])
        let token = try await store.accessToken(for: accounts[0])
        #expect(token.secret.revealed == "a")
        try await store.remove(accounts[0])
        #expect(try await store.accounts(ofType: "graph").isEmpty)
    }

    @Test("an MSAL-based tool's shape of the item, whose signal file's lock each transaction holds and whose time it moves ahead")
    func msalExtensionsShape() throws {
        let runtime = FileManager.default.temporaryDirectory.appending(path: "sesame-runtime-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: runtime) }
        let storage = SecretServiceTokenStorage(environment: ["XDG_RUNTIME_DIR": runtime.path])
        let group = group()
        defer { try? storage.clear(group: group) }

        let shape = storage.msalExtensionsPersistence(group: group)
        let before = Date()
        #expect(shape.signalLocation == runtime.appending(path: "sesame-\(group).stamp").path)
        #expect(shape.schemaName == "org.sesame.TokenCache")
        #expect(shape.attributes == ["group": group, "kind": "cache"])
        _ = try storage.transact(group: group) { _ in
            #expect(FileManager.default.fileExists(atPath: shape.signalLocation + ".lockfile"), "no msal-extensions lock held")
            return .write(Data("{}".utf8))
        }
        #expect(!FileManager.default.fileExists(atPath: shape.signalLocation + ".lockfile"))
        // msal-extensions reloads the item when the signal file is newer than its clock reading
        // after its last load, which may come after this write: the stamp is ahead of the write.
        let touched = try FileManager.default.attributesOfItem(atPath: shape.signalLocation)[.modificationDate] as? Date
        #expect(try #require(touched) > before.addingTimeInterval(FileTokenStorage.modificationTimeLead - 0.001))
    }
}
