import Foundation
import HTTPTypes
import SesameTestSupport
import Testing

@testable import IdentityEmulator

/// Every second factor Entra asks for, as a user with a phone meets it on the pages: Microsoft
/// Authenticator's number matching, an authenticator app's code, a Temporary Access Pass that
/// onboards a user who then sets up the app, the registration campaign, authentication strengths.
@Suite("Second factors")
struct SecondFactorTests {
    static let megan = "megan@contoso.onmicrosoft.com"
    static let alex = "alex@contoso.onmicrosoft.com"

    /// Starts the Directory sample's sign-in and types `user`'s name and password.
    static func afterPassword(_ browser: Browser, _ user: String) async throws -> (ctx: String, page: Browser.Page) {
        let ctx = try #require(try await browser.get(Browser.authorizeURI()).hidden("ctx"))
        _ = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "username"), ("loginfmt", user)])
        return (ctx, try await browser.post("/common/login", form: [("ctx", ctx), ("step", "password"), ("passwd", "Passw0rd!")]))
    }

    static func setMethods(_ browser: Browser, _ user: String, _ body: String) async throws -> [String: Any] {
        let answer = try await browser.send(
            "/.emulator/users/\(user)/methods", method: .post, headers: [.contentType: "application/json"], body: body)
        #expect(answer.status == .ok, "\(answer.text)")
        return answer.json
    }

    static func endAuth(_ browser: Browser, ctx: String) async throws -> [String: Any] {
        try await browser.send(
            "/contoso.onmicrosoft.com/SAS/EndAuth", method: .post, headers: [.contentType: "application/json"],
            body: #"{"AuthMethodId": "PhoneAppNotification", "Method": "EndAuth", "FlowToken": "\#(ctx)", "PollCount": 1}"#
        ).json
    }

    static func setPolicy(_ browser: Browser, _ policy: String) async throws {
        let answer = try await browser.send("/.emulator/policy", method: .post, headers: [:], body: policy)
        #expect(answer.status == .ok, "\(answer.text)")
    }

    static func finish(_ browser: Browser, ctx: String, from page: Browser.Page) async throws -> [String: Any] {
        #expect(page.contains("Stay signed in?"), "\(page.text.prefix(400))")
        let consent = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "kmsi"), ("kmsi", "yes")])
        let redirect =
            consent.contains(SignInPageIDs.permissionList)
            ? try await browser.post("/common/login", form: [("ctx", ctx), ("step", "consent"), ("consent", "accept")]) : consent
        let code = try #require(redirect.redirectFields["code"], "no code: \(redirect.text.prefix(300))")
        return try await browser.redeem(code).json
    }

    static func amr(_ tokens: [String: Any]) throws -> [String] {
        let token = try #require(tokens["access_token"] as? String)
        return try #require(try jwtParts(token).claims["amr"] as? [String])
    }

    @Test("megan approves Microsoft Authenticator's request with the number the page shows; a wrong number is denied")
    func numberMatching() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            _ = try await Self.setMethods(browser, Self.megan, #"{"methods": ["microsoftAuthenticator", "sms"]}"#)
            var (ctx, page) = try await Self.afterPassword(browser, Self.megan)
            // System-preferred MFA: the strongest registered method first, the others a link away.
            #expect(page.contains("Approve sign in request"))
            #expect(page.contains("Open your Authenticator app, and enter the number shown to sign in."))
            #expect(page.contains(#"id="\#(SignInPageIDs.signInAnotherWay)""#))
            let number = try #require(page.approvalNumber)
            #expect((10...99).contains(number))
            // What the presenter's terminal shows, like an SMS code.
            #expect(fixture.announcements.all.contains("authenticator-push \(Self.megan) \(number)"))

            // Nothing answered: the page keeps waiting; posting early shows the same number.
            #expect(try await Self.endAuth(browser, ctx: ctx)["ResultValue"] as? String == "AuthenticationPending")
            let early = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "sas")])
            #expect(early.approvalNumber == number)

            // The wrong number on the phone: denied.
            try await browser.phone(Self.megan, answer: "approve", number: number == 99 ? 10 : number + 1)
            #expect(try await Self.endAuth(browser, ctx: ctx)["ResultValue"] as? String == "PhoneAppDenied")
            let denied = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "sas")])
            #expect(denied.contains("Request denied"))
            #expect(denied.contains("We sent an identity verification request to your mobile device, but you denied it."))

            // "Send another request": a new number, approved this time.
            page = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "sas-retry")])
            let second = try #require(page.approvalNumber)
            try await browser.phone(Self.megan, answer: "approve", number: second)
            let approved = try await Self.endAuth(browser, ctx: ctx)
            #expect(approved["ResultValue"] as? String == "Success")
            #expect(approved["Success"] as? Bool == true)
            page = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "sas")])
            let tokens = try await Self.finish(browser, ctx: ctx, from: page)
            #expect(try Self.amr(tokens) == ["pwd", "rsa", "mfa"])
            _ = ctx
        }
    }

    @Test("no answer from the phone ends as Entra's \"We didn't hear from you\"; \"No, it's not me\" refuses the sign-in")
    func unansweredAndReported() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            _ = try await Self.setMethods(browser, Self.megan, #"{"methods": ["microsoftAuthenticator"]}"#)
            let (ctx, page) = try await Self.afterPassword(browser, Self.megan)
            #expect(page.approvalNumber != nil)
            fixture.clock.advance(by: 56)
            #expect(try await Self.endAuth(browser, ctx: ctx)["ResultValue"] as? String == "PhoneAppNoResponse")
            let late = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "sas")])
            #expect(late.contains("We didn&#39;t hear from you"))
            // The phone answering after the timeout finds nothing waiting.
            let answer = try await browser.send(
                "/.emulator/users/\(Self.megan)/authenticator", method: .post, headers: [.contentType: "application/json"],
                body: #"{"answer": "deny"}"#)
            #expect(answer.status == .notFound)

            let again = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "sas-retry")])
            #expect(again.approvalNumber != nil)
            try await browser.phone(Self.megan, answer: "report")
            #expect(try await Self.endAuth(browser, ctx: ctx)["ResultValue"] as? String == "PhoneAppFraudReported")
            let refused = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "sas")])
            #expect(refused.contains("Error Code: 500121"))
            #expect(fixture.announcements.all.contains { $0.hasPrefix("refused AADSTS500121 ") })
        }
    }

    @Test("a user with only an authenticator app types its code; the same code is not accepted twice")
    func authenticatorAppCode() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let methods = try await Self.setMethods(browser, Self.alex, #"{"methods": ["softwareOath"]}"#)
            let app = try #require(methods["softwareOath"] as? [String: Any])
            let uri = try #require(app["otpauth"] as? String)
            #expect(uri.hasPrefix("otpauth://totp/Contoso:alex@contoso.onmicrosoft.com?secret="), "\(uri)")
            try await Self.setPolicy(
                browser,
                #"{"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [{"users": ["alex@contoso.onmicrosoft.com"], "require": "mfa"}]}}}"#
            )

            let (ctx, page) = try await Self.afterPassword(browser, Self.alex)
            #expect(page.contains("Enter the code displayed in the authenticator app on your mobile device"))
            #expect(page.hidden("mfaMethod") == "softwareOath")
            #expect(!page.contains(SignInPageIDs.signInAnotherWay), "alex has no other method to offer")
            let now = fixture.clock.now
            let code = try await browser.authenticatorAppCode(for: Self.alex, at: now)
            let wrong = try await browser.post(
                "/common/login", form: [("ctx", ctx), ("step", "otc"), ("otc", code == "000000" ? "000001" : "000000")])
            #expect(wrong.contains("You didn&#39;t enter the expected verification code."))
            let kmsi = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "otc"), ("otc", code)])
            let tokens = try await Self.finish(browser, ctx: ctx, from: kmsi)
            #expect(try Self.amr(tokens) == ["pwd", "otp", "mfa"])

            // Someone who saw the code cannot use it again.
            browser.forgetCookies()
            let (second, _) = try await Self.afterPassword(browser, Self.alex)
            let replay = try await browser.post("/common/login", form: [("ctx", second), ("step", "otc"), ("otc", code)])
            #expect(replay.contains("You didn&#39;t enter the expected verification code."))
        }
    }

    @Test("a Temporary Access Pass onboards alex, who sets up Microsoft Authenticator; the one-time pass is then used up")
    func temporaryAccessPassOnboarding() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let issued = try await browser.send(
                "/.emulator/users/\(Self.alex)/temporaryAccessPass", method: .post, headers: [.contentType: "application/json"],
                body: #"{"lifetimeInMinutes": 60, "isUsableOnce": true}"#
            ).json
            let pass = try #require(issued["temporaryAccessPass"] as? String)
            #expect(pass.count == 8)

            let ctx = try #require(try await browser.get(Browser.authorizeURI()).hidden("ctx"))
            let tapPage = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "username"), ("loginfmt", Self.alex)])
            #expect(tapPage.contains("Enter Temporary Access Pass"))
            let wrong = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "tap"), ("accesspass", "nope1234")])
            #expect(wrong.contains(#"id="\#(SignInPageIDs.accessPassError)""#))
            let start = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "tap"), ("accesspass", pass)])
            #expect(start.contains("Keep your account secure"))
            #expect(start.contains("Start by getting the app"))
            #expect(!start.contains("skipMfaRegistration"), "registration is required: alex has nothing but the pass")

            let scan = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "proofup-app")])
            #expect(scan.contains("Scan the QR code"))
            #expect(scan.contains("<svg"))
            #expect(scan.firstMatch(#"id="\#(SignInPageIDs.activationCode)">(\d+)<"#) != nil)
            // Next before the phone scanned: the page says so.
            let notYet = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "proofup-app-scanned")])
            #expect(notYet.contains("We couldn&#39;t find your account in the app."))
            let newCode = try #require(notYet.firstMatch(#"id="\#(SignInPageIDs.activationCode)">(\d+)<"#))
            let activated = try await browser.send(
                "/.emulator/authenticator/activate", method: .post, headers: [.contentType: "application/json"],
                body: #"{"code": "\#(newCode)", "device": "Alex's Pixel"}"#)
            #expect(activated.status == .ok, "\(activated.text)")

            let test = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "proofup-app-scanned")])
            #expect(test.contains("Let&#39;s try it out"))
            let number = try #require(test.approvalNumber)
            try await browser.phone(Self.alex, answer: "approve", number: number)
            let success = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "proofup-app-test")])
            #expect(success.contains("Success!"))
            let kmsi = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "proofup-done")])
            let tokens = try await Self.finish(browser, ctx: ctx, from: kmsi)
            #expect(try Self.amr(tokens) == ["mfa"])

            let methods = try await browser.get("/.emulator/users/\(Self.alex)/methods").json
            #expect(methods["methods"] as? [String] == ["microsoftAuthenticator"])
            #expect(methods["microsoftAuthenticator"] as? String == "Alex's Pixel")
            // The one-time pass is gone: the next sign-in asks for the password.
            browser.forgetCookies()
            let next = try #require(try await browser.get(Browser.authorizeURI()).hidden("ctx"))
            let password = try await browser.post("/common/login", form: [("ctx", next), ("step", "username"), ("loginfmt", Self.alex)])
            #expect(password.contains(#"id="\#(SignInPageIDs.password)""#))
        }
    }

    @Test("phishing-resistant MFA refuses megan's text message with AADSTS50074 naming what would work")
    func phishingResistantRefusesSMS() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            try await Self.setPolicy(
                browser,
                #"{"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [{"name": "Admins: phishing-resistant", "#
                    + #""users": ["megan@contoso.onmicrosoft.com"], "require": {"authenticationStrength": "phishingResistantMfa"}}]}}}"#)
            let (_, page) = try await Self.afterPassword(browser, Self.megan)
            #expect(!page.contains(SignInPageIDs.smsCode), "a text message was offered although it cannot satisfy the strength")
            #expect(page.contains("Error Code: 50074"))
            #expect(page.contains("&#39;Phishing-resistant MFA&#39;"))
            #expect(page.contains("a passkey or security key (FIDO2)"))
            #expect(fixture.announcements.all.allSatisfy { !$0.hasPrefix("mfa-code ") })
        }
    }

    @Test("an MFA strength admits the text; a phishing-resistant rule refuses the refresh of that sign-in with a claims challenge")
    func strengthAtTheTokenEndpoint() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            try await Self.setPolicy(
                browser,
                #"{"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [{"users": ["megan@contoso.onmicrosoft.com"], "#
                    + #""require": {"authenticationStrength": "mfa"}}]}}}"#)
            let tokens = try await browser.tokens(for: Self.megan)
            let refreshToken = try #require(tokens["refresh_token"] as? String)
            try await Self.setPolicy(
                browser,
                #"{"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [{"users": ["megan@contoso.onmicrosoft.com"], "#
                    + #""require": {"authenticationStrength": "phishingResistantMfa"}}]}}}"#)
            let refused = try await browser.refresh(refreshToken)
            #expect(refused.status == .badRequest)
            let error = refused.json
            #expect(error["error"] as? String == "invalid_grant")
            #expect(error["error_codes"] as? [Int] == [50076])
            #expect(
                (error["error_description"] as? String)?.contains("The authentication strength 'Phishing-resistant MFA' is required.")
                    == true)
            #expect((error["claims"] as? String)?.contains("capolids") == true)
        }
    }

    @Test("the registration campaign nudges megan after her text to set up the app; Skip for now snoozes it")
    func registrationCampaign() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            try await Self.setPolicy(
                browser,
                #"{"tenants": {"contoso.onmicrosoft.com": {"authenticationMethods": {"registrationCampaign": {"state": "enabled", "#
                    + #""snoozeDurationInDays": 3}}}}}"#)
            let (ctx, _) = try await Self.afterPassword(browser, Self.megan)
            let code = try #require(fixture.announcements.code(for: Self.megan))
            let nudge = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "otc"), ("otc", code)])
            #expect(nudge.contains("Keep your account secure"))
            #expect(nudge.contains("Skip for now (3 days until this is required)"))
            let kmsi = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "proofup-app"), ("action", "skip")])
            _ = try await Self.finish(browser, ctx: ctx, from: kmsi)

            browser.forgetCookies()
            let (again, _) = try await Self.afterPassword(browser, Self.megan)
            let second = try #require(fixture.announcements.code(for: Self.megan))
            let snoozed = try await browser.post("/common/login", form: [("ctx", again), ("step", "otc"), ("otc", second)])
            #expect(snoozed.contains("Stay signed in?"), "the nudge came back before its snooze ended")
        }
    }

    @Test("a policy file's bad authentication strength or method says what to write instead")
    func policyErrors() throws {
        #expect(throws: PolicyError.self) {
            try TenantPolicies.parse(
                Data(
                    #"{"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [{"require": {"authenticationStrength": "strong"}}]}}}"#
                        .utf8))
        }
        do {
            _ = try TenantPolicies.parse(
                Data(
                    #"{"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [{"require": {"authenticationStrength": "strong"}}]}}}"#
                        .utf8))
        } catch {
            #expect(error.description.contains("'strong' is not mfa, passwordlessMfa or phishingResistantMfa"), "\(error)")
        }
        do {
            _ = try TenantPolicies.parse(
                Data(
                    #"{"tenants": {"contoso.onmicrosoft.com": {"registeredMethods": {"alex@contoso.onmicrosoft.com": {"methods": ["fido2"]}}}}}"#
                        .utf8))
            Issue.record("a passkey was registered by a policy file")
        } catch {
            #expect(error.description.contains("a passkey is registered with an authenticator"), "\(error)")
        }
        let parsed = try TenantPolicies.parse(
            Data(
                #"{"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [{"require": {"authenticationStrength": "passwordlessMfa"}}]}}}"#
                    .utf8))
        #expect(parsed.policy(for: .contoso).conditionalAccess.first?.require == .authenticationStrength(.passwordlessMfa))
    }
}
