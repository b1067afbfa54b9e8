import Foundation
import SesameTestSupport
import Testing

@testable import IdentityEmulator

/// The device code flow (RFC 8628) as Entra runs it: `/devicecode`, the verification page, and
/// the token endpoint's answers to a polling device.
@Suite("Device code flow")
struct DeviceCodeTests {
    static let deviceGrant = "urn:ietf:params:oauth:grant-type:device_code"

    @Test("discovery advertises device_authorization_endpoint; the answer carries Entra's fields and message")
    func authorizationResponse() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let discovery = try await browser.get("/\(Clients.contoso)/v2.0/.well-known/openid-configuration").json
            #expect(
                discovery["device_authorization_endpoint"] as? String
                    == "http://127.0.0.1:8400/\(Tenant.contoso.id)/oauth2/v2.0/devicecode")

            let answer = try await browser.startDeviceFlow()
            #expect(answer.status == .ok)
            let body = answer.json
            let userCode = try #require(body["user_code"] as? String)
            #expect(userCode.range(of: "^[A-Z0-9]{9}$", options: .regularExpression) != nil, "\(userCode)")
            #expect((body["device_code"] as? String)?.isEmpty == false)
            #expect(body["verification_uri"] as? String == "http://127.0.0.1:8400/devicelogin")
            #expect(body["expires_in"] as? Int == 900)
            #expect(body["interval"] as? Int == 5)
            #expect(
                body["message"] as? String
                    == "To sign in, use a web browser to open the page http://127.0.0.1:8400/devicelogin and enter the code \(userCode) "
                    + "to authenticate.")
        }
    }

    @Test("a polling device hears authorization_pending until the person signs in, then its tokens once; the SMS step is kept")
    func pendingThenTokens() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let started = try await browser.startDeviceFlow().json
            let deviceCode = try #require(started["device_code"] as? String)
            let userCode = try #require(started["user_code"] as? String)

            let pending = try await browser.pollDevice(deviceCode)
            #expect(pending.status == .badRequest)
            #expect(pending.json["error"] as? String == "authorization_pending")
            #expect(pending.json["error_codes"] as? [Int] == [70016])
            let again = try await browser.pollDevice(deviceCode)
            #expect(again.json["error"] as? String == "authorization_pending", "Entra never says slow_down")

            // The person elsewhere: megan, password and SMS code. Typed in lower case with a dash.
            let typed = userCode.lowercased().prefix(4) + "-" + userCode.lowercased().dropFirst(4)
            let last = try await browser.verifyDevice(userCode: String(typed), as: "megan@contoso.onmicrosoft.com")
            #expect(last.contains("You have signed in to the Sesame Directory application on your device."), "\(last.text)")
            #expect(fixture.announcements.code(for: "megan@contoso.onmicrosoft.com") != nil, "the SMS step was skipped")

            let tokens = try await browser.pollDevice(deviceCode)
            #expect(tokens.status == .ok)
            let (_, claims) = try jwtParts(try #require(tokens.json["id_token"] as? String))
            #expect(claims["preferred_username"] as? String == "megan@contoso.onmicrosoft.com")
            let (_, access) = try jwtParts(try #require(tokens.json["access_token"] as? String))
            #expect(access["amr"] as? [String] == ["pwd", "mfa"], "the token says megan passed the SMS step")
            #expect(claims["nonce"] == nil)
            #expect((tokens.json["refresh_token"] as? String)?.isEmpty == false)

            let spent = try await browser.pollDevice(deviceCode)
            #expect(spent.json["error"] as? String == "invalid_grant", "a device code gives tokens once")
        }
    }

    @Test("Cancel on the verification page is authorization_declined; an expired code is expired_token and the page refuses it")
    func declinedAndExpired() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let declined = try await browser.startDeviceFlow().json
            let page = try await browser.verifyDevice(
                userCode: try #require(declined["user_code"] as? String), as: "alex@contoso.onmicrosoft.com", cancel: true)
            #expect(page.contains("You’ve declined to sign in to Sesame Directory"), "\(page.text)")
            let refused = try await browser.pollDevice(try #require(declined["device_code"] as? String))
            #expect(refused.json["error"] as? String == "authorization_declined")

            let expiring = try await browser.startDeviceFlow().json
            fixture.clock.advance(by: 901)
            let expired = try await browser.pollDevice(try #require(expiring["device_code"] as? String))
            #expect(expired.json["error"] as? String == "expired_token")
            let late = try await browser.post(
                "/devicelogin", form: [("step", "code"), ("otc", try #require(expiring["user_code"] as? String))])
            #expect(late.contains("That code didn’t work"))
            #expect(late.hidden("ctx") == nil)

            let unknown = try await browser.pollDevice("not-a-device-code")
            #expect(unknown.json["error"] as? String == "bad_verification_code")
        }
    }

    @Test("B2C answers that it does not support the device code flow")
    func b2cRefuses() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let answer = try await browser.post(
                "/fabrikamb2c.onmicrosoft.com/b2c_1_signupsignin/oauth2/v2.0/devicecode",
                form: [("client_id", Clients.tasks), ("scope", "openid offline_access")])
            #expect((answer.json["error_description"] as? String)?.hasPrefix("AADB2C90086:") == true, "\(answer.text)")
            let poll = try await browser.post(
                "/fabrikamb2c.onmicrosoft.com/b2c_1_signupsignin/oauth2/v2.0/token",
                form: [("client_id", Clients.tasks), ("grant_type", Self.deviceGrant), ("device_code", "x")])
            #expect((poll.json["error_description"] as? String)?.hasPrefix("AADB2C90086:") == true, "\(poll.text)")
        }
    }

    @Test("loopback redirect URIs: any port on http://127.0.0.1 and http://localhost, never another host or https")
    func loopbackRedirects() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            for redirect in ["http://127.0.0.1:49152/", "http://localhost:61000/", "http://127.0.0.1:1234"] {
                let page = try await browser.signIn(
                    "alex@contoso.onmicrosoft.com", authorize: Browser.authorizeURI(redirect: redirect), tenant: Clients.contoso)
                #expect(
                    page.location?.hasPrefix(redirect.hasSuffix("/") ? redirect + "?code=" : redirect + "/?code=") == true, "\(redirect)")
                let code = try #require(page.redirectFields["code"])
                let tokens = try await browser.redeem(code, redirect: redirect)
                #expect(tokens.status == .ok, "\(tokens.text)")
                browser.forgetCookies()
            }
            for wrong in ["http://192.168.1.2:8080/", "https://127.0.0.1:8443/", "http://127.0.0.1.example.com:80/"] {
                let page = try await browser.get(Browser.authorizeURI(redirect: wrong))
                #expect(page.status == .badRequest, "\(wrong)")
                #expect(page.contains("AADSTS50011"), "\(wrong)")
            }
        }
    }
}

extension HeadlessBrowser {
    /// `POST /{tenant}/oauth2/v2.0/devicecode` for the Directory sample.
    func startDeviceFlow(tenant: String = Clients.contoso, client: String = Clients.directory) async throws -> Page {
        try await post(
            "/\(tenant)/oauth2/v2.0/devicecode", form: [("client_id", client), ("scope", "openid profile offline_access User.Read")])
    }

    /// One poll of a device.
    func pollDevice(_ deviceCode: String, tenant: String = Clients.contoso, client: String = Clients.directory) async throws -> Page {
        try await post(
            "/\(tenant)/oauth2/v2.0/token",
            form: [("client_id", client), ("grant_type", DeviceCodeTests.deviceGrant), ("device_code", deviceCode)])
    }
}
