import Foundation
import HTTPTypes
import SesameTestSupport
import Testing

@testable import IdentityEmulator

extension Browser {
    /// A Graph call with a bearer token (and optional `ConsistencyLevel: eventual`).
    func graph(_ uri: String, token: String, eventual: Bool = false) async throws -> Page {
        var headers: HTTPFields = [.authorization: "Bearer \(token)"]
        if eventual { headers[HTTPField.Name("ConsistencyLevel")!] = "eventual" }
        return try await get(uri, headers: headers)
    }

    func graphToken(scope: String = "openid profile offline_access User.Read User.ReadBasic.All") async throws -> String {
        try #require(try await tokens(scope: scope)["access_token"] as? String)
    }
}

extension String {
    /// Percent-encodes a query value the way Graph clients do.
    var queryEncoded: String { FormFields.encode(self).replacingOccurrences(of: "+", with: "%20") }
}

@Suite("Microsoft Graph users")
struct GraphTests {
    @Test("startswith is case-insensitive, '' escapes a quote, or/and combine, $select shapes the rows")
    func filters() async throws {
        let fixture = try await EmulatorFixture(users: 400)
        try await fixture.withBrowser { browser in
            let token = try await browser.graphToken()
            func names(_ filter: String, select: String = "displayName") async throws -> [String] {
                let page = try await browser.graph("/v1.0/users?$filter=\(filter.queryEncoded)&$select=\(select)&$top=999", token: token)
                #expect(page.status == .ok, "\(filter): \(page.text)")
                return (page.json["value"] as? [[String: Any]] ?? []).compactMap { $0["displayName"] as? String }
            }
            #expect(try await names("startswith(givenName,'MEG')").contains("Megan Bowen"))
            let obriens = try await names("startswith(surname,'O''Brien')")
            #expect(obriens.contains("Seán O'Brien"))
            #expect(obriens.allSatisfy { $0.hasSuffix("O'Brien") })
            let either = try await names("startswith(displayName,'Alex') or startswith(givenName,'Megan')")
            #expect(either.contains("Alex Wilber") && either.contains("Megan Bowen"))
            #expect(try await names("startswith(givenName,'Megan') and startswith(surname,'Bow')") == ["Megan Bowen"])
            #expect(try await names("userPrincipalName eq 'ALEX@contoso.onmicrosoft.com'") == ["Alex Wilber"])
            #expect(try await names("startswith(displayName,'Γιώργος')").contains("Γιώργος Παπαδόπουλος"))
            #expect(try await names("startswith(displayName,'王')").contains("王伟"))

            let page = try await browser.graph(
                "/v1.0/users?$filter=\("startswith(displayName,'Lucía García')".queryEncoded)&$select=displayName,mail,businessPhones",
                token: token)
            let row = try #require((page.json["value"] as? [[String: Any]])?.first)
            #expect(Set(row.keys) == ["displayName", "mail", "businessPhones"])
            #expect(row["mail"] is NSNull)
            #expect(row["businessPhones"] as? [String] == [])
            #expect(page.json["@odata.context"] as? String == "http://127.0.0.1:8400/v1.0/$metadata#users(displayName,mail,businessPhones)")
            #expect(page.headers[.contentType]?.hasPrefix("application/json;odata.metadata=minimal") == true)
        }
    }

    @Test("default page of 100, @odata.nextLink with $skiptoken followed verbatim to the end, no row twice")
    func paging() async throws {
        let fixture = try await EmulatorFixture(users: 250)
        try await fixture.withBrowser { browser in
            let token = try await browser.graphToken()
            var next: String? = "/v1.0/users?$select=id,displayName"
            var ids: [String] = []
            var pages = 0
            while let link = next {
                let uri = link.replacingOccurrences(of: "http://127.0.0.1:8400", with: "")
                let page = try await browser.graph(uri, token: token)
                let rows = try #require(page.json["value"] as? [[String: Any]])
                ids += rows.compactMap { $0["id"] as? String }
                next = page.json["@odata.nextLink"] as? String
                if let next {
                    #expect(next.contains("$select=id,displayName"))
                    #expect(next.contains("$skiptoken=RFNwdAIAAQAAA"))
                }
                pages += 1
            }
            #expect(pages == 3)
            #expect(ids.count == 250)
            #expect(Set(ids).count == 250)
        }
    }

    @Test("$top outside 1–999 is refused with Graph's message")
    func topBounds() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let token = try await browser.graphToken()
            let page = try await browser.graph("/v1.0/users?$top=1000", token: token)
            #expect(page.status == .badRequest)
            let error = try #require(page.json["error"] as? [String: Any])
            #expect(error["message"] as? String == "Invalid page size specified: '1000'. Must be between 1 and 999 inclusive.")
            let inner = try #require(error["innerError"] as? [String: Any])
            #expect(inner["request-id"] is String && inner["date"] is String && inner["client-request-id"] is String)
            #expect(try await browser.graph("/v1.0/users?$top=0", token: token).status == .badRequest)
            #expect((try await browser.graph("/v1.0/users?$top=3", token: token).json["value"] as? [Any])?.count == 3)
        }
    }

    @Test("$search and $count need ConsistencyLevel: eventual, and work with it")
    func advancedQueries() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let token = try await browser.graphToken()
            let search = "/v1.0/users?$search=\("\"displayName:bowen\"".queryEncoded)"
            let refused = try await browser.graph(search, token: token)
            #expect(refused.status == .badRequest)
            #expect((refused.json["error"] as? [String: Any])?["code"] as? String == "Request_UnsupportedQuery")
            #expect(((refused.json["error"] as? [String: Any])?["message"] as? String)?.contains("'ConsistencyLevel: eventual'") == true)
            let found = try await browser.graph(search + "&$count=true", token: token, eventual: true)
            #expect((found.json["value"] as? [[String: Any]])?.contains { $0["displayName"] as? String == "Megan Bowen" } == true)
            #expect(found.json["@odata.count"] as? Int == (found.json["value"] as? [Any])?.count)

            #expect(try await browser.graph("/v1.0/users?$count=true", token: token).status == .badRequest)
            let ends = "/v1.0/users?$filter=\("endswith(mail,'@contoso.com')".queryEncoded)"
            let needsAdvanced = try await browser.graph(ends, token: token)
            #expect(
                ((needsAdvanced.json["error"] as? [String: Any])?["message"] as? String)?.hasPrefix("Operator 'endsWith' is not supported")
                    == true)
            #expect(try await browser.graph(ends + "&$count=true", token: token, eventual: true).status == .ok)
            let count = try await browser.graph("/v1.0/users/$count", token: token, eventual: true)
            #expect(count.text == "60")
        }
    }

    @Test("unsupported queries are answered as Graph answers them")
    func unsupported() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let token = try await browser.graphToken()
            func error(_ query: String) async throws -> (code: String?, message: String?) {
                let page = try await browser.graph("/v1.0/users?\(query)", token: token)
                #expect(page.status == .badRequest, "\(query)")
                let error = page.json["error"] as? [String: Any]
                return (error?["code"] as? String, error?["message"] as? String)
            }
            #expect(
                try await error("$filter=\("contains(displayName,'a')".queryEncoded)").message
                    == "Unsupported property filter clause operator 'Contains'.")
            #expect(
                try await error("$filter=\("startswith(shoeSize,'a')".queryEncoded)").message
                    == "Could not find a property named 'shoeSize' on type 'microsoft.graph.user'.")
            #expect(
                try await error("$filter=\("startswith(displayName,'\(String(repeating: "a", count: 121))')".queryEncoded)").code
                    == "Request_UnsupportedQuery")
            #expect(
                try await error("$filter=\("startswith(displayName,'a'".queryEncoded)").message?.hasPrefix(
                    "Invalid filter clause: Syntax error at position") == true)
            #expect(try await error("$skip=10").message == "'$skip' is not supported by the service.")
            #expect(try await error("$select=displayName,shoeSize").code == "BadRequest")
        }
    }

    @Test("bearer problems get Graph's 401 messages; missing permissions a 403")
    func authentication() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            func message(_ token: String?, _ uri: String = "/v1.0/users") async throws -> (HTTPResponse.Status, String?) {
                let page = token == nil ? try await browser.get(uri) : try await browser.graph(uri, token: token!)
                return (page.status, (page.json["error"] as? [String: Any])?["message"] as? String)
            }
            #expect(try await message(nil) == (.unauthorized, "Access token is empty."))
            #expect(try await message("not-a-jwt") == (.unauthorized, "CompactToken parsing failed with error code: 80049217"))
            let token = try await browser.graphToken()
            var forged = token.split(separator: ".").map(String.init)
            forged[2] = String(forged[2].reversed())
            #expect(try await message(forged.joined(separator: ".")) == (.unauthorized, "Access token validation failure."))

            let idToken = try #require(try await browser.tokens()["id_token"] as? String)
            #expect(try await message(idToken) == (.unauthorized, "Access token validation failure. Invalid audience."))

            let meOnly = try await browser.graphToken(scope: "openid profile User.Read")
            #expect(try await message(meOnly) == (.forbidden, "Insufficient privileges to complete the operation."))
            #expect(
                try await browser.graph("/v1.0/me", token: meOnly).json["userPrincipalName"] as? String == "alex@contoso.onmicrosoft.com")

            fixture.clock.advance(by: 2 * 3600)
            #expect(try await message(token) == (.unauthorized, "Access token has expired or is not yet valid."))
        }
    }

    @Test("/users/{id or userPrincipalName}, /me, and a 404 for nobody")
    func singleUsers() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let token = try await browser.graphToken()
            let byUPN = try await browser.graph("/v1.0/users/megan@contoso.onmicrosoft.com", token: token)
            #expect(byUPN.json["displayName"] as? String == "Megan Bowen")
            // User.ReadBasic.All: the basic profile only (StrictTenantTests reads the rest with User.Read.All).
            #expect(byUPN.json["mobilePhone"] is NSNull)
            let id = try #require(byUPN.json["id"] as? String)
            #expect(try await browser.graph("/v1.0/users/\(id)?$select=mail", token: token).json["mail"] as? String == "megan@contoso.com")
            let me = try await browser.graph("/v1.0/me", token: token)
            #expect(me.json["@odata.context"] as? String == "http://127.0.0.1:8400/v1.0/$metadata#users/$entity")
            #expect(me.json["displayName"] as? String == "Alex Wilber")
            let missing = try await browser.graph("/v1.0/users/nobody@contoso.onmicrosoft.com", token: token)
            #expect(missing.status == .notFound)
            #expect((missing.json["error"] as? [String: Any])?["code"] as? String == "Request_ResourceNotFound")
        }
    }
}

@Suite("B2C task API")
struct TaskAPITests {
    /// An access token for the task API, for `user`, with the client-id scope or the given scopes.
    static func taskToken(_ browser: Browser, user: String = "sam@example.com", scope: String? = nil) async throws -> String {
        browser.forgetCookies()
        var uri = Browser.b2cAuthorizeURI()
        if let scope {
            uri = uri.replacingOccurrences(
                of: FormFields.encode("openid offline_access \(Clients.taskScopes)"), with: FormFields.encode(scope))
        }
        let page = try await browser.get(uri)
        let ctx = try #require(page.hidden("ctx"))
        let redirect = try await browser.post(
            "/fabrikamb2c.onmicrosoft.com/login",
            form: [("ctx", ctx), ("step", "b2c-signin"), ("signInName", user), ("password", "Passw0rd!")])
        let code = try #require(redirect.redirectFields["code"])
        let response = try await browser.post(
            "/fabrikamb2c.onmicrosoft.com/B2C_1_SignUpSignIn/oauth2/v2.0/token",
            form: [
                ("client_id", Clients.tasks), ("grant_type", "authorization_code"), ("code", code),
                ("redirect_uri", Clients.b2cNativeClient),
                ("code_verifier", ProofKey.verifier),
            ] + (scope.map { [("scope", $0)] } ?? []))
        return try #require(response.json["access_token"] as? String)
    }

    @Test("each user sees only their own tasks; POST {Text} adds, DELETE removes; ASP.NET's field names")
    func perUserTasks() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let sam = try await Self.taskToken(browser)
            #expect(try await browser.graph("/api/tasks", token: sam).text == "[]")
            let added = try await browser.send(
                "/api/tasks", method: .post, headers: [.authorization: "Bearer \(sam)", .contentType: "application/json"],
                body: #"{"Text":"Buy milk"}"#)
            #expect(added.status == .noContent)
            _ = try await browser.send(
                "/api/tasks", method: .post, headers: [.authorization: "Bearer \(sam)", .contentType: "application/json"],
                body: #"{"Text":"Call Kim"}"#)
            let list = try #require(
                try JSONSerialization.jsonObject(with: Data(try await browser.graph("/api/tasks", token: sam).text.utf8))
                    as? [[String: Any]])
            #expect(list.map { $0["Text"] as? String } == ["Buy milk", "Call Kim"])
            #expect(Set(list[0].keys) == ["Id", "Owner", "Text", "Completed", "DateModified"])
            #expect(list[0]["Owner"] as? String == "b6a2f0c4-3d1e-4f5a-8b7c-9d0e1f2a3b01")
            #expect(list[0]["Completed"] as? Bool == false)

            let kim = try await Self.taskToken(browser, user: "kim@example.com")
            #expect(try await browser.graph("/api/tasks", token: kim).text == "[]")
            let id = try #require(list[0]["Id"] as? Int)
            let notHers = try await browser.send("/api/tasks/\(id)", method: .delete, headers: [.authorization: "Bearer \(kim)"], body: nil)
            #expect(notHers.status == .notFound)
            let deleted = try await browser.send("/api/tasks/\(id)", method: .delete, headers: [.authorization: "Bearer \(sam)"], body: nil)
            #expect(deleted.status == .noContent)
            #expect(
                (try JSONSerialization.jsonObject(with: Data(try await browser.graph("/api/tasks", token: sam).text.utf8)) as? [Any])?.count
                    == 1)
        }
    }

    @Test("empty Text is a 400; a read-only token cannot write; no token is refused")
    func refusals() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let sam = try await Self.taskToken(browser)
            let empty = try await browser.send(
                "/api/tasks", method: .post, headers: [.authorization: "Bearer \(sam)"], body: #"{"Text":"   "}"#)
            #expect(empty.status == .badRequest)
            #expect(empty.json["Message"] as? String == "Please provide a task description")

            let readOnly = try await Self.taskToken(browser, scope: "openid https://fabrikamb2c.onmicrosoft.com/tasks/read")
            #expect(try await browser.graph("/api/tasks", token: readOnly).status == .ok)
            let write = try await browser.send(
                "/api/tasks", method: .post, headers: [.authorization: "Bearer \(readOnly)"], body: #"{"Text":"x"}"#)
            #expect(write.status.code == 401)
            #expect(write.status.reasonPhrase == "The Scope claim does not contain the write permission.")

            let anonymous = try await browser.get("/api/tasks")
            #expect(anonymous.status == .unauthorized)
            #expect(anonymous.json["Message"] as? String == "Authorization has been denied for this request.")
            // A Graph token is not a task API token.
            let graph = try await browser.graphToken()
            #expect(try await browser.graph("/api/tasks", token: graph).status == .unauthorized)
        }
    }

    @Test(
        "the task API is its own registration: a token for the desktop app's client id is answered with scope \"/\" and refused by the API")
    func clientIDScope() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            browser.forgetCookies()
            let uri = Browser.b2cAuthorizeURI().replacingOccurrences(
                of: FormFields.encode("openid offline_access \(Clients.taskScopes)"),
                with: FormFields.encode("openid offline_access \(Clients.tasks)"))
            let page = try await browser.get(uri)
            let ctx = try #require(page.hidden("ctx"))
            let redirect = try await browser.post(
                "/fabrikamb2c.onmicrosoft.com/login",
                form: [("ctx", ctx), ("step", "b2c-signin"), ("signInName", "sam@example.com"), ("password", "Passw0rd!")])
            let response = try await browser.post(
                "/fabrikamb2c.onmicrosoft.com/B2C_1_SignUpSignIn/oauth2/v2.0/token",
                form: [
                    ("client_id", Clients.tasks), ("grant_type", "authorization_code"),
                    ("code", try #require(redirect.redirectFields["code"])),
                    ("redirect_uri", Clients.b2cNativeClient), ("code_verifier", ProofKey.verifier),
                ])
            #expect(response.json["scope"] as? String == "/")
            let token = try #require(response.json["access_token"] as? String)
            let (_, claims) = try jwtParts(token)
            #expect(claims["aud"] as? String == Clients.tasks)
            #expect(claims["scp"] == nil)
            #expect(try await browser.graph("/api/tasks", token: token).status == .unauthorized)
        }
    }

    @Test("with a state directory, tasks, refresh tokens, sign-ups and the signing key survive a restart")
    func persistence() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "emulator-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await EmulatorFixture(stateDirectory: directory)
        let (refreshToken, keyID) = try await first.withBrowser { browser in
            let sam = try await Self.taskToken(browser)
            _ = try await browser.send(
                "/api/tasks", method: .post, headers: [.authorization: "Bearer \(sam)"], body: #"{"Text":"Survive a restart"}"#)
            let tokens = try await browser.tokens()
            return (try #require(tokens["refresh_token"] as? String), first.emulator.key.keyID)
        }
        let second = try await EmulatorFixture(stateDirectory: directory)
        #expect(second.emulator.key.keyID == keyID)
        try await second.withBrowser { browser in
            #expect(try await browser.refresh(refreshToken).status == .ok)
            let sam = try await Self.taskToken(browser)
            #expect(try await browser.graph("/api/tasks", token: sam).text.contains("Survive a restart"))
        }
        let state = try String(contentsOf: directory.appending(path: "identity-state.json"), encoding: .utf8)
        #expect(!state.contains(refreshToken))
        #expect(!state.contains("Passw0rd!"))
        // The file's keys side by side, as earlier emulators wrote and read them (each domain
        // that owns some of them writes its own).
        let object = try #require(try JSONSerialization.jsonObject(with: Data(state.utf8)) as? [String: Any])
        #expect(Set(object.keys).isSuperset(of: ["refreshTokens", "tokensValidFrom", "sessions", "consents", "signedUpUsers"]))
        #expect((object["refreshTokens"] as? [String: Any])?.isEmpty == false)
        #expect((object["signedUpUsers"] as? [Any]) != nil)
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.appending(path: "tasks.json").path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    @Test("an unreadable state file is moved aside, not deleted, and the emulator starts")
    func corruptState() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "emulator-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("{not json".utf8).write(to: directory.appending(path: "tasks.json"))
        let fixture = try await EmulatorFixture(stateDirectory: directory)
        let warnings = await fixture.emulator.warnings
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("tasks.json") == true)
        let kept = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("tasks.json.unreadable-") }
        #expect(kept.count == 1)
    }
}
