import Foundation
import HTTPTypes
import SesameTestSupport
import Testing

@testable import IdentityEmulator

/// The emulator is as strict as a real tenant where a first real user would notice: permissions
/// limit what Graph answers, consent can be an administrator's alone, keys roll over, MFA can be
/// demanded on a refresh, and the token endpoint throttles.
@Suite("A strict tenant")
struct StrictTenantTests {
    @Test("User.ReadBasic.All reads other users' basic profile only; /me is whole; User.Read.All (admin consent) reads everything")
    func basicProfile() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let basic = try await browser.graphToken()
            let megan = try await browser.graph("/v1.0/users/megan@contoso.onmicrosoft.com", token: basic).json
            #expect(megan["displayName"] as? String == "Megan Bowen")
            #expect(megan["mail"] as? String == "megan@contoso.com")
            #expect(megan["mobilePhone"] is NSNull, "a basic-profile token read a phone number")
            #expect(megan["businessPhones"] as? [String] == [])
            #expect(megan["jobTitle"] is NSNull)
            let me = try await browser.graph("/v1.0/me", token: basic).json
            #expect(me["jobTitle"] as? String == "Marketing Assistant", "one's own profile is whole")
            let list = try await browser.graph("/v1.0/users?$filter=startswith(displayName,'Megan')", token: basic).json
            #expect(((list["value"] as? [[String: Any]])?.first?["mobilePhone"]) is NSNull)

            // User.Read.All needs an administrator: the user is told so, and the app gets AADSTS90094.
            browser.forgetCookies()
            let scope = "openid profile offline_access User.Read User.Read.All"
            var page = try await browser.signIn("alex@contoso.onmicrosoft.com", authorize: Browser.authorizeURI(scope: scope))
            #expect(page.contains("Need admin approval"))
            let ctx = try #require(page.hidden("ctx"))
            page = try await browser.post("/contoso.onmicrosoft.com/login", form: [("ctx", ctx), ("step", "admin-approval")])
            #expect(page.redirectFields["error"] == "access_denied")
            #expect(page.redirectFields["error_description"]?.hasPrefix("AADSTS90094: The grant requires admin permission.") == true)
            // Logged as every refusal is, with the ids the app was sent.
            let description = try #require(page.redirectFields["error_description"])
            let traceID = try #require(description.split(separator: "\r\n").first { $0.hasPrefix("Trace ID: ") }?.dropFirst(10))
            #expect(fixture.announcements.all.contains { $0.hasPrefix("refused AADSTS90094 request-id \(traceID) correlation-id ") })

            // An administrator grants it for the tenant: the same sign-in now gets every property.
            let granted = try await browser.post("/.emulator/clients/\(Clients.directory)/adminConsent", form: [])
            #expect(granted.status == .ok)
            browser.forgetCookies()
            let full = try #require(try await browser.tokens(scope: scope)["access_token"] as? String)
            let whole = try await browser.graph("/v1.0/users/megan@contoso.onmicrosoft.com", token: full).json
            #expect(whole["mobilePhone"] as? String == "+1 412 555 0199")
        }
    }

    @Test("a tenant that allows no user consent shows \"Need admin approval\" for any app until an administrator approves it")
    func adminOnlyConsent() async throws {
        let fixture = try await EmulatorFixture(userConsent: .adminOnly)
        try await fixture.withBrowser { browser in
            let page = try await browser.signIn("alex@contoso.onmicrosoft.com")
            #expect(page.contains("Need admin approval"))
            #expect(page.contains("Sesame Directory needs permission to access resources in your organization"))
            _ = try await browser.post("/.emulator/clients/\(Clients.directory)/adminConsent", form: [])
            browser.forgetCookies()
            let approved = try await browser.signIn("alex@contoso.onmicrosoft.com")
            #expect(approved.redirectFields["code"] != nil, "an approved app still asked")
        }
        let lenient = try await EmulatorFixture(userConsent: .adminOnly, lenient: true)
        try await lenient.withBrowser { browser in
            let page = try await browser.signIn("alex@contoso.onmicrosoft.com")
            #expect(page.redirectFields["code"] != nil, "--lenient always lets users consent")
        }
    }

    @Test("public client flows off: the device code endpoint answers AADSTS7000218, and the refusal is logged with its ids")
    func publicClientFlowsOff() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let policy = #"{"tenants": {"contoso.onmicrosoft.com": {"publicClientFlows": false}}}"#
            #expect(try await browser.send("/.emulator/policy", method: .post, headers: [:], body: policy).status == .ok)
            let answer = try await browser.post(
                "/contoso.onmicrosoft.com/oauth2/v2.0/devicecode", form: [("client_id", Clients.directory), ("scope", "User.Read")],
                headers: [.init("client-request-id")!: "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"])
            #expect(answer.json["error_codes"] as? [Int] == [7_000_218])
            let traceID = try #require(answer.json["trace_id"] as? String)
            #expect(
                fixture.announcements.all.contains(
                    "refused AADSTS7000218 request-id \(traceID) correlation-id 0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"),
                "\(fixture.announcements.all)")
        }
    }

    @Test("keys roll over on command: both are published, new tokens carry the new kid, tokens signed by the old one still work")
    func keyRollover() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let before = try await browser.graphToken()
            let oldKid = try #require(try jwtParts(before).header["kid"] as? String)
            let rotated = try await browser.post("/.emulator/keys/rotate", form: [])
            let newKid = try #require(rotated.json["kid"] as? String)
            #expect(newKid != oldKid)
            let keys = try await browser.get("/contoso.onmicrosoft.com/discovery/v2.0/keys").json["keys"] as? [[String: Any]]
            #expect(keys?.compactMap { $0["kid"] as? String } == [newKid, oldKid])
            browser.forgetCookies()
            let tokens = try await browser.tokens()
            #expect(try jwtParts(try #require(tokens["id_token"] as? String)).header["kid"] as? String == newKid)
            #expect(try await browser.graph("/v1.0/me", token: before).status == .ok, "a token signed by the previous key was refused")
        }
        var configuration = EmulatorConfiguration()
        configuration.keyRolloverInterval = 3600
        let scheduled = try await IdentityEmulator(configuration: configuration)
        let first = scheduled.key.keyID
        configuration.clock.advance(by: 3601)
        #expect(scheduled.key.keyID != first, "the schedule did not roll the key over")
    }

    @Test(
        "MFA demanded on refresh: AADSTS50076 with a claims challenge; sending the claims asks alex to register a phone and type its code, then refresh works"
    )
    func mfaOnRefresh() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let tokens = try await browser.tokens()
            let refreshToken = try #require(tokens["refresh_token"] as? String)
            _ = try await browser.post("/.emulator/users/alex@contoso.onmicrosoft.com/requireMFA", form: [])
            let refused = try await browser.refresh(refreshToken).json
            #expect(refused["error"] as? String == "invalid_grant")
            #expect(refused["error_codes"] as? [Int] == [50076])
            #expect(refused["suberror"] as? String == "basic_action")
            let claims = try #require(refused["claims"] as? String)
            #expect(claims.contains("capolids"))

            // The session does not answer the challenge: password, then the SMS code.
            var page = try await browser.get(Browser.authorizeURI(extra: [("claims", claims)]))
            let ctx = try #require(page.hidden("ctx"))
            page = try await browser.post(
                "/contoso.onmicrosoft.com/login", form: [("ctx", ctx), ("step", "username"), ("loginfmt", "alex@contoso.onmicrosoft.com")])
            page = try await browser.post(
                "/contoso.onmicrosoft.com/login", form: [("ctx", ctx), ("step", "password"), ("passwd", "Passw0rd!")])
            // alex registered no second factor: Entra asks him to, then texts the phone he gave.
            #expect(page.contains("More information required"), "no registration although the claims demand MFA")
            page = try await browser.post("/contoso.onmicrosoft.com/login", form: [("ctx", ctx), ("step", "proofup")])
            page = try await browser.post(
                "/contoso.onmicrosoft.com/login", form: [("ctx", ctx), ("step", "proofup-phone"), ("phone", "+1 425 555 0100")])
            #expect(page.contains(SignInPageIDs.smsCode), "no SMS step although the claims demand MFA")
            let code = try #require(fixture.announcements.code(for: "alex@contoso.onmicrosoft.com"))
            page = try await browser.post("/contoso.onmicrosoft.com/login", form: [("ctx", ctx), ("step", "otc"), ("otc", code)])
            page = try await browser.post("/contoso.onmicrosoft.com/login", form: [("ctx", ctx), ("step", "kmsi"), ("kmsi", "no")])
            let fresh = try await browser.redeem(try #require(page.redirectFields["code"])).json
            #expect(fresh["access_token"] != nil)
            let again = try await browser.refresh(try #require(fresh["refresh_token"] as? String))
            #expect(again.status == .ok, "the refresh after the MFA sign-in was refused")
        }
    }

    @Test("the token endpoint throttles on command: 429 with Retry-After and AADSTS50196, then answers again")
    func throttling() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let tokens = try await browser.tokens()
            let refreshToken = try #require(tokens["refresh_token"] as? String)
            _ = try await browser.post("/.emulator/throttle?requests=1&retryAfter=7", form: [])
            let throttled = try await browser.refresh(refreshToken)
            #expect(throttled.status == .tooManyRequests)
            #expect(throttled.headers[.retryAfter] == "7")
            #expect(throttled.json["error_codes"] as? [Int] == [50196])
            #expect(try await browser.refresh(refreshToken).status == .ok)
        }
    }
}
