import Foundation
import SesameCore
import SesameCoreTestSupport
import Testing

@Suite("Token cache in MSAL's unified schema")
struct TokenCacheTests {
    /// MSAL Python's tests/test_token_cache.py vector: client my_client_id, scopes s2 s1 s3,
    /// endpoint https://login.example.com/contoso/v2/token, now 1000, expires_in 3600.
    @Test("keys and fields match MSAL Python's test vector")
    func msalVector() throws {
        var cache = TokenCache()
        let response = try JSONDecoder().decode(
            TokenResponse.self,
            from: Data(
                (#"{"access_token":"an access token","token_type":"some type","expires_in":3600,"#
                    + #""refresh_token":"a refresh token","id_token":"an id token"}"#).utf8))
        cache.save(
            TokenCache.Grant(
                homeAccountID: "uid.utid", environment: "login.example.com", realm: "contoso", clientID: "my_client_id",
                requestedScopes: ["s2", "s1", "s3"], response: response, idTokenClaims: nil, accountSource: "authorization_code", now: 1000)
        )
        let at = try #require(cache.accessTokens["uid.utid-login.example.com-accesstoken-my_client_id-contoso-s1 s2 s3"])
        #expect(at.target == "s1 s2 s3")
        #expect(at.expiresOn == 4600)
        #expect(at.cachedAt == 1000)
        #expect(cache.refreshTokens["uid.utid-login.example.com-refreshtoken-my_client_id--s1 s2 s3"] != nil)
        #expect(cache.idTokens["uid.utid-login.example.com-idtoken-my_client_id-contoso-"] != nil)
        #expect(cache.accounts["uid.utid-login.example.com-contoso"] != nil)
        #expect(cache.appMetadata["appmetadata-login.example.com-my_client_id"] != nil)

        let json = try JSONSerialization.jsonObject(with: cache.jsonData()) as! [String: [String: [String: Any]]]
        #expect(Set(json.keys) == ["AccessToken", "RefreshToken", "IdToken", "Account", "AppMetadata"])
        let atJSON = try #require(json["AccessToken"]?["uid.utid-login.example.com-accesstoken-my_client_id-contoso-s1 s2 s3"])
        #expect(atJSON["credential_type"] as? String == "AccessToken")
        #expect(atJSON["expires_on"] as? String == "4600")
        #expect(atJSON["cached_at"] as? String == "1000")
        #expect(atJSON["secret"] as? String == "an access token")
        let account = try #require(json["Account"]?["uid.utid-login.example.com-contoso"])
        #expect(account["authority_type"] as? String == "MSSTS")
        #expect(account["username"] as? String == "")
    }

    @Test("a cache written by MSAL (numbers, unknown fields and sections) round-trips without loss")
    func foreignFieldsKept() throws {
        let msal = #"""
            {"AccessToken": {"k": {"credential_type": "AccessToken", "secret": "t", "home_account_id": "u.t", "environment":
            "login.microsoftonline.com",
              "client_id": "c", "target": "User.Read", "realm": "common", "token_type": "Bearer", "cached_at": 1000, "expires_on": "4600",
              "extended_expires_on": "4600", "key_id": "pop-key"}},
             "Account": {"a": {"home_account_id": "u.t", "environment": "login.microsoftonline.com", "realm": "common",
              "local_account_id": "o", "username": "alex@contoso.com", "authority_type": "MSSTS", "account_source": "device_code"}},
             "FutureSection": {"x": {"y": 1}}}
            """#
        let cache = try TokenCache(json: Data(msal.utf8))
        let again = try TokenCache(json: cache.jsonData())
        #expect(again == cache)
        let object = try JSONSerialization.jsonObject(with: again.jsonData()) as! [String: Any]
        #expect(object["FutureSection"] != nil)
        let at = try #require(again.accessTokens.values.first)
        #expect(at.extras["key_id"] == .string("pop-key"))
        #expect(at.cachedAt == 1000)
        #expect(again.accounts.values.first?.accountSource == "device_code")
    }

    @Test(
        "unreadable bytes are rejected", arguments: ["", "{", "[]", #"{"AccessToken": []}"#, #"{"AccessToken": {"k": {"secret": "x"}}}"#])
    func corrupt(text: String) {
        #expect(throws: (any Error).self) { try TokenCache(json: Data(text.utf8)) }
    }
}

@Suite("File token storage")
struct FileTokenStorageTests {
    @Test("the cache file is 0600 in a 0700 directory under XDG_DATA_HOME/sesame")
    func permissions() throws {
        let home = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: home) }
        let storage = FileTokenStorage(environment: ["XDG_DATA_HOME": home.path, "HOME": "/nonexistent"])
        #expect(storage.directory.path == home.appending(path: "sesame").path)
        _ = try storage.transact(group: "g") { _ in .write(Data("{}".utf8)) }
        let file = try storage.fileURL(group: "g")
        let fileMode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        let directoryMode = try FileManager.default.attributesOfItem(atPath: storage.directory.path)[.posixPermissions] as? Int
        #expect(fileMode == 0o600)
        #expect(directoryMode == 0o700)
        // Atomic replace leaves no temporary files behind.
        let names = try FileManager.default.contentsOfDirectory(atPath: storage.directory.path).sorted()
        #expect(names == ["g.json", "g.json.lock"])
    }

    @Test("a group name cannot escape the directory")
    func groupNames() {
        let storage = FileTokenStorage(directory: temporaryDirectory())
        for group in ["../x", "a/b", "", ".."] {
            #expect(throws: TokenStorageError.self) { try storage.fileURL(group: group) }
        }
    }

    @Test("concurrent read-modify-write cycles lose no update (lock + re-read)")
    func lockAndReread() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let writers = 8
        let rounds = 25
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<writers {
                group.addTask {
                    // Each writer has its own storage value, as separate processes would.
                    let storage = FileTokenStorage(directory: directory)
                    for _ in 0..<rounds {
                        _ = try? storage.transact(group: "counter") { data in
                            let count = data.flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
                            return .write(Data(String(count + 1).utf8))
                        }
                    }
                }
            }
        }
        let final = try String(contentsOf: directory.appending(path: "counter.json"), encoding: .utf8)
        #expect(final == String(writers * rounds))
    }

    @Test(
        "a corrupt cache is moved aside, reported, and replaced by an empty one; sign-in still works",
        arguments: [
            "{\"AccessToken\": {\"k\": ", "", "\u{0}\u{0}\u{0}garbage",
        ])
    func corruptCacheRecovered(content: String) async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await fixture.configure()
        let file = try fixture.storage.fileURL(group: fixture.provider.configuration.storageGroup)
        try FileManager.default.createDirectory(at: fixture.directory, withIntermediateDirectories: true)
        try Data(content.utf8).write(to: file)
        let events = await fixture.store.events()

        #expect(try await fixture.store.accounts(ofType: fixture.accountType).isEmpty)
        var iterator = events.makeAsyncIterator()
        guard case .cacheRecovered(let group, let aside) = await iterator.next() else {
            Issue.record("no recovery event")
            return
        }
        #expect(group == fixture.provider.configuration.storageGroup)
        #expect(try Data(contentsOf: URL(fileURLWithPath: aside)) == Data(content.utf8))
        #expect(try TokenCache(json: Data(contentsOf: file)) == TokenCache())

        _ = try await fixture.signIn()
        #expect(try await fixture.store.accounts(ofType: fixture.accountType).count == 1)
    }
}
