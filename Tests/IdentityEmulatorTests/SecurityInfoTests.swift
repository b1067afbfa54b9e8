import Foundation
import HTTPTypes
import SesameTestSupport
import Testing

@testable import IdentityEmulator

/// "Security info" (My Sign-Ins), as a signed-in user meets it: the methods listed by Microsoft's
/// names, Microsoft Authenticator and an authenticator app added, a phone deleted and added again;
/// a change without MFA, a forged form and a browser without a session each refused.
@Suite("Security info")
struct SecurityInfoTests {
    static let megan = "megan@contoso.onmicrosoft.com"
    static let alex = "alex@contoso.onmicrosoft.com"

    /// Opens Security info, signs in where it sends the browser (as `user`, answering the second
    /// factor), comes back, and returns the page.
    static func signedIn(_ browser: Browser, _ user: String) async throws -> Browser.Page {
        let first = try await browser.get("/security-info")
        let location = try #require(first.location, "no sign-in redirect: \(first.text.prefix(300))")
        let back = try await browser.signIn(user, authorize: location)
        let reply = try #require(back.location, "no redirect back: \(back.text.prefix(400))")
        #expect(reply.hasPrefix("\(EmulatorFixture.base.absoluteString)/security-info?code="), "\(reply)")
        let page = try await browser.get("/security-info")
        #expect(page.status == .ok)
        #expect(page.contains("These are the methods you use to sign into your account or reset your password."))
        return page
    }

    static func post(_ browser: Browser, _ token: String?, _ fields: [(String, String)]) async throws -> Browser.Page {
        try await browser.post("/security-info", form: (token.map { [("token", $0)] } ?? []) + fields)
    }

    static func registered(_ browser: Browser, _ user: String) async throws -> [String: Any] {
        try await browser.get("/.emulator/users/\(user)/methods").json
    }

    @Test("megan, signed in with a text, adds Microsoft Authenticator and an authenticator app, then swaps her phone")
    func addAndDelete() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            var page = try await Self.signedIn(browser, Self.megan)
            let token = try #require(page.hidden("token"))
            #expect(page.contains(#"id="method-sms""#))
            #expect(page.contains("<b>Phone</b>"))
            #expect(page.contains("+X XXXXXXX"))
            #expect(page.contains("Default sign-in method:</b> Phone - text +X XXXXXXX"))
            #expect(page.contains("+ Add sign-in method"))

            // Microsoft Authenticator: the activation QR code, the phone scans it, the test notification.
            let scan = try await Self.post(browser, token, [("action", "add"), ("method", "microsoftAuthenticator")])
            #expect(scan.contains("Scan the QR code"))
            #expect(scan.contains("<svg"))
            #expect(scan.firstMatch(#"id="\#(SignInPageIDs.activationCode)">(\d+)<"#) != nil)
            let early = try await Self.post(browser, token, [("action", "authenticator-scanned")])
            #expect(early.contains("We couldn&#39;t find your account in the app."))
            let retryCode = try #require(early.firstMatch(#"id="\#(SignInPageIDs.activationCode)">(\d+)<"#))
            let activated = try await browser.send(
                "/.emulator/authenticator/activate", method: .post, headers: [.contentType: "application/json"],
                body: #"{"code": "\#(retryCode)", "device": "Megan Pixel 9"}"#)
            #expect(activated.status == .ok, "\(activated.text)")
            let test = try await Self.post(browser, token, [("action", "authenticator-scanned")])
            #expect(test.contains("Let's try it out"))
            let number = try #require(test.approvalNumber)
            #expect(fixture.announcements.all.contains("authenticator-push \(Self.megan) \(number)"))
            let pending = try await browser.post("/security-info/authenticator/status", form: [("token", token)]).json
            #expect(pending["ResultValue"] as? String == "AuthenticationPending")
            try await browser.phone(Self.megan, answer: "approve", number: number)
            let approved = try await browser.post("/security-info/authenticator/status", form: [("token", token)]).json
            #expect(approved["ResultValue"] as? String == "Success")
            page = try await Self.post(browser, token, [("action", "authenticator-test")])
            #expect(page.contains("Microsoft Authenticator app was successfully registered"))
            #expect(page.contains(#"id="detail-microsoftAuthenticator">Megan Pixel 9<"#))
            #expect(page.contains("Default sign-in method:</b> Microsoft Authenticator - notification"))

            // An authenticator app: its secret as a QR code and in words, then its first code.
            let app = try await Self.post(browser, token, [("action", "add"), ("method", "softwareOath")])
            #expect(app.contains("Can't scan image?"))
            #expect(app.contains(#"Account name: <code id="accountName">\#(Self.megan)</code>"#))
            let secretKey = try #require(app.firstMatch(#"id="secretKey">([A-Z2-7]+)<"#))
            let enter = try await Self.post(browser, token, [("action", "app-scanned")])
            #expect(enter.contains("Enter the 6-digit code shown in the Authenticator app."))
            let code = TOTP.code(secret: try TOTPSecret(base32: secretKey), at: fixture.clock.now)
            let wrong = try await Self.post(browser, token, [("action", "app-verify"), ("otc", code == "000000" ? "000001" : "000000")])
            #expect(wrong.contains("The code you entered didn&#39;t match."))
            #expect(try await Self.registered(browser, Self.megan)["softwareOath"] == nil, "saved before its code was right")
            page = try await Self.post(browser, token, [("action", "app-verify"), ("otc", code)])
            #expect(page.contains("Authenticator app was successfully registered"))
            #expect(page.contains(#"id="method-softwareOath""#))

            var methods = try await Self.registered(browser, Self.megan)
            #expect(methods["methods"] as? [String] == ["microsoftAuthenticator", "softwareOath", "sms"])
            #expect(methods["microsoftAuthenticator"] as? String == "Megan Pixel 9")
            #expect((methods["softwareOath"] as? [String: Any])?["secretKey"] as? String == secretKey)

            // The phone deleted; then a new one, confirmed with the code texted to it.
            page = try await Self.post(browser, token, [("action", "delete"), ("method", "sms")])
            #expect(page.contains("Phone deleted"))
            #expect(!page.contains(#"id="method-sms""#))
            methods = try await Self.registered(browser, Self.megan)
            #expect(methods["methods"] as? [String] == ["microsoftAuthenticator", "softwareOath"])

            let number2 = try await Self.post(browser, token, [("action", "add"), ("method", "sms")])
            #expect(number2.contains("What phone number would you like to use?"))
            let bad = try await Self.post(browser, token, [("action", "phone-number"), ("phone", "12")])
            #expect(bad.contains("Enter a valid phone number."))
            let sent = try await Self.post(browser, token, [("action", "phone-number"), ("phone", "+1 425 555 0147")])
            #expect(sent.contains("We just sent a 6 digit code to +X XXXXXXX47."))
            let texted = try #require(fixture.announcements.code(for: Self.megan))
            page = try await Self.post(browser, token, [("action", "phone-verify"), ("otc", texted)])
            #expect(page.contains("SMS verified. Your phone was registered successfully."))
            methods = try await Self.registered(browser, Self.megan)
            #expect(methods["methods"] as? [String] == ["microsoftAuthenticator", "softwareOath", "sms"])
        }
    }

    @Test("without MFA in alex's sign-in a change is refused with the reason; signing in again with MFA allows it")
    func changeNeedsMFA() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let set = try await browser.send(
                "/.emulator/users/\(Self.alex)/methods", method: .post, headers: [.contentType: "application/json"],
                body: #"{"methods": ["sms"]}"#)
            #expect(set.status == .ok)
            let page = try await Self.signedIn(browser, Self.alex)
            let token = try #require(page.hidden("token"))

            let add = try await Self.post(browser, token, [("action", "add"), ("method", "softwareOath")])
            #expect(add.status == .forbidden)
            #expect(add.contains(HTML.escape(SecurityInfoPages.needsMFA)))
            #expect(!add.contains("Scan the QR code"))
            let delete = try await Self.post(browser, token, [("action", "delete"), ("method", "sms")])
            #expect(delete.status == .forbidden)
            #expect(delete.contains(HTML.escape(SecurityInfoPages.needsMFA)))
            #expect(try await Self.registered(browser, Self.alex)["methods"] as? [String] == ["sms"])

            // "Sign in again": prompt=login and a claims challenge that demands MFA.
            let href = try #require(delete.firstMatch(#"id="signInAgain" href="([^"]+)""#)).replacing("&amp;", with: "&")
            #expect(href.contains("prompt=login"))
            #expect(href.contains("capolids"))
            let back = try await browser.signIn(Self.alex, authorize: href)
            #expect(back.location?.contains("/security-info?code=") == true, "\(back.text.prefix(300))")
            #expect(fixture.announcements.code(for: Self.alex) != nil, "the second sign-in asked no second factor")
            let again = try await browser.get("/security-info")
            let fresh = try #require(again.hidden("token"))
            #expect(fresh != token, "a new session, a new anti-forgery value")
            let allowed = try await Self.post(browser, fresh, [("action", "delete"), ("method", "sms")])
            #expect(allowed.contains("Phone deleted"))
            #expect(try await Self.registered(browser, Self.alex)["methods"] as? [String] == [])
        }
    }

    @Test("a form without the session's anti-forgery value, or with another session's, changes nothing")
    func forgedForm() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let page = try await Self.signedIn(browser, Self.megan)
            let token = try #require(page.hidden("token"))
            for forged in [nil, "", String(token.reversed()), Identifiers.digest("security-info|another-cookie")] {
                let answer = try await Self.post(browser, forged, [("action", "delete"), ("method", "sms")])
                #expect(answer.status == .forbidden)
                #expect(answer.contains(HTML.escape(SecurityInfoPages.forgedSentence)))
            }
            #expect(try await Self.registered(browser, Self.megan)["methods"] as? [String] == ["sms"])
            let status = try await browser.post("/security-info/authenticator/status", form: [("token", "forged")]).json
            #expect(status["ResultValue"] as? String == "InvalidSession")
        }
    }

    @Test("a browser with no session is sent to sign in to My Signins first, and comes back to Security info")
    func noSession() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let first = try await browser.get("/security-info")
            #expect(first.status == .found)
            let location = try #require(first.location)
            #expect(location.hasPrefix("/contoso.onmicrosoft.com/oauth2/v2.0/authorize?"))
            #expect(location.contains("client_id=\(ClientRegistration.mySignInsClientID)"))
            let signIn = try await browser.get(location)
            #expect(signIn.hidden("ctx") != nil, "the sign-in refused My Signins' request: \(signIn.text.prefix(400))")
            // A change posted without a session goes to the page (and so to the sign-in), changing nothing.
            let posted = try await Self.post(browser, "anything", [("action", "delete"), ("method", "sms")])
            #expect(posted.status == .found)
            #expect(posted.location == "/security-info")
            // Another app's session cookie value is no session.
            let stranger = try await browser.get("/security-info", cookie: "ESTSAUTH=not-a-session")
            #expect(stranger.status == .found)
        }
    }

    @Test("a passkey needs MFA within the last five minutes; the page says when the browser can't create one")
    func passkeyNeedsRecentMFA() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let page = try await Self.signedIn(browser, Self.megan)
            let token = try #require(page.hidden("token"))
            #expect(page.contains(#"id="add-passkey""#))
            let passkey = try await Self.post(browser, token, [("action", "add"), ("method", "passkey")])
            #expect(passkey.contains("<h1 id=\"pageTitle\">Passkey or security key</h1>"))
            #expect(passkey.contains("window.PublicKeyCredential"))
            #expect(passkey.contains("This browser can&#39;t create a passkey") || passkey.contains("This browser can't create a passkey"))
            fixture.clock.advance(by: 301)
            let late = try await Self.post(browser, token, [("action", "add"), ("method", "passkey")])
            #expect(late.status == .forbidden)
            #expect(late.contains(HTML.escape(SecurityInfoPages.passkeyNeedsRecentMFA)))
            #expect(late.contains(#"id="signInAgain""#))
        }
    }
    @Test("megan adds a passkey through the page's two endpoints, sees it listed by its name, and deletes it")
    func passkeyRegistration() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let page = try await Self.signedIn(browser, Self.megan)
            let token = try #require(page.hidden("token"))
            let refused = try await browser.post("/security-info/passkey/options", form: [("token", "forged")])
            #expect(refused.status == .forbidden)
            #expect(refused.json["error"] as? String == SecurityInfoPages.forgedSentence)

            let options = try await browser.post("/security-info/passkey/options", form: [("token", token)])
            #expect(options.status == .ok, "\(options.text)")
            let challenge = try #require((options.json["challenge"] as? String).flatMap { WebAuthnBase64URL.decode($0) })
            let authenticator = SoftAuthenticator(.es256)
            let response = try authenticator.registration(
                .init(challenge: challenge, type: "webauthn.create", origin: "http://127.0.0.1:8400", rpID: "127.0.0.1"),
                attestation: .none)
            let credential = String(decoding: try JSONEncoder().encode(response), as: UTF8.self)
            let body = #"{"token": "\#(token)", "name": "Megan YubiKey", "credential": \#(credential)}"#
            let forged = try await browser.send(
                "/security-info/passkey", method: .post, headers: [.contentType: "application/json"],
                body: body.replacing(token, with: "forged"))
            #expect(forged.status == .forbidden)
            let kept = try await browser.send(
                "/security-info/passkey", method: .post, headers: [.contentType: "application/json"], body: body)
            #expect(kept.status == .ok, "\(kept.text)")
            #expect(kept.json["displayName"] as? String == "Megan YubiKey")

            var list = try await browser.get("/security-info")
            #expect(list.contains("Megan YubiKey"))
            #expect(list.contains("Default sign-in method:</b> Passkey"))
            let key = try #require(list.firstMatch(#"name="method" value="(passkey:[A-Za-z0-9_-]+)""#))
            #expect(try await Self.registered(browser, Self.megan)["methods"] as? [String] == ["fido2", "sms"])
            list = try await Self.post(browser, token, [("action", "delete"), ("method", key)])
            #expect(list.contains("Passkey deleted"))
            #expect(!list.contains("Megan YubiKey"))
            #expect(try await Self.registered(browser, Self.megan)["methods"] as? [String] == ["sms"])

            // Five minutes after the sign-in's MFA, no new passkey.
            fixture.clock.advance(by: 301)
            let late = try await browser.post("/security-info/passkey/options", form: [("token", token)])
            #expect(late.status == .forbidden)
            #expect(late.json["error"] as? String == SecurityInfoPages.passkeyNeedsRecentMFA)
        }
    }
}
