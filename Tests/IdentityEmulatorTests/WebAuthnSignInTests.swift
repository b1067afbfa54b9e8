import Foundation
import SesameTestSupport
import Testing

@testable import IdentityEmulator

/// Passkeys on the emulator's pages, with the software authenticator of the relying party's
/// tests playing the browser's `navigator.credentials`: megan registers a passkey, signs in with
/// it after her password and without a user name, and every spoiled answer is refused on the page
/// without advancing the sign-in.
@Suite("Passkey sign-in pages")
struct WebAuthnSignInTests {
    static let megan = "megan@contoso.onmicrosoft.com"
    /// The fixture's base: the relying party id is its host, the only origin its root.
    static let origin = "http://127.0.0.1:8400"
    static let rpID = "127.0.0.1"

    /// Registers `authenticator` for `user` as the Security info page would, through the relying party.
    static func register(_ fixture: EmulatorFixture, _ authenticator: SoftAuthenticator, user name: String = megan) async throws {
        let services = fixture.emulator.services
        let user = try #require(services.contoso.user(signInName: name))
        let rp = await PasskeyController(services: services).relyingParty(for: services.contoso.tenant)
        #expect(rp.policy.rpID == rpID && rp.policy.allowedOrigins == [origin])
        let issued = await services.state.issuePasskeyChallenge(for: .registration, userID: user.id, now: fixture.clock.now)
        let response = try authenticator.registration(
            .init(challenge: issued.challenge, type: "webauthn.create", origin: origin, rpID: rpID), attestation: .none)
        _ = try await services.state.registerPasskey(response, relyingParty: rp, displayName: "YubiKey", now: fixture.clock.now)
    }

    /// The options the passkey page gives `navigator.credentials.get`.
    static func options(_ page: Browser.Page) throws -> PublicKeyCredentialRequestOptionsJSON {
        let text = page.text
        let start = try #require(text.range(of: #"data-options=""#), "no passkey page: \(text.prefix(400))")
        let rest = text[start.upperBound...]
        let end = try #require(rest.firstIndex(of: "\""))
        let json = String(rest[..<end]).replacing("&quot;", with: "\"").replacing("&#39;", with: "'").replacing("&lt;", with: "<")
            .replacing("&gt;", with: ">").replacing("&amp;", with: "&")
        return try JSONDecoder().decode(PublicKeyCredentialRequestOptionsJSON.self, from: Data(json.utf8))
    }

    /// The authenticator's answer to the page's options, posted as the page's script posts it.
    static func answer(
        _ browser: Browser, ctx: String, page: Browser.Page, with authenticator: inout SoftAuthenticator, userHandle: [UInt8]?,
        tamper: (inout SoftAuthenticator.Answer) -> Void = { _ in }
    ) async throws -> Browser.Page {
        let options = try options(page)
        var answer = SoftAuthenticator.Answer(
            challenge: try #require(WebAuthnBase64URL.decode(options.challenge)), type: "webauthn.get", origin: origin, rpID: options.rpId)
        answer.userHandle = userHandle
        tamper(&answer)
        let json = String(decoding: try JSONEncoder().encode(authenticator.assertion(answer)), as: UTF8.self)
        return try await browser.post("/common/login", form: [("ctx", ctx), ("step", "fido"), ("credential", json)])
    }

    @Test("after her password megan is asked for her passkey first (system-preferred), and its answer signs her in with amr fido")
    func secondFactor() async throws {
        let fixture = try await EmulatorFixture()
        let registered = SoftAuthenticator(.es256)
        try await Self.register(fixture, registered)
        try await fixture.withBrowser { browser in
            var key = registered
            let (ctx, page) = try await SecondFactorTests.afterPassword(browser, Self.megan)
            #expect(page.contains("Sign in with a passkey or security key"))
            let options = try Self.options(page)
            #expect(options.allowCredentials.map(\.id) == [WebAuthnBase64URL.encode(key.credentialID)])
            #expect(options.userVerification == "required" && options.rpId == Self.rpID)

            // A spoiled answer: the page again with the relying party's sentence, the sign-in not advanced.
            let wrongOrigin = try await Self.answer(browser, ctx: ctx, page: page, with: &key, userHandle: nil) {
                $0.origin = "https://evil.example"
            }
            #expect(wrongOrigin.contains(HTML.escape(WebAuthnRefusal.originNotAllowed.sentence)))
            #expect(!wrongOrigin.contains("Stay signed in?"))
            let forged = try await Self.answer(browser, ctx: ctx, page: wrongOrigin, with: &key, userHandle: nil) {
                $0.corruptSignature = true
            }
            #expect(forged.contains(HTML.escape(WebAuthnRefusal.signatureInvalid.sentence)))
            let wrongRP = try await Self.answer(browser, ctx: ctx, page: forged, with: &key, userHandle: nil) {
                $0.rpID = "login.microsoft.com"
            }
            #expect(wrongRP.contains(HTML.escape(WebAuthnRefusal.rpIDMismatch.sentence)))

            let done = try await Self.answer(browser, ctx: ctx, page: wrongRP, with: &key, userHandle: nil)
            let tokens = try await SecondFactorTests.finish(browser, ctx: ctx, from: done)
            #expect(try SecondFactorTests.amr(tokens).contains("fido"))
            #expect(try SecondFactorTests.amr(tokens).contains("mfa"))
        }
    }

    @Test("Sign-in options → Face, fingerprint, PIN, or security key: the passkey names megan; a replay and a cloned key are refused")
    func usernameless() async throws {
        let fixture = try await EmulatorFixture()
        let registered = SoftAuthenticator(.es256)
        try await Self.register(fixture, registered)
        let megan = try #require(fixture.emulator.contoso.user(signInName: Self.megan))
        let used = try await fixture.withBrowser { browser in
            var key = registered
            let first = try await browser.get(Browser.authorizeURI())
            #expect(first.contains(#"id="signInOptions""#))
            let ctx = try #require(first.hidden("ctx"))
            let options = try await browser.post(
                "/common/login", form: [("ctx", ctx), ("step", "username"), ("action", "sign-in-options")])
            #expect(options.contains(PasskeyPages.tileText))
            let page = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "fido"), ("action", "start")])
            #expect(try Self.options(page).allowCredentials.isEmpty, "a sign-in without a user name names no credential")

            // A clone of the key (its counter behind) is refused; then the key itself signs in.
            var clone = key
            _ = try await Self.answer(browser, ctx: ctx, page: page, with: &key, userHandle: Array(megan.id.utf8))
            let again = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "fido"), ("action", "start")])
            let cloned = try await Self.answer(browser, ctx: ctx, page: again, with: &clone, userHandle: Array(megan.id.utf8))
            #expect(cloned.contains(HTML.escape(WebAuthnRefusal.signCountRollback.sentence)), "\(cloned.text.prefix(600))")
            return key
        }
        // A new sign-in: the key signs in without a user name; its answer posted twice is refused the second time.
        try await fixture.withBrowser { browser in
            var key = used
            let ctx = try #require(try await browser.get(Browser.authorizeURI()).hidden("ctx"))
            let page = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "fido"), ("action", "start")])
            let options = try Self.options(page)
            var answer = SoftAuthenticator.Answer(
                challenge: try #require(WebAuthnBase64URL.decode(options.challenge)), type: "webauthn.get", origin: Self.origin,
                rpID: Self.rpID)
            answer.userHandle = Array(megan.id.utf8)
            let json = String(decoding: try JSONEncoder().encode(key.assertion(answer)), as: UTF8.self)
            let done = try await browser.post("/common/login", form: [("ctx", ctx), ("step", "fido"), ("credential", json)])
            #expect(done.contains("Stay signed in?"), "\(done.text.prefix(600))")
            #expect(done.contains(Self.megan))
            let ctx2 = try #require(try await browser.get(Browser.authorizeURI(extra: [("prompt", "login")])).hidden("ctx"))
            let replay = try await browser.post("/common/login", form: [("ctx", ctx2), ("step", "fido"), ("credential", json)])
            #expect(replay.contains(HTML.escape(WebAuthnRefusal.challengeUnknown.sentence)), "\(replay.text.prefix(600))")
            let tokens = try await SecondFactorTests.finish(browser, ctx: ctx, from: done)
            #expect(try SecondFactorTests.amr(tokens) == ["fido", "mfa"])
        }
    }

    @Test("the passkeys survive a restart in the state directory")
    func persisted() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "passkeys-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = SoftAuthenticator(.rs256)
        let first = try await EmulatorFixture(stateDirectory: directory)
        try await Self.register(first, key)
        let second = try await EmulatorFixture(stateDirectory: directory)
        let megan = try #require(second.emulator.contoso.user(signInName: Self.megan))
        let kept = await second.emulator.services.state.passkeys(userID: megan.id)
        #expect(kept.map(\.credentialID) == [Data(key.credentialID)])
        #expect(await second.emulator.services.state.hasPasskey(userID: megan.id))
        #expect(await second.emulator.services.state.deletePasskey(userID: megan.id, id: kept[0].id))
        #expect(!(await second.emulator.services.state.hasPasskey(userID: megan.id)))
    }
}
