import Foundation
import HTTPTypes
import SesameTestSupport
import Testing

@testable import IdentityEmulator

/// Pat's sign-in steps, for tests that stop or tamper half-way.
extension Browser {
    static let pat = "pat@fabrikam.example"
    static let patID = "5d2e8f1a-3c4b-4a6d-9e7f-1a2b3c4d5e96"

    /// Opens the Directory sample's sign-in and types `user` on the user-name page: the transaction
    /// (`ctx`) and the redirect Entra answers (home realm discovery).
    func startFederated(_ user: String = Browser.pat, extra: [(String, String)] = []) async throws -> (ctx: String, redirect: Page) {
        let first = try await get(Browser.authorizeURI(extra: extra))
        let ctx = try #require(first.hidden("ctx"))
        let redirect = try await post("/\(Clients.contoso)/login", form: [("ctx", ctx), ("step", "username"), ("loginfmt", user)])
        return (ctx, redirect)
    }

    /// The identity provider's answer to its sign-in form at `provider` (the redirect's location).
    func providerAnswer(at provider: String, user: String = Browser.pat, password: String = "Passw0rd!") async throws -> Page {
        let page = try await get(provider)
        let action = try #require(page.formAction(of: SignInPageIDs.adfsLoginForm), "\(page.text)")
        return try await post(
            action,
            form: [
                (SignInPageIDs.Fields.adfsUserName, user), (SignInPageIDs.Fields.adfsPassword, password),
                (SignInPageIDs.Fields.adfsAuthMethod, "FormsAuthentication"),
            ])
    }

    /// Starts pat's sign-in and signs in at the provider: the transaction and the provider's
    /// signed answer (`wresult`, `wctx`), not yet posted to Entra.
    func federatedAnswer(_ user: String = Browser.pat) async throws -> (ctx: String, wresult: String, wctx: String) {
        let (ctx, redirect) = try await startFederated(user)
        let answer = try await providerAnswer(at: try #require(redirect.location), user: user)
        return (ctx, try #require(answer.hidden("wresult")), try #require(answer.hidden("wctx")))
    }

    /// Posts a provider's answer to Entra's `/login.srf` (under Entra's host name).
    func postToLoginSrf(wresult: String, wctx: String) async throws -> Page {
        try await post(
            EmulatorFixture.base.absoluteString + "/login.srf", form: [("wa", "wsignin1.0"), ("wresult", wresult), ("wctx", wctx)])
    }
}

extension EmulatorFixture {
    /// An assertion for `upn` as Fabrikam's AD FS would write it, signed with `key`.
    func forgedAnswer(upn: String = Browser.pat, issuer: String? = nil, key: SigningKey) throws -> String {
        let now = clock.now
        let assertion = SAMLAssertion(
            id: "_" + UUID().uuidString.lowercased(), issuer: issuer ?? emulator.federatedDomains[0].issuerURI, issueInstant: now,
            notBefore: now, notOnOrAfter: now.addingTimeInterval(3600), audience: WSFederation.microsoftOnlineRealm,
            immutableID: try #require(SAMLAssertion.immutableID(forUserID: Browser.patID)), userPrincipalName: upn,
            authenticationInstant: now)
        return try WSFederationResponse.signed(assertion, with: key)
    }
}

@Suite("Federated domain: fabrikam.example at Fabrikam's AD FS")
struct FederationTests {
    static let providerPrefix = "\(EmulatorFixture.federationBase.absoluteString)/adfs/ls/"

    /// The `wctx` home realm discovery sent to the provider.
    static func wctx(of redirect: Browser.Page) throws -> String {
        let query = try #require(redirect.location?.split(separator: "?").last)
        return try #require(FormFields(encoded: query)["wctx"])
    }

    @Test("pat: user name → the provider's host → wrong password → the signed form → /login.srf → KMSI → consent → code → tokens")
    func patSignsIn() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let (ctx, redirect) = try await browser.startFederated()
            #expect(redirect.status == .found)
            let location = try #require(redirect.location)
            #expect(
                location.hasPrefix(
                    Self.providerPrefix + "?wa=wsignin1.0&wtrealm=urn%3afederation%3aMicrosoftOnline&wctx=LoginOptions%3d3"
                        + "%26estsredirect%3d2%26estsrequest%3d\(ctx)&username=pat%40fabrikam.example&client-request-id="), "\(location)")

            // The provider's own page, on its own host, with AD FS's ids.
            let page = try await browser.get(location)
            #expect(page.status == .ok)
            #expect(page.contains("<title>Sign In</title>"))
            #expect(page.contains(#"<div id="companyName" class="companyName">Fabrikam</div>"#))
            #expect(!page.contains(#"aria-label="Microsoft""#), "the organisation's look, not Microsoft's")
            #expect(page.contains(#"id="\#(SignInPageIDs.adfsLoginForm)""#))
            #expect(page.contains(#"id="\#(SignInPageIDs.adfsUserName)" name="UserName" type="email" value="pat@fabrikam.example""#))
            #expect(page.contains(#"id="\#(SignInPageIDs.adfsPassword)" name="Password" type="password""#))
            #expect(page.contains(#"name="AuthMethod" value="FormsAuthentication""#))
            #expect(page.contains(#"id="\#(SignInPageIDs.adfsSubmit)""#))
            let action = try #require(page.formAction(of: SignInPageIDs.adfsLoginForm))
            #expect(action.hasPrefix(Self.providerPrefix + "?wa=wsignin1.0&wtrealm="), "the form posts back to the provider's host")

            let wrong = try await browser.post(
                action, form: [("UserName", Browser.pat), ("Password", "hunter2"), ("AuthMethod", "FormsAuthentication")])
            #expect(wrong.status == .ok)
            #expect(
                wrong.contains(
                    #"<span id="\#(SignInPageIDs.adfsError)" aria-live="assertive" role="alert">Incorrect user ID or password. "#
                        + "Type the correct user ID and password, and try again.</span>"))
            #expect(wrong.hidden("wresult") == nil)

            let outsider = try await browser.post(
                action,
                form: [("UserName", "alex@contoso.onmicrosoft.com"), ("Password", "Passw0rd!"), ("AuthMethod", "FormsAuthentication")])
            #expect(outsider.contains(#"id="errorText""#))
            #expect(outsider.contains("Enter your user ID in the format &quot;user@fabrikam.example&quot;."))
            #expect(outsider.hidden("wresult") == nil, "the provider vouches only for its own domain")

            let answer = try await browser.post(
                action, form: [("UserName", Browser.pat), ("Password", "Passw0rd!"), ("AuthMethod", "FormsAuthentication")])
            #expect(answer.contains(#"<form method="POST" name="hiddenform" action="http://127.0.0.1:8400/login.srf">"#))
            #expect(answer.contains("document.forms[0].submit()"))
            #expect(answer.contains("<noscript>"))
            #expect(answer.hidden("wa") == "wsignin1.0")
            let wctx = try #require(answer.hidden("wctx"))
            #expect(wctx == "LoginOptions=3&estsredirect=2&estsrequest=\(ctx)")
            let wresult = try #require(answer.hidden("wresult"))
            #expect(wresult.hasPrefix(#"<t:RequestSecurityTokenResponse xmlns:t="http://schemas.xmlsoap.org/ws/2005/02/trust">"#))
            #expect(wresult.contains(#"Issuer="http://sts.fabrikam.example/adfs/services/trust""#))
            #expect(wresult.contains("<saml:Audience>urn:federation:MicrosoftOnline</saml:Audience>"))
            #expect(wresult.contains(#"<saml:Attribute AttributeName="UPN" AttributeNamespace="http://schemas.xmlsoap.org/claims">"#))
            #expect(wresult.contains("<ds:SignatureValue>"))
            #expect(wresult.contains("<ds:KeyInfo><ds:X509Data><ds:X509Certificate>"))
            // The answer reads back and verifies against the key the domain registered.
            let read = try WSFederationResponse(reading: wresult)
            try read.verify(with: fixture.emulator.services.federationKey)
            #expect(read.assertion.userPrincipalName == Browser.pat)
            #expect(read.assertion.immutableID == SAMLAssertion.immutableID(forUserID: Browser.patID))
            #expect(read.assertion.notOnOrAfter.timeIntervalSince(read.assertion.notBefore) == 3600)

            let kmsi = try await browser.post(
                try #require(answer.formAction(of: "hiddenform")), form: [("wa", "wsignin1.0"), ("wresult", wresult), ("wctx", wctx)])
            #expect(kmsi.contains("Stay signed in?"), "\(kmsi.text)")
            #expect(kmsi.contains(#"id="displayName" title="pat@fabrikam.example""#))
            let consent = try await browser.post("/\(Clients.contoso)/login", form: [("ctx", ctx), ("step", "kmsi"), ("kmsi", "yes")])
            #expect(consent.contains("Permissions requested"))
            let done = try await browser.post(
                "/\(Clients.contoso)/login", form: [("ctx", ctx), ("step", "consent"), ("consent", "accept")])
            #expect(done.status == .found)
            #expect(done.location?.hasPrefix(Clients.nativeClient + "?code=0.A") == true)
            #expect(done.headers[.setCookie]?.hasPrefix("ESTSAUTH=") == true)

            let tokens = try await browser.redeem(try #require(done.redirectFields["code"])).json
            let (_, claims) = try jwtParts(try #require(tokens["id_token"] as? String))
            #expect(claims["preferred_username"] as? String == Browser.pat)
            #expect(claims["name"] as? String == "Pat Kowalski")
            #expect(claims["oid"] as? String == Browser.patID)
            #expect(claims["tid"] as? String == Tenant.contoso.id)
            #expect(claims["nonce"] as? String == "nonce-456")
            let (_, access) = try jwtParts(try #require(tokens["access_token"] as? String))
            #expect(access["amr"] as? [String] == ["pwd", "fed"])

            // Entra's password page was never shown: the trace crossed to the provider and back.
            let trace = browser.visited
            #expect(trace.contains { $0.hasPrefix(Self.providerPrefix) })
            #expect(trace.contains("http://127.0.0.1:8400/login.srf"))
        }
    }

    @Test("the shared browser's sign-in walk follows the federated path by itself, and single sign-on then needs no provider")
    func headlessBrowserWalk() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let redirect = try await browser.signIn(Browser.pat)
            #expect(redirect.redirectFields["code"] != nil, "\(redirect.text)")
            let providerVisits = browser.visited.filter { $0.hasPrefix(Self.providerPrefix) }.count
            #expect(providerVisits == 2, "the page, then its form")

            let again = try await browser.get(Browser.authorizeURI(state: "again"))
            #expect(again.redirectFields["code"] != nil, "the session cookie signs pat in")

            // prompt=login: the user name again, then the provider again.
            let forced = try await browser.signIn(Browser.pat, authorize: Browser.authorizeURI(extra: [("prompt", "login")]))
            #expect(forced.redirectFields["code"] != nil)
            #expect(browser.visited.filter { $0.hasPrefix(Self.providerPrefix) }.count == 4)
        }
    }

    @Test("Entra never checks a federated user's password: its password step goes back to the user name")
    func entraPasswordPageRefused() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let (ctx, _) = try await browser.startFederated()
            let page = try await browser.post(
                "/\(Clients.contoso)/login", form: [("ctx", ctx), ("step", "password"), ("passwd", "Passw0rd!")])
            #expect(page.contains(#"id="\#(SignInPageIDs.userName)""#))
            #expect(!page.contains("Stay signed in?"))
            let kmsi = try await browser.post("/\(Clients.contoso)/login", form: [("ctx", ctx), ("step", "kmsi"), ("kmsi", "yes")])
            #expect(kmsi.location == nil, "no code before the provider answered")
            #expect(!kmsi.contains("Permissions requested"))
        }
    }

    @Test("a claims challenge demanding MFA adds the SMS step after the provider; amr says pwd, fed, mfa")
    func mfaAfterFederation() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let claims = #"{"access_token":{"capolids":{"essential":true,"values":["8a2f6c1e-3b4d-4e5f-9a8b-7c6d5e4f3a2b"]}}}"#
            let redirect = try await browser.signIn(Browser.pat, authorize: Browser.authorizeURI(extra: [("claims", claims)]))
            #expect(fixture.announcements.code(for: Browser.pat) != nil, "the SMS step was skipped")
            let tokens = try await browser.redeem(try #require(redirect.redirectFields["code"])).json
            let (_, access) = try jwtParts(try #require(tokens["access_token"] as? String))
            #expect(access["amr"] as? [String] == ["pwd", "fed", "mfa"])
        }
    }

    @Test("a device code sign-in for pat goes through the provider too")
    func deviceCode() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let started = try await browser.startDeviceFlow().json
            let last = try await browser.verifyDevice(userCode: try #require(started["user_code"] as? String), as: Browser.pat)
            #expect(last.contains("You have signed in to the Sesame Directory application on your device."), "\(last.text)")
            #expect(browser.visited.contains { $0.hasPrefix(Self.providerPrefix) })
            let tokens = try await browser.pollDevice(try #require(started["device_code"] as? String))
            let (_, claims) = try jwtParts(try #require(tokens.json["id_token"] as? String))
            #expect(claims["preferred_username"] as? String == Browser.pat)
        }
    }

    @Test("one changed byte of the UPN breaks the signature: AADSTS50006")
    func tamperedAnswer() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let (_, wresult, wctx) = try await browser.federatedAnswer()
            let tampered = wresult.replacingOccurrences(
                of: "<saml:AttributeValue>pat@fabrikam.example</saml:AttributeValue>",
                with: "<saml:AttributeValue>pau@fabrikam.example</saml:AttributeValue>")
            #expect(tampered != wresult)
            let page = try await browser.postToLoginSrf(wresult: tampered, wctx: wctx)
            #expect(page.status == .badRequest)
            #expect(page.contains("<b>AADSTS50006</b>: Signature verification failed because of an invalid signature."))
            #expect(!page.contains("Stay signed in?"))
        }
    }

    @Test("an assertion signed by another key: AADSTS5000811 with its own certificate, AADSTS50006 naming the registered one")
    func anotherKey() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let (_, redirect) = try await browser.startFederated()
            let wctx = try Self.wctx(of: redirect)
            let intruder = try SigningKey.create(commonName: "ADFS Signing - intruder", now: fixture.clock.now)
            let forged = try fixture.forgedAnswer(key: intruder)
            let page = try await browser.postToLoginSrf(wresult: forged, wctx: wctx)
            #expect(page.contains("AADSTS5000811"), "\(page.text)")

            // The same forgery naming the registered certificate: the signature itself fails.
            let registered = Data(fixture.emulator.services.federationKey.certificateDER).base64EncodedString()
            let claimed = forged.replacingOccurrences(
                of: Data(intruder.certificateDER).base64EncodedString(), with: registered)
            let second = try await browser.postToLoginSrf(wresult: claimed, wctx: wctx)
            #expect(second.contains("AADSTS50006"), "\(second.text)")

            // An issuer no federated domain has.
            let stranger = try fixture.forgedAnswer(issuer: "http://sts.evil.example/adfs/services/trust", key: intruder)
            let third = try await browser.postToLoginSrf(wresult: stranger, wctx: wctx)
            #expect(
                third.contains(
                    "AADSTS50107</b>: The requested federation realm object &#39;http://sts.evil.example/adfs/services/trust&#39; "
                        + "does not exist."))
        }
    }

    @Test("an expired assertion: AADSTS500133")
    func expired() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let (_, wresult, wctx) = try await browser.federatedAnswer()
            fixture.clock.advance(by: 2 * 3600)
            let page = try await browser.postToLoginSrf(wresult: wresult, wctx: wctx)
            #expect(page.contains("<b>AADSTS500133</b>: Assertion is not within its valid time range."), "\(page.text)")
        }
    }

    @Test("a wctx naming no transaction, and an answer replayed after its sign-in finished: AADSTS50089; into another: AADSTS50008")
    func unknownContextAndReplay() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let (_, wresult, wctx) = try await browser.federatedAnswer()
            let madeUp = try await browser.postToLoginSrf(wresult: wresult, wctx: "LoginOptions=3&estsredirect=2&estsrequest=made-up")
            #expect(madeUp.contains("AADSTS50089"))
            let none = try await browser.postToLoginSrf(wresult: wresult, wctx: "")
            #expect(none.contains("AADSTS50089"))

            // The answer signs the sign-in in; then it is spent.
            let kmsi = try await browser.postToLoginSrf(wresult: wresult, wctx: wctx)
            #expect(kmsi.contains("Stay signed in?"))
            let ctx = try #require(WSFederation.transactionID(inContext: wctx))
            _ = try await browser.post("/\(Clients.contoso)/login", form: [("ctx", ctx), ("step", "kmsi"), ("kmsi", "no")])
            let done = try await browser.post(
                "/\(Clients.contoso)/login", form: [("ctx", ctx), ("step", "consent"), ("consent", "accept")])
            #expect(done.redirectFields["code"] != nil)
            let replayed = try await browser.postToLoginSrf(wresult: wresult, wctx: wctx)
            #expect(replayed.contains("AADSTS50089"))

            // Into a new sign-in of pat's: the assertion was accepted once already.
            browser.forgetCookies()
            let (_, redirect) = try await browser.startFederated()
            let fresh = try Self.wctx(of: redirect)
            let again = try await browser.postToLoginSrf(wresult: wresult, wctx: fresh)
            #expect(again.contains("<b>AADSTS50008</b>: SAML token is invalid."), "\(again.text)")
        }
    }

    @Test("lee's answer cannot finish pat's sign-in: AADSTS5000819; garbage and hostile XML: AADSTS50008")
    func wrongUserAndGarbage() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let (_, redirect) = try await browser.startFederated()
            let provider = try #require(redirect.location)
            // At the provider, someone signs in as lee within pat's sign-in.
            let answer = try await browser.providerAnswer(at: provider, user: "lee@fabrikam.example")
            let wctx = try #require(answer.hidden("wctx"))
            let page = try await browser.postToLoginSrf(wresult: try #require(answer.hidden("wresult")), wctx: wctx)
            #expect(page.contains("AADSTS5000819"), "\(page.text)")
            #expect(page.contains("does not match the user &#39;pat@fabrikam.example&#39;"))

            let hostile = [
                "not xml", "<t:RequestSecurityTokenResponse>", #"<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">]><r>&a;&a;&a;</r>"#,
                String(repeating: "<a>", count: 5000) + String(repeating: "</a>", count: 5000),
                "<r>" + String(repeating: "x", count: 70_000) + "</r>",
            ]
            for wresult in hostile {
                let refused = try await browser.postToLoginSrf(wresult: wresult, wctx: wctx)
                #expect(refused.status == .badRequest)
                #expect(refused.contains("AADSTS50008"), "\(wresult.prefix(40))")
            }
        }
    }

    @Test("the provider answers only under its own host name, and Entra's pages not under it")
    func strictHosts() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let (ctx, redirect) = try await browser.startFederated()
            let location = try #require(redirect.location)
            let query = try #require(location.split(separator: "?").last)

            // The router test client's own `localhost`, and Entra's name: 404.
            let bare = try await browser.get("/adfs/ls/?\(query)")
            #expect(bare.status == .notFound)
            let entraHost = try await browser.get("\(EmulatorFixture.base.absoluteString)/adfs/ls/?\(query)")
            #expect(entraHost.status == .notFound)
            #expect(entraHost.contains("We couldn’t find that page"))
            #expect(try await browser.get(location).status == .ok)

            // Entra's pages under the provider's name: refused, and the transaction goes on.
            let federationRoot = EmulatorFixture.federationBase.absoluteString
            let login = try await browser.post(
                "\(federationRoot)/\(Clients.contoso)/login",
                form: [("ctx", ctx), ("step", "username"), ("loginfmt", "alex@contoso.onmicrosoft.com")])
            #expect(login.status == .notFound)
            #expect(!login.contains(#"id="\#(SignInPageIDs.password)""#))
            let answer = try await browser.providerAnswer(at: location)
            let wresult = try #require(answer.hidden("wresult"))
            let wctx = try #require(answer.hidden("wctx"))
            let srf = try await browser.post(
                "\(federationRoot)/login.srf", form: [("wa", "wsignin1.0"), ("wresult", wresult), ("wctx", wctx)])
            #expect(srf.status == .notFound)
            #expect(try await browser.postToLoginSrf(wresult: wresult, wctx: wctx).contains("Stay signed in?"))

            // The provider knows one relying party.
            let otherRealm = try await browser.get(
                location.replacingOccurrences(of: "urn%3afederation%3aMicrosoftOnline", with: "urn%3aevil"))
            #expect(otherRealm.status == .badRequest)
            #expect(otherRealm.contains("MSIS7007"))
        }
    }

    @Test("a managed user is unaffected: alex gets Entra's password page and amr pwd")
    func managedUserUnaffected() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let (_, page) = try await browser.startFederated("alex@contoso.onmicrosoft.com")
            #expect(page.status == .ok)
            #expect(page.contains(#"id="\#(SignInPageIDs.password)""#))
            #expect(page.identityProviderLocation == nil)
            let tokens = try await browser.tokens()
            let (_, access) = try jwtParts(try #require(tokens["access_token"] as? String))
            #expect(access["amr"] as? [String] == ["pwd"])
            #expect(!browser.visited.contains { $0.contains("/adfs/") })
        }
    }

    @Test("Graph finds pat and lee in Contoso's directory")
    func graphFindsPat() async throws {
        let fixture = try await EmulatorFixture()
        try await fixture.withBrowser { browser in
            let token = try await browser.graphToken()
            let search = try await browser.graph(
                #"/v1.0/users?$search="displayName:pat""#.replacingOccurrences(of: "\"", with: "%22"), token: token, eventual: true)
            let rows = try #require(search.json["value"] as? [[String: Any]], "\(search.text)")
            let pat = try #require(rows.first { $0["userPrincipalName"] as? String == Browser.pat })
            #expect(pat["displayName"] as? String == "Pat Kowalski")
            #expect(pat["givenName"] as? String == "Pat")
            #expect(pat["surname"] as? String == "Kowalski")
            let lee = try await browser.graph("/v1.0/users/lee@fabrikam.example", token: token)
            #expect(lee.json["displayName"] as? String == "Lee Chen")
        }
    }

    @Test("in demo mode the provider's page names its users and the password")
    func demoNote() async throws {
        let fixture = try await EmulatorFixture(demo: true)
        try await fixture.withBrowser { browser in
            let (_, redirect) = try await browser.startFederated()
            let page = try await browser.get(try #require(redirect.location))
            #expect(page.contains("Demo mode: pat@fabrikam.example or lee@fabrikam.example; the password is <code>Passw0rd!</code>"))
        }
    }
}
