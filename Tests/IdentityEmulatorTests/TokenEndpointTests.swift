import Foundation
import SesameTestSupport
import Testing

@testable import IdentityEmulator

/// `/oauth2/v2.0/token`: the success shape, every listed error code, refresh rotation.
@Suite("Token endpoint")
struct TokenEndpointTests {
    @Test("a redeemed code gives Entra's v2 JSON: integer lifetimes, scope echo, client_info, no-store")
    func successShape() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let redirect = try await browser.signIn("alex@contoso.onmicrosoft.com")
            let response = try await browser.redeem(try #require(redirect.redirectFields["code"]))
            #expect(response.status == .ok)
            #expect(response.headers[.cacheControl]?.contains("no-store") == true)
            let body = response.json
            #expect(body["token_type"] as? String == "Bearer")
            #expect(body["scope"] as? String == "User.Read User.ReadBasic.All profile openid email")
            let expiresIn = try #require(body["expires_in"] as? Int)
            #expect((3600...5400).contains(expiresIn))
            #expect(body["ext_expires_in"] as? Int == expiresIn)
            #expect((body["refresh_token"] as? String)?.hasPrefix("1.A") == true)
            #expect(body["client_info"] as? String != nil)
            // The first members in Entra's order.
            #expect(response.text.hasPrefix(#"{"token_type":"Bearer","scope":"#))

            let (header, claims) = try jwtParts(try #require(body["id_token"] as? String))
            #expect(header["alg"] as? String == "RS256")
            #expect(header["kid"] as? String == fixture.emulator.key.keyID)
            #expect(claims["aud"] as? String == Clients.directory)
            #expect(claims["iss"] as? String == "http://127.0.0.1:8400/\(Tenant.contoso.id)/v2.0")
            #expect(claims["tid"] as? String == Tenant.contoso.id)
            #expect(claims["nonce"] as? String == "nonce-456")
            #expect(claims["oid"] as? String == "4c1b9a54-7f4e-4f2b-9a5f-2a0c6c1d7e01")
            #expect(claims["preferred_username"] as? String == "alex@contoso.onmicrosoft.com")
            #expect(claims["name"] as? String == "Alex Wilber")
            #expect(claims["ver"] as? String == "2.0")

            // Graph access tokens are v1-shaped and carry a header nonce.
            let (atHeader, at) = try jwtParts(try #require(body["access_token"] as? String))
            #expect(atHeader["nonce"] is String)
            #expect(at["aud"] as? String == "00000003-0000-0000-c000-000000000000")
            #expect(at["iss"] as? String == "https://sts.windows.net/\(Tenant.contoso.id)/")
            #expect(at["ver"] as? String == "1.0")
            #expect(at["scp"] as? String == "User.Read User.ReadBasic.All profile openid email")
            #expect(at["upn"] as? String == "alex@contoso.onmicrosoft.com")
        }
    }

    @Test("--access-token-lifetime sets expires_in and the access token's exp, for Entra and B2C")
    func configuredAccessTokenLifetime() async throws {
        let fixture = try await EmulatorFixture(accessTokenLifetime: 120)
        try await fixture.withBrowser { browser in
            let redirect = try await browser.signIn("alex@contoso.onmicrosoft.com")
            let body = try await browser.redeem(try #require(redirect.redirectFields["code"])).json
            #expect(body["expires_in"] as? Int == 120)
            let (_, claims) = try jwtParts(try #require(body["access_token"] as? String))
            let issuedAt = try #require(claims["iat"] as? Int)
            #expect(claims["exp"] as? Int == issuedAt + 120)

            let taskToken = try await TaskAPITests.taskToken(browser)
            let (_, taskClaims) = try jwtParts(taskToken)
            #expect(taskClaims["exp"] as? Int == (taskClaims["iat"] as? Int).map { $0 + 120 })
        }
        await #expect(throws: EmulatorConfigurationError.self) { _ = try await EmulatorFixture(accessTokenLifetime: 0) }
    }

    @Test("without the profile scope the id_token has no name, oid or preferred_username")
    func profileScopeGovernsClaims() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let body = try await browser.tokens(scope: "openid offline_access User.Read")
            let (_, claims) = try jwtParts(try #require(body["id_token"] as? String))
            #expect(claims["preferred_username"] == nil)
            #expect(claims["oid"] == nil)
            #expect(claims["sub"] is String)
        }
    }

    @Test("a code works once: the second redemption is AADSTS54005")
    func codeReuse() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let code = try #require(try await browser.signIn("alex@contoso.onmicrosoft.com").redirectFields["code"])
            #expect(try await browser.redeem(code).status == .ok)
            let again = try await browser.redeem(code)
            #expect(again.status == .badRequest)
            #expect(again.json["error"] as? String == "invalid_grant")
            #expect(again.json["error_codes"] as? [Int] == [54005])
            #expect(
                (again.json["error_description"] as? String)?.hasPrefix("AADSTS54005: OAuth2 Authorization code was already redeemed")
                    == true)
            for field in ["timestamp", "trace_id", "correlation_id", "error_uri"] { #expect(again.json[field] is String, "\(field)") }
        }
    }

    @Test("a code older than ten minutes is AADSTS70008")
    func codeExpiry() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let code = try #require(try await browser.signIn("alex@contoso.onmicrosoft.com").redirectFields["code"])
            fixture.clock.advance(by: 11 * 60)
            let late = try await browser.redeem(code)
            #expect(late.json["error"] as? String == "invalid_grant")
            #expect(late.json["error_codes"] as? [Int] == [70008])
        }
    }

    @Test("a wrong PKCE verifier is AADSTS501481; plain challenges work")
    func proofKey() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let code = try #require(try await browser.signIn("alex@contoso.onmicrosoft.com").redirectFields["code"])
            let wrong = try await browser.redeem(code, verifier: "not-the-verifier-not-the-verifier-not-the-verif")
            #expect(wrong.json["error_codes"] as? [Int] == [501481])

            let plain = try await browser.get(Browser.authorizeURI(challenge: ProofKey.verifier, method: "plain"))
            let plainCode = try #require(plain.redirectFields["code"])
            #expect(try await browser.redeem(plainCode).status == .ok)
        }
    }

    @Test("the token request's redirect_uri must repeat the authorize one")
    func redirectMismatch() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let code = try #require(try await browser.signIn("alex@contoso.onmicrosoft.com").redirectFields["code"])
            let response = try await browser.redeem(code, redirect: "urn:ietf:wg:oauth:2.0:oob")
            #expect(response.json["error"] as? String == "invalid_client")
            #expect(response.json["error_codes"] as? [Int] == [70002, 50011])
            #expect(
                (response.json["error_description"] as? String)?.hasPrefix(
                    "AADSTS70002: Error validating credentials. AADSTS50011: The reply address 'urn:ietf:wg:oauth:2.0:oob'") == true)
        }
    }

    @Test("a public client that sends a secret is AADSTS700025 (401)")
    func publicClientSecret() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let code = try #require(try await browser.signIn("alex@contoso.onmicrosoft.com").redirectFields["code"])
            let response = try await browser.redeem(code, extra: [("client_secret", "s3cret")])
            #expect(response.status == .unauthorized)
            #expect(response.json["error"] as? String == "invalid_client")
            #expect(response.json["error_codes"] as? [Int] == [700025])
            #expect(!response.text.contains("s3cret"))
        }
    }

    @Test("missing parameters, unknown clients and grant types get Entra's codes")
    func requestErrors() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let noGrant = try await browser.post("/contoso.onmicrosoft.com/oauth2/v2.0/token", form: [("client_id", Clients.directory)])
            #expect(noGrant.json["error_codes"] as? [Int] == [900144])
            #expect((noGrant.json["error_description"] as? String)?.contains("'grant_type'") == true)
            let unknown = try await browser.post(
                "/contoso.onmicrosoft.com/oauth2/v2.0/token", form: [("client_id", "nope"), ("grant_type", "authorization_code")])
            #expect(unknown.json["error_codes"] as? [Int] == [700016])
            let password = try await browser.post(
                "/contoso.onmicrosoft.com/oauth2/v2.0/token", form: [("client_id", Clients.directory), ("grant_type", "password")])
            #expect(password.json["error_codes"] as? [Int] == [900144], "ROPC without a user name")
            let wrongPassword = try await browser.post(
                "/contoso.onmicrosoft.com/oauth2/v2.0/token",
                form: [
                    ("client_id", Clients.directory), ("grant_type", "password"), ("username", "alex@contoso.onmicrosoft.com"),
                    ("password", "not-it"), ("scope", "User.Read"),
                ])
            #expect(wrongPassword.json["error_codes"] as? [Int] == [50126])
            let inventedGrant = try await browser.post(
                "/contoso.onmicrosoft.com/oauth2/v2.0/token", form: [("client_id", Clients.directory), ("grant_type", "urn:example:nope")])
            #expect(inventedGrant.json["error"] as? String == "unsupported_grant_type")
            #expect(inventedGrant.json["error_codes"] as? [Int] == [70003])
            let garbage = try await browser.redeem("0.Anot-a-real-code")
            #expect(garbage.json["error_codes"] as? [Int] == [9_002_313])
            let tenant = try await browser.post("/nowhere.example/oauth2/v2.0/token", form: [("client_id", Clients.directory)])
            #expect(tenant.json["error_codes"] as? [Int] == [90002])
        }
    }

    @Test("refresh tokens rotate; the old one keeps working; idle for 90 days is AADSTS700082")
    func refreshRotation() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let first = try #require(try await browser.tokens()["refresh_token"] as? String)
            let refreshed = try await browser.refresh(first)
            #expect(refreshed.status == .ok)
            let second = try #require(refreshed.json["refresh_token"] as? String)
            #expect(second != first)
            #expect(refreshed.json["id_token"] is String)
            #expect(try await browser.refresh(first).status == .ok)

            fixture.clock.advance(by: 91 * 86_400)
            let idle = try await browser.refresh(second)
            #expect(idle.json["error"] as? String == "invalid_grant")
            #expect(idle.json["error_codes"] as? [Int] == [700082])
            #expect((idle.json["error_description"] as? String)?.contains("expired due to inactivity") == true)
        }
    }

    @Test("after revokeSignInSessions the refresh token is refused (AADSTS50173) and the session is gone")
    func revocation() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let token = try #require(try await browser.tokens()["refresh_token"] as? String)
            fixture.clock.advance(by: 1)
            let revoke = try await browser.post("/.emulator/users/alex@contoso.onmicrosoft.com/revokeSignInSessions", form: [])
            #expect(revoke.status == .ok)
            let refused = try await browser.refresh(token)
            #expect(refused.json["error"] as? String == "invalid_grant")
            #expect(refused.json["error_codes"] as? [Int] == [50173])
            let page = try await browser.get(Browser.authorizeURI())
            #expect(page.contains(#"id="\#(SignInPageIDs.userName)""#))
        }
    }

    @Test("asking a refresh for a permission never consented is consent_required (AADSTS65001)")
    func refreshNeedsConsent() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let token = try #require(try await browser.tokens(scope: "openid profile offline_access User.Read")["refresh_token"] as? String)
            let response = try await browser.refresh(token, scope: "Mail.Read offline_access")
            #expect(response.json["error"] as? String == "invalid_grant")
            #expect(response.json["suberror"] as? String == "consent_required")
            #expect(response.json["error_codes"] as? [Int] == [65001])
        }
    }
}

@Suite("Discovery and keys")
struct DiscoveryTests {
    @Test("common's issuer is the {tenantid} template; a tenant's is concrete; endpoints follow the path")
    func entraDiscovery() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let common = try await browser.get("/common/v2.0/.well-known/openid-configuration").json
            #expect(common["issuer"] as? String == "http://127.0.0.1:8400/{tenantid}/v2.0")
            #expect(common["authorization_endpoint"] as? String == "http://127.0.0.1:8400/common/oauth2/v2.0/authorize")
            #expect(common["token_endpoint"] as? String == "http://127.0.0.1:8400/common/oauth2/v2.0/token")
            #expect(common["jwks_uri"] as? String == "http://127.0.0.1:8400/common/discovery/v2.0/keys")
            #expect(common["response_modes_supported"] as? [String] == ["query", "fragment", "form_post"])
            #expect(common["scopes_supported"] as? [String] == ["openid", "profile", "email", "offline_access"])

            let tenant = try await browser.get("/contoso.onmicrosoft.com/v2.0/.well-known/openid-configuration").json
            #expect(tenant["issuer"] as? String == "http://127.0.0.1:8400/\(Tenant.contoso.id)/v2.0")
        }
    }

    @Test(
        "as Entra answers for every authority form: a tenant's endpoints by its id (its domain name too), no default port anywhere",
        arguments: ["contoso.onmicrosoft.com", Tenant.contoso.id, "organizations", "common"])
    func authorityForms(tenant: String) async throws {
        // The emulator as login.microsoftonline.com on port 443 (a base URL with no port, as it
        // prints one then).
        let fixture = try await EmulatorFixture(base: URL(string: "https://login.microsoftonline.com")!)
        try await fixture.withBrowser { browser in
            let document = try await browser.get("/\(tenant)/v2.0/.well-known/openid-configuration").json
            let named = ["organizations", "common"].contains(tenant) ? tenant : Tenant.contoso.id
            #expect(document["token_endpoint"] as? String == "https://login.microsoftonline.com/\(named)/oauth2/v2.0/token")
            #expect(document["authorization_endpoint"] as? String == "https://login.microsoftonline.com/\(named)/oauth2/v2.0/authorize")
            #expect(document["jwks_uri"] as? String == "https://login.microsoftonline.com/\(named)/discovery/v2.0/keys")
            let issuer = named == tenant && ["organizations", "common"].contains(tenant) ? "{tenantid}" : Tenant.contoso.id
            #expect(document["issuer"] as? String == "https://login.microsoftonline.com/\(issuer)/v2.0")
            let text = String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
            #expect(!text.contains(":443"), "a default port in \(text)")
            // The v1.0 document names the same tenant, with v1's issuer and paths.
            let one = try await browser.get("/\(tenant)/.well-known/openid-configuration").json
            #expect((one["token_endpoint"] as? String)?.hasSuffix("/\(named)/oauth2/token") == true, "\(one)")
            #expect((one["issuer"] as? String)?.hasPrefix("https://sts.windows.net/") == true)
        }
        // The ID token's issuer too: what azure-identity builds its AuthenticationRecord from (the
        // bundled apps are single-tenant: they sign in at their tenant's authorities).
        guard !["organizations", "common"].contains(tenant) else { return }
        try await fixture.withBrowser { browser in
            let redirect = try await browser.signIn("alex@contoso.onmicrosoft.com", tenant: tenant)
            let tokens = try await browser.redeem(try #require(redirect.redirectFields["code"]), tenant: tenant).json
            let (_, claims) = try jwtParts(try #require(tokens["id_token"] as? String))
            #expect(claims["iss"] as? String == "https://login.microsoftonline.com/\(Tenant.contoso.id)/v2.0")
        }
    }

    @Test("instance discovery as MSAL asks it: the cloud's aliases and the tenant's document; a host no cloud has is invalid_instance")
    func instanceDiscovery() async throws {
        let fixture = try await EmulatorFixture(base: URL(string: "https://login.microsoftonline.com")!)
        try await fixture.withBrowser { browser in
            let endpoint = "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize"
            let answer = try await browser.get(
                "/common/discovery/instance?" + FormEncoding.encode([("api-version", "1.1"), ("authorization_endpoint", endpoint)])
            ).json
            #expect(
                answer["tenant_discovery_endpoint"] as? String
                    == "https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0/.well-known/openid-configuration")
            let metadata = try #require(answer["metadata"] as? [[String: Any]])
            let first = try #require(metadata.first)
            #expect(first["preferred_network"] as? String == "login.microsoftonline.com")
            #expect(first["preferred_cache"] as? String == "login.windows.net")
            #expect((first["aliases"] as? [String])?.contains("sts.windows.net") == true)
            let elsewhere = try await browser.get(
                "/common/discovery/instance?"
                    + FormEncoding.encode([
                        ("api-version", "1.1"), ("authorization_endpoint", "https://login.example.com/common/oauth2/authorize"),
                    ]))
            #expect(elsewhere.status == .badRequest)
            #expect(elsewhere.json["error"] as? String == "invalid_instance")
        }
        // On a port of its own the emulator lists its own host first, with the port.
        let local = try await EmulatorFixture()
        try await local.withBrowser { browser in
            let endpoint = "http://127.0.0.1:8400/organizations/oauth2/v2.0/authorize"
            let answer = try await browser.get(
                "/common/discovery/instance?" + FormEncoding.encode([("api-version", "1.1"), ("authorization_endpoint", endpoint)])
            ).json
            #expect(((answer["metadata"] as? [[String: Any]])?.first?["aliases"] as? [String]) == ["127.0.0.1:8400"])
        }
    }

    @Test("JWKS keys carry a per-key issuer, x5c and kid == x5t, and verify the id_token")
    func keys() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let keys = try #require(try await browser.get("/common/discovery/v2.0/keys").json["keys"] as? [[String: Any]])
            let key = try #require(keys.first)
            #expect(key["issuer"] as? String == "http://127.0.0.1:8400/{tenantid}/v2.0")
            #expect(key["kid"] as? String == key["x5t"] as? String)
            #expect((key["x5c"] as? [String])?.count == 1)
            #expect(key["kty"] as? String == "RSA")
            let tenantKeys = try #require(
                try await browser.get("/\(Tenant.contoso.id)/discovery/v2.0/keys").json["keys"] as? [[String: Any]])
            #expect(tenantKeys.first?["issuer"] as? String == "http://127.0.0.1:8400/\(Tenant.contoso.id)/v2.0")

            let idToken = try #require(try await browser.tokens()["id_token"] as? String)
            #expect(try verifySignature(idToken, jwk: key))
            var forged = idToken.split(separator: ".").map(String.init)
            forged[1] = Base64URL.encode(Data(#"{"aud":"someone-else"}"#.utf8))
            #expect(try !verifySignature(forged.joined(separator: "."), jwk: key))
        }
    }

    @Test("B2C discovery in both endpoint forms: trailing-slash issuer, policy endpoints, keys without issuer")
    func b2cDiscovery() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let pathForm = try await browser.get("/fabrikamb2c.onmicrosoft.com/B2C_1_SignUpSignIn/v2.0/.well-known/openid-configuration")
                .json
            let queryForm = try await browser.get("/fabrikamb2c.onmicrosoft.com/v2.0/.well-known/openid-configuration?p=b2c_1_signupsignin")
                .json
            for document in [pathForm, queryForm] {
                #expect(document["issuer"] as? String == "http://127.0.0.1:8400/\(Tenant.fabrikamB2C.id)/v2.0/")
                #expect(
                    document["authorization_endpoint"] as? String
                        == "http://127.0.0.1:8400/fabrikamb2c.onmicrosoft.com/b2c_1_signupsignin/oauth2/v2.0/authorize")
                #expect(document["scopes_supported"] as? [String] == ["openid"])
            }
            let keys = try #require(
                try await browser.get("/fabrikamb2c.onmicrosoft.com/b2c_1_signupsignin/discovery/v2.0/keys").json["keys"]
                    as? [[String: Any]])
            #expect(keys.first?["issuer"] == nil)
            #expect(keys.first?["kid"] is String)
            let unknown = try await browser.get("/fabrikamb2c.onmicrosoft.com/B2C_1_Nope/v2.0/.well-known/openid-configuration")
            #expect(unknown.status == .badRequest)
            #expect((unknown.json["error_description"] as? String)?.contains("B2C_1_Nope") == true)
        }
    }
}
