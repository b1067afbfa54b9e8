import Foundation
import SesameTestSupport
import Testing

@testable import IdentityEmulator

extension Browser {
    static func b2cAuthorizeURI(
        policy: String = "B2C_1_SignUpSignIn", queryForm: Bool = false, state: String = "b2c-state", extra: [(String, String)] = []
    ) -> String {
        var fields = FormFields([
            ("client_id", Clients.tasks), ("response_type", "code"), ("redirect_uri", Clients.b2cNativeClient),
            ("scope", "openid offline_access \(Clients.taskScopes)"), ("state", state), ("nonce", "b2c-nonce"),
            ("code_challenge", ProofKey.challenge), ("code_challenge_method", "S256"),
        ])
        for (name, value) in extra { fields.append(name, value) }
        if queryForm {
            fields.append("p", policy)
            return "/fabrikamb2c.onmicrosoft.com/oauth2/v2.0/authorize?\(fields.encoded)"
        }
        return "/fabrikamb2c.onmicrosoft.com/\(policy)/oauth2/v2.0/authorize?\(fields.encoded)"
    }

    /// Signs a B2C user in on the combined page and returns the redirect.
    func b2cSignIn(_ email: String, password: String = "Passw0rd!", queryForm: Bool = false) async throws -> Page {
        let page = try await get(Browser.b2cAuthorizeURI(queryForm: queryForm))
        let ctx = try #require(page.hidden("ctx"))
        return try await post(
            "/fabrikamb2c.onmicrosoft.com/login",
            form: [("ctx", ctx), ("step", "b2c-signin"), ("signInName", email), ("password", password)])
    }

    func b2cRedeem(_ code: String, policy: String = "B2C_1_SignUpSignIn") async throws -> Page {
        try await post(
            "/fabrikamb2c.onmicrosoft.com/\(policy)/oauth2/v2.0/token",
            form: [
                ("client_id", Clients.tasks), ("grant_type", "authorization_code"), ("code", code),
                ("redirect_uri", Clients.b2cNativeClient),
                ("code_verifier", ProofKey.verifier), ("scope", "openid offline_access \(Clients.taskScopes)"), ("client_info", "1"),
            ])
    }
}

@Suite("Azure AD B2C")
struct B2CTests {
    @Test("sam signs in through the combined page, in both endpoint forms, and gets B2C's token shape")
    func samSignsIn() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let page = try await browser.get(Browser.b2cAuthorizeURI())
            for id in [#"id="signInName""#, #"id="password""#, #"id="next""#, #"id="forgotPassword""#, #"id="createAccount""#] {
                #expect(page.contains(id), "\(id)")
            }
            #expect(page.contains(#"action="/fabrikamb2c.onmicrosoft.com/login""#))

            for queryForm in [false, true] {
                browser.forgetCookies()
                let redirect = try await browser.b2cSignIn("sam@example.com", queryForm: queryForm)
                let location = try #require(redirect.location)
                #expect(location.hasPrefix(Clients.b2cNativeClient + "?state=b2c-state&code=eyJraWQi"))
                let response = try await browser.b2cRedeem(try #require(redirect.redirectFields["code"]))
                #expect(response.status == .ok)
                let body = response.json
                // B2C writes numbers as strings.
                #expect(body["expires_in"] as? String == "3600")
                #expect(body["id_token_expires_in"] as? String == "3600")
                #expect(body["refresh_token_expires_in"] as? String == "1209600")
                #expect(Int(body["not_before"] as? String ?? "") != nil)
                #expect(Int(body["expires_on"] as? String ?? "") != nil)
                #expect(body["resource"] as? String == ClientRegistration.taskAPIAppID)
                #expect(body["profile_info"] is String)

                let (_, idClaims) = try jwtParts(try #require(body["id_token"] as? String))
                #expect(idClaims["iss"] as? String == "http://127.0.0.1:8400/\(Tenant.fabrikamB2C.id)/v2.0/")
                #expect(idClaims["tfp"] as? String == "B2C_1_SignUpSignIn")
                #expect(idClaims["emails"] as? [String] == ["sam@example.com"])
                #expect(idClaims["ver"] as? String == "1.0")
                #expect(idClaims["nonce"] as? String == "b2c-nonce")
                let (_, access) = try jwtParts(try #require(body["access_token"] as? String))
                #expect(access["aud"] as? String == ClientRegistration.taskAPIAppID)
                #expect(access["scp"] as? String == "read write")

                let clientInfo = try #require(body["client_info"] as? String)
                let infoData = try #require(Base64URL.decode(clientInfo))
                let info = try #require(try JSONSerialization.jsonObject(with: infoData) as? [String: String])
                #expect(info["uid"] == "b6a2f0c4-3d1e-4f5a-8b7c-9d0e1f2a3b01-b2c_1_signupsignin")
                #expect(info["utid"] == Tenant.fabrikamB2C.id)
            }
        }
    }

    @Test("a wrong password is shown inline; an unknown email too")
    func wrongPassword() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let wrong = try await browser.b2cSignIn("sam@example.com", password: "nope")
            #expect(wrong.location == nil)
            #expect(wrong.contains("Your password is incorrect."))
            let unknown = try await browser.b2cSignIn("nobody@example.com")
            #expect(unknown.contains("We can&#39;t seem to find your account."))
        }
    }

    @Test("“Forgot your password?” answers access_denied with AADB2C90118")
    func forgotPassword() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let ctx = try #require(try await browser.get(Browser.b2cAuthorizeURI()).hidden("ctx"))
            let redirect = try await browser.post(
                "/fabrikamb2c.onmicrosoft.com/login", form: [("ctx", ctx), ("step", "b2c-signin"), ("action", "forgotPassword")])
            #expect(redirect.redirectFields["error"] == "access_denied")
            let description = try #require(redirect.redirectFields["error_description"])
            #expect(description.hasPrefix("AADB2C90118: The user has forgotten their password.\r\nCorrelation ID: "))
            #expect(redirect.redirectFields["state"] == "b2c-state")
        }
    }

    @Test("sign-up creates a user who can then sign in; Cancel answers AADB2C90091")
    func signUp() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            var ctx = try #require(try await browser.get(Browser.b2cAuthorizeURI()).hidden("ctx"))
            let form = try await browser.post(
                "/fabrikamb2c.onmicrosoft.com/login", form: [("ctx", ctx), ("step", "b2c-signin"), ("action", "signUp")])
            #expect(form.contains(#"id="newPassword""#))
            let cancelled = try await browser.post(
                "/fabrikamb2c.onmicrosoft.com/login", form: [("ctx", ctx), ("step", "b2c-signup"), ("action", "cancel")])
            #expect(cancelled.redirectFields["error"] == "access_denied")
            #expect(
                cancelled.redirectFields["error_description"]?.hasPrefix(
                    "AADB2C90091: The user has cancelled entering self-asserted information.") == true)

            ctx = try #require(try await browser.get(Browser.b2cAuthorizeURI()).hidden("ctx"))
            let mismatch = try await browser.post(
                "/fabrikamb2c.onmicrosoft.com/login",
                form: [
                    ("ctx", ctx), ("step", "b2c-signup"), ("action", "create"), ("email", "lee@example.com"),
                    ("newPassword", "Str0ng!pass"), ("reenterPassword", "Str0ng!other"), ("givenName", "Lee"), ("surname", "Chen"),
                ])
            #expect(mismatch.contains("The password entry fields do not match."))
            #expect(mismatch.contains(#"value="lee@example.com""#))
            let created = try await browser.post(
                "/fabrikamb2c.onmicrosoft.com/login",
                form: [
                    ("ctx", ctx), ("step", "b2c-signup"), ("action", "create"), ("email", "lee@example.com"),
                    ("newPassword", "Str0ng!pass"), ("reenterPassword", "Str0ng!pass"), ("givenName", "Lee"), ("surname", "Chen"),
                ])
            let body = try await browser.b2cRedeem(try #require(created.redirectFields["code"])).json
            let (_, claims) = try jwtParts(try #require(body["id_token"] as? String))
            #expect(claims["newUser"] as? Bool == true)
            #expect(claims["name"] as? String == "Lee Chen")

            browser.forgetCookies()
            let again = try await browser.b2cSignIn("lee@example.com", password: "Str0ng!pass")
            #expect(again.redirectFields["code"] != nil)
        }
    }

    @Test("refresh tokens are bound to their policy (AADB2C90088)")
    func refreshBoundToPolicy() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let redirect = try await browser.b2cSignIn("sam@example.com")
            let code = try #require(redirect.redirectFields["code"])
            let token = try #require(try await browser.b2cRedeem(code).json["refresh_token"] as? String)
            let same = try await browser.post(
                "/fabrikamb2c.onmicrosoft.com/B2C_1_SignUpSignIn/oauth2/v2.0/token",
                form: [("client_id", Clients.tasks), ("grant_type", "refresh_token"), ("refresh_token", token)])
            #expect(same.status == .ok)
            #expect(same.json["refresh_token"] as? String != token)
            let other = try await browser.post(
                "/fabrikamb2c.onmicrosoft.com/oauth2/v2.0/token?p=B2C_1_PasswordReset",
                form: [("client_id", Clients.tasks), ("grant_type", "refresh_token"), ("refresh_token", token)])
            #expect(other.json["error"] as? String == "invalid_grant")
            #expect(
                (other.json["error_description"] as? String)?.hasPrefix(
                    "AADB2C90088: The provided grant has not been issued for this endpoint.") == true)
            #expect(other.json["error_codes"] == nil)
        }
    }

    @Test("the password-reset policy: email, the code printed as mfa-code, a new password that then signs in")
    func passwordReset() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let page = try await browser.get(Browser.b2cAuthorizeURI(policy: "B2C_1_PasswordReset"))
            #expect(page.contains("Reset your password"))
            let ctx = try #require(page.hidden("ctx"))
            let codePage = try await browser.post(
                "/fabrikamb2c.onmicrosoft.com/login",
                form: [("ctx", ctx), ("step", "b2c-reset"), ("action", "sendCode"), ("email", "kim@example.com")])
            #expect(codePage.contains(#"id="emailVerificationCode""#))
            let code = try #require(fixture.announcements.code(for: "kim@example.com"))
            let wrong = try await browser.post(
                "/fabrikamb2c.onmicrosoft.com/login",
                form: [("ctx", ctx), ("step", "b2c-reset"), ("action", "verifyCode"), ("emailVerificationCode", "x")])
            #expect(wrong.contains("That code is incorrect."))
            _ = try await browser.post(
                "/fabrikamb2c.onmicrosoft.com/login",
                form: [("ctx", ctx), ("step", "b2c-reset"), ("action", "verifyCode"), ("emailVerificationCode", code)])
            let done = try await browser.post(
                "/fabrikamb2c.onmicrosoft.com/login",
                form: [
                    ("ctx", ctx), ("step", "b2c-reset"), ("action", "setPassword"), ("newPassword", "N3w!Passw0rd"),
                    ("reenterPassword", "N3w!Passw0rd"),
                ])
            let redirect = try #require(done.redirectFields["code"])
            let body = try await browser.b2cRedeem(redirect, policy: "B2C_1_PasswordReset").json
            let (_, claims) = try jwtParts(try #require(body["id_token"] as? String))
            #expect(claims["tfp"] as? String == "B2C_1_PasswordReset")

            browser.forgetCookies()
            #expect(try await browser.b2cSignIn("kim@example.com").contains("Your password is incorrect."))
            #expect(try await browser.b2cSignIn("kim@example.com", password: "N3w!Passw0rd").redirectFields["code"] != nil)
        }
    }

    @Test("B2C refuses scopes it does not know, and prompt=none without a session")
    func b2cErrors() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let scope = try await browser.get(
                Browser.b2cAuthorizeURI().replacingOccurrences(of: "scope=openid", with: "scope=User.Read+openid"))
            #expect(scope.redirectFields["error_description"]?.hasPrefix("AADB2C90117:") == true)
            let none = try await browser.get(Browser.b2cAuthorizeURI(extra: [("prompt", "none")]))
            #expect(none.redirectFields["error_description"]?.hasPrefix("AADB2C90077:") == true)
        }
    }
}
