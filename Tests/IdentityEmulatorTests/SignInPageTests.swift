import Foundation
import SesameTestSupport
import Testing

@testable import IdentityEmulator

/// The authorize endpoint and the sign-in pages, as a browser (and automation) sees them.
@Suite("Sign-in pages")
struct SignInPageTests {
    @Test("alex signs in: username page → password page → stay signed in → consent → code, state, session_state, client_info")
    func alexSignsIn() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let first = try await browser.get(Browser.authorizeURI(extra: [("client_info", "1")]))
            #expect(first.status == .ok)
            // Microsoft's field names and ids, so automation written for Microsoft's page works here.
            #expect(first.contains(#"name="\#(SignInPageIDs.Fields.userName)" id="\#(SignInPageIDs.userName)""#))
            #expect(first.contains(#"id="\#(SignInPageIDs.primaryButton)""#))
            #expect(first.contains(#"action="/contoso.onmicrosoft.com/login""#))
            let ctx = try #require(first.hidden("ctx"))

            let password = try await browser.post(
                "/common/login", form: [("ctx", ctx), ("step", "username"), ("loginfmt", "alex@contoso.onmicrosoft.com")])
            #expect(password.contains(#"name="\#(SignInPageIDs.Fields.password)" id="\#(SignInPageIDs.password)""#))
            #expect(password.contains(#"id="idBtn_Back""#))

            let kmsi = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "password"), ("passwd", "Passw0rd!")])
            #expect(kmsi.contains("Stay signed in?"))
            let consent = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "kmsi"), ("kmsi", "yes")])
            #expect(consent.contains("Permissions requested"))
            #expect(consent.contains("Sesame Directory"))
            #expect(consent.contains("Read all users’ basic profiles"))

            let redirect = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "consent"), ("consent", "accept")])
            #expect(redirect.status == .found)
            let location = try #require(redirect.location)
            #expect(location.hasPrefix(Clients.nativeClient + "?code=0.A"))
            let fields = redirect.redirectFields
            #expect(fields["state"] == "state-123")
            #expect(fields["session_state"]?.count == 36)
            let clientInfo = try #require(fields["client_info"].flatMap { Base64URL.decode($0) })
            let info = try #require(try JSONSerialization.jsonObject(with: clientInfo) as? [String: String])
            #expect(info == ["uid": "4c1b9a54-7f4e-4f2b-9a5f-2a0c6c1d7e01", "utid": Tenant.contoso.id])
            #expect(redirect.headers[.setCookie]?.hasPrefix("ESTSAUTH=") == true)
            // Entra's order: code, client_info, state, session_state.
            let names = FormFields(encoded: location.split(separator: "?")[1]).pairs.map(\.name)
            #expect(names == ["code", "client_info", "state", "session_state"])
        }
    }

    @Test("a wrong password is shown inline on the password page, and the right one still works")
    func wrongPasswordInline() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let ctx = try #require(try await browser.get(Browser.authorizeURI()).hidden("ctx"))
            _ = try await browser.post(
                "/common/login", form: [("ctx", ctx), ("step", "username"), ("loginfmt", "alex@contoso.onmicrosoft.com")])
            let wrong = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "password"), ("passwd", "hunter2")])
            #expect(wrong.status == .ok)
            #expect(wrong.location == nil)
            #expect(wrong.contains(#"id="passwordError" class="alert-error" role="alert">Your account or password is incorrect."#))
            let right = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "password"), ("passwd", "Passw0rd!")])
            #expect(right.contains("Stay signed in?"))
        }
    }

    @Test("an unknown username stays on the username page with Microsoft's message")
    func unknownUser() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let ctx = try #require(try await browser.get(Browser.authorizeURI()).hidden("ctx"))
            let page = try await browser.post(
                "/common/login", form: [("ctx", ctx), ("step", "username"), ("loginfmt", "nobody@contoso.onmicrosoft.com")])
            #expect(page.contains("This username may be incorrect."))
            #expect(page.contains(#"id="\#(SignInPageIDs.userName)""#))
        }
    }

    @Test("megan's SMS step: the code is printed as mfa-code, a wrong code is refused inline, the right one continues")
    func meganSMS() async throws {
        let fixture = try await EmulatorFixture(demo: true)
        try await fixture.withBrowser { browser in
            let ctx = try #require(try await browser.get(Browser.authorizeURI()).hidden("ctx"))
            _ = try await browser.post(
                "/common/login", form: [("ctx", ctx), ("step", "username"), ("loginfmt", "megan@contoso.onmicrosoft.com")])
            let sms = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "password"), ("passwd", "Passw0rd!")])
            #expect(sms.contains(#"name="\#(SignInPageIDs.Fields.smsCode)" id="\#(SignInPageIDs.smsCode)""#))
            #expect(sms.contains("+X XXXXXXX99"))
            let code = try #require(fixture.announcements.code(for: "megan@contoso.onmicrosoft.com"))
            #expect(code.count == 6)
            // Demo mode shows the code on the page too.
            #expect(sms.contains("<code>\(code)</code>"))

            let wrong = try await browser.post(
                "/common/login", form: [("ctx", ctx), ("step", "otc"), ("otc", code == "000000" ? "111111" : "000000")])
            #expect(wrong.contains("You didn&#39;t enter the expected verification code."))
            // Skipping the SMS page does not work: "Stay signed in?" before the code is refused.
            let skipped = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "kmsi"), ("kmsi", "yes")])
            #expect(!skipped.contains("Permissions requested"))
            #expect(skipped.location == nil)

            let kmsi = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "otc"), ("otc", code)])
            #expect(kmsi.contains("Stay signed in?"))
        }
    }

    @Test("cancelling consent redirects with access_denied and Entra's AADSTS65004 description, error_uri and state")
    func consentCancelled() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let redirect = try await browser.signIn("alex@contoso.onmicrosoft.com", consent: false)
            let location = try #require(redirect.location)
            #expect(location.hasPrefix(Clients.nativeClient + "?error=access_denied&error_description=AADSTS65004%3a+User+declined"))
            let fields = redirect.redirectFields
            let description = try #require(fields["error_description"])
            #expect(description.hasPrefix("AADSTS65004: User declined to consent to access the app.\r\nTrace ID: "))
            #expect(description.contains("\r\nCorrelation ID: "))
            #expect(description.range(of: #"\r\nTimestamp: \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$"#, options: .regularExpression) != nil)
            #expect(fields["error_uri"] == "https://login.microsoftonline.com/error?code=65004")
            #expect(location.hasSuffix("&state=state-123"))
        }
    }

    @Test("after one sign-in the session cookie signs in silently, without pages; consent is remembered")
    func singleSignOn() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            _ = try await browser.signIn("alex@contoso.onmicrosoft.com")
            let again = try await browser.get(Browser.authorizeURI(state: "second"))
            #expect(again.status == .found)
            #expect(again.redirectFields["state"] == "second")
            #expect(again.redirectFields["code"] != nil)

            let silent = try await browser.get(Browser.authorizeURI(extra: [("prompt", "none")]))
            #expect(silent.redirectFields["code"] != nil)

            let forced = try await browser.get(Browser.authorizeURI(extra: [("prompt", "login")]))
            #expect(forced.contains(#"id="\#(SignInPageIDs.userName)""#))

            let picker = try await browser.get(Browser.authorizeURI(extra: [("prompt", "select_account")]))
            #expect(picker.contains("Pick an account"))
            #expect(picker.contains("alex@contoso.onmicrosoft.com"))
            let picked = try await browser.post(
                "/common/login", form: [("ctx", try #require(picker.hidden("ctx"))), ("step", "pick"), ("account", "session")])
            #expect(picked.redirectFields["code"] != nil)

            let reconsent = try await browser.get(Browser.authorizeURI(extra: [("prompt", "consent")]))
            #expect(reconsent.contains("Permissions requested"))

            // Another app: SSO signs in, but its first use asks for consent.
            let otherApp = try await browser.get(
                Browser.authorizeURI(client: Clients.me, scope: "https://graph.microsoft.com/user.read openid profile offline_access"))
            #expect(otherApp.contains("Sesame Me"))
            let silentOther = try await browser.get(
                Browser.authorizeURI(client: Clients.me, scope: "User.Read openid", extra: [("prompt", "none")]))
            #expect(silentOther.redirectFields["error"] == "consent_required")
            #expect(silentOther.redirectFields["error_description"]?.hasPrefix("AADSTS65001:") == true)
        }
    }

    @Test("prompt=none without a session answers login_required (AADSTS50058)")
    func promptNoneWithoutSession() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let page = try await browser.get(Browser.authorizeURI(extra: [("prompt", "none")]))
            #expect(page.redirectFields["error"] == "login_required")
            #expect(
                page.redirectFields["error_description"]?.hasPrefix(
                    "AADSTS50058: A silent sign-in request was sent but no user is signed in.") == true)
            #expect(page.redirectFields["error_uri"] == "https://login.microsoftonline.com/error?code=50058")
        }
    }

    @Test("login_hint pre-fills the username")
    func loginHint() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let page = try await browser.get(Browser.authorizeURI(extra: [("login_hint", "megan@contoso.onmicrosoft.com")]))
            #expect(page.contains(#"value="megan@contoso.onmicrosoft.com""#))
        }
    }

    @Test("an unknown client or an unregistered redirect URI gets an error page, never a redirect")
    func untrustedRequestsStayOnThePage() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let unknown = try await browser.get(Browser.authorizeURI(client: "00000000-1111-2222-3333-444444444444"))
            #expect(unknown.status == .badRequest)
            #expect(unknown.location == nil)
            #expect(unknown.contains("AADSTS700016"))
            #expect(unknown.contains("Application with identifier &#39;00000000-1111-2222-3333-444444444444&#39; was not found"))

            let evil = try await browser.get(Browser.authorizeURI(redirect: "https://evil.example/callback"))
            #expect(evil.status == .badRequest)
            #expect(evil.location == nil)
            #expect(evil.contains("AADSTS50011"))
            #expect(evil.contains("https://evil.example/callback"))

            let tenant = try await browser.get(Browser.authorizeURI(tenant: "nosuchtenant.onmicrosoft.com"))
            #expect(tenant.status == .badRequest)
            #expect(tenant.contains("AADSTS90002"))
        }
    }

    @Test("bad parameters from a trusted client come back as error redirects")
    func errorRedirects() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let token = try await browser.get(
                Browser.authorizeURI().replacingOccurrences(of: "response_type=code", with: "response_type=token"))
            #expect(token.redirectFields["error"] == "unsupported_response_type")
            #expect(token.redirectFields["error_description"]?.hasPrefix("AADSTS700054:") == true)
            #expect(token.redirectFields["state"] == "state-123")

            let noScope = try await browser.get(
                Browser.authorizeURI().replacingOccurrences(
                    of: "&scope=openid+profile+offline_access+User.Read+User.ReadBasic.All", with: ""))
            #expect(noScope.redirectFields["error"] == "invalid_request")
            #expect(
                noScope.redirectFields["error_description"]?.hasPrefix(
                    "AADSTS900144: The request body must contain the following parameter: 'scope'.") == true)

            let badScope = try await browser.get(Browser.authorizeURI(scope: "openid Files.Frobnicate"))
            #expect(badScope.redirectFields["error"] == "invalid_scope")
            #expect(badScope.redirectFields["error_description"]?.hasPrefix("AADSTS70011:") == true)

            let badResource = try await browser.get(Browser.authorizeURI(scope: "openid https://api.example.com/read"))
            #expect(badResource.redirectFields["error"] == "invalid_resource")
            #expect(badResource.redirectFields["error_description"]?.hasPrefix("AADSTS500011:") == true)

            let badMethod = try await browser.get(Browser.authorizeURI(method: "S512"))
            #expect(badMethod.redirectFields["error"] == "invalid_request")
        }
    }

    @Test("response_mode fragment and form_post")
    func responseModes() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            _ = try await browser.signIn("alex@contoso.onmicrosoft.com")
            let fragment = try await browser.get(Browser.authorizeURI(extra: [("response_mode", "fragment")]))
            #expect(fragment.location?.hasPrefix(Clients.nativeClient + "#code=") == true)

            let formPost = try await browser.get(Browser.authorizeURI(extra: [("response_mode", "form_post")]))
            #expect(formPost.status == .ok)
            #expect(formPost.contains(#"<form method="POST" name="hiddenform" action="\#(Clients.nativeClient)">"#))
            #expect(formPost.contains(#"name="code" value="0.A"#))
            #expect(formPost.contains(#"name="state" value="state-123""#))
            #expect(formPost.contains("document.forms[0].submit()"))
        }
    }

    @Test("every workforce tenant name works for a multi-tenant app: common, organizations, the domain and the GUID")
    func tenantNames() async throws {
        let multiTenant = ClientRegistration(
            clientID: "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", name: "Multi", redirectURIs: [Clients.nativeClient], multiTenant: true)
        let fixture = try await EmulatorFixture(extraClients: [multiTenant])
        try await fixture.withBrowser { browser in
            for tenant in ["common", "organizations", "contoso.onmicrosoft.com", Tenant.contoso.id] {
                let page = try await browser.get(Browser.authorizeURI(tenant: tenant, client: multiTenant.clientID))
                #expect(page.contains(#"action="/\#(tenant)/login""#), "tenant \(tenant)")
            }
        }
    }

    @Test("a single-tenant app (Entra's default) at /common or /organizations: AADSTS50194, redirected and at the token endpoint")
    func singleTenantAtCommon() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            for tenant in ["common", "organizations"] {
                let page = try await browser.get(Browser.authorizeURI(tenant: tenant))
                #expect(page.status == .found)
                #expect(page.redirectFields["error"] == "invalid_request")
                #expect(
                    page.redirectFields["error_description"]?.hasPrefix(
                        "AADSTS50194: Application '\(Clients.directory)'(Sesame Directory) is not configured as a multi-tenant application."
                    ) == true)
                #expect(page.redirectFields["state"] == "state-123")
                let token = try await browser.refresh("anything", tenant: tenant)
                #expect(token.json["error_codes"] as? [Int] == [50194])
            }
        }
        let lenient = try await EmulatorFixture(lenient: true)
        try await lenient.withBrowser { browser in
            let page = try await browser.get(Browser.authorizeURI(tenant: "common"))
            #expect(page.contains(#"action="/common/login""#), "--lenient keeps /common")
        }
    }

    @Test("loopback redirect URIs match on any port and a URI without a path comes back with '/'")
    func loopbackRedirects() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let redirect = try await browser.signIn(
                "alex@contoso.onmicrosoft.com",
                authorize: Browser.authorizeURI(client: Clients.me, redirect: "http://localhost:51234", scope: "User.Read openid"))
            #expect(redirect.location?.hasPrefix("http://localhost:51234/?code=") == true)
            let wrongHost = try await browser.get(Browser.authorizeURI(client: Clients.me, redirect: "http://localhost.evil.example:51234"))
            #expect(wrongHost.contains("AADSTS50011"))
        }
    }

    @Test("an out-of-date or forged ctx shows AADSTS50089 instead of continuing")
    func staleTransaction() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let page = try await browser.post("/common/login", form: [("ctx", "made-up"), ("step", "password"), ("passwd", "Passw0rd!")])
            #expect(page.contains("AADSTS50089"))
        }
    }

    @Test("pages escape what users type")
    func escaping() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let ctx = try #require(try await browser.get(Browser.authorizeURI()).hidden("ctx"))
            let page = try await browser.post(
                "/common/login", form: [("ctx", ctx), ("step", "username"), ("loginfmt", "\"><script>alert(1)</script>")])
            #expect(!page.contains("<script>alert(1)"))
            #expect(page.contains("&quot;&gt;&lt;script&gt;"))
        }
    }
}

@Suite("Demo mode")
struct DemoModeTests {
    @Test("in demo mode the first page suggests the demo account and says the password; otherwise it does not")
    func demoSuggestion() async throws {
        let demo = try await EmulatorFixture(demo: true)
        try await demo.withBrowser { browser in
            let page = try await browser.get(Browser.authorizeURI())
            #expect(page.contains(#"value="alex@contoso.onmicrosoft.com""#))
            #expect(page.contains("Passw0rd!"))
            let b2c = try await browser.get(Browser.b2cAuthorizeURI())
            #expect(b2c.contains(#"value="sam@example.com""#))
        }
        let plain = try await EmulatorFixture()
        try await plain.withBrowser { browser in
            let page = try await browser.get(Browser.authorizeURI())
            #expect(!page.contains("alex@contoso.onmicrosoft.com"))
            #expect(!page.contains("Passw0rd!"))
        }
    }
}
