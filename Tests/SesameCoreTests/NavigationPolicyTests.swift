import Foundation
import SesameCoreTestSupport
import Testing

@testable import SesameCore

/// The sign-in browser's whole policy, decided by the session in the Core: every rule the web
/// view used to apply itself, without a display.
@Suite("The sign-in's navigation policy")
struct NavigationPolicyTests {
    static let nativeClient = "https://login.microsoftonline.com/common/oauth2/nativeclient"

    /// A session for an Entra-shaped configuration whose redirect URI is `redirect`.
    static func session(redirect: String = nativeClient) throws -> SignInSession {
        let configuration = AccountConfiguration(
            clientID: "6731de76-14a6-49ae-97bc-6eba6914391e", scopes: ["openid"],
            authorizationURL: try #require(URL(string: "https://login.microsoftonline.com/contoso/oauth2/v2.0/authorize")),
            tokenURL: try #require(URL(string: "https://login.microsoftonline.com/contoso/oauth2/v2.0/token")),
            redirectURL: try #require(URL(string: redirect)),
            loginURL: URL(string: "https://login.microsoftonline.com/contoso/login"), storageGroup: "tests")
        return SignInSession(
            accountType: "test", configuration: configuration, request: AuthorizationRequest(configuration: configuration))
    }

    static func go(_ address: String?, _ kind: Navigation.Kind = .navigation, method: String = "GET") -> Navigation {
        Navigation(kind: kind, address: address, method: method)
    }

    @Test("the redirect is intercepted, at its exact URI only: parsed scheme, host, port and path")
    func redirect() throws {
        let session = try Self.session()
        for lookAlike in [
            "https://evil.example/?x=\(Self.nativeClient)", "https://login.microsoftonline.com.evil.example/common/oauth2/nativeclient",
            "https://login.microsoftonline.com/common/oauth2/nativeclientx", "http://login.microsoftonline.com/common/oauth2/nativeclient",
            "https://login.microsoftonline.com:8443/common/oauth2/nativeclient",
        ] {
            #expect(session.decide(Self.go(lookAlike)) != .intercept, "\(lookAlike)")
        }
        #expect(!session.isFinished)
        let state = session.request.state.revealed
        #expect(
            session.decide(Self.go("HTTPS://LOGIN.microsoftonline.com:443/common/oauth2/nativeclient?code=c&state=\(state)")) == .intercept)
        #expect(session.isFinished)
        // A second navigation to it is not loaded either, and changes nothing.
        #expect(session.decide(Self.go(Self.nativeClient + "?code=other")) == .intercept)
        #expect(session.caughtRedirect?.absoluteString.hasSuffix("code=c&state=\(state)") == true)
        // The out-of-band URN, as a script navigates to it.
        let oob = try Self.session(redirect: "urn:ietf:wg:oauth:2.0:oob")
        #expect(oob.decide(Self.go("urn:ietf:wg:oauth:2.0:oob?code=js456&state=\(oob.request.state.revealed)")) == .intercept)
    }

    @Test("the identity service's pages show, each with its kind; other https pages too (MFA, a federated IdP)")
    func shown() throws {
        let session = try Self.session()
        #expect(session.decide(Self.go("https://login.microsoftonline.com/contoso/oauth2/v2.0/authorize?client_id=x")) == .show(.authorize))
        #expect(session.decide(Self.go("https://login.microsoftonline.com/contoso/login", method: "POST")) == .show(.login))
        #expect(session.decide(Self.go("https://sts.fabrikam.example/adfs/ls/?wa=wsignin1.0")) == .show(.other))
        #expect(session.decide(Self.go("about:blank")) == .show(.other))
        #expect(session.decide(Navigation(kind: .response, address: "https://login.microsoftonline.com/x")) == .show(.other))
    }

    @Test("plain http only on this computer: 127.0.0.0/8, localhost, ::1")
    func unencrypted() throws {
        let session = try Self.session()
        for local in ["http://127.0.0.1:8400/x", "http://127.0.0.2/x", "http://localhost:1/x", "http://[::1]:8400/x", "http://LOCALHOST/x"]
        {
            #expect(session.decide(Self.go(local)) == .show(.other), "\(local)")
        }
        for remote in ["http://login.microsoftonline.com/x", "http://127.0.0.1.evil.example/x", "http://10.0.0.1/x", "http://128.0.0.1/x"] {
            #expect(session.decide(Self.go(remote)) == .refuse(.unencrypted), "\(remote)")
        }
    }

    @Test("no other scheme loads: file, data, javascript, about other than blank, a custom one")
    func schemes() throws {
        let session = try Self.session()
        for address in ["file:///etc/passwd", "data:text/html,hi", "javascript:alert(1)", "about:config", "ms-appx-web://x", "ftp://x/y"] {
            #expect(session.decide(Self.go(address)) == .refuse(.scheme), "\(address)")
        }
        for unparseable in [nil, "", "not a url", "//no-scheme.example/x"] {
            #expect(session.decide(Self.go(unparseable)) == .refuse(.unparseableAddress), "\(unparseable ?? "nil")")
        }
    }

    @Test("pop-ups are refused unless they are the redirect; downloads are never saved")
    func popupsAndDownloads() throws {
        let session = try Self.session()
        #expect(session.decide(Self.go("https://login.microsoftonline.com/help", .newWindow)) == .refuse(.popup))
        #expect(session.decide(Self.go("file:///x", .newWindow)) == .refuse(.scheme))
        #expect(session.decide(Navigation(kind: .response, address: "https://x.example/f.exe", isDownload: true)) == .refuse(.download))
        #expect(session.decide(Self.go(Self.nativeClient + "?code=c&state=\(session.request.state.revealed)", .newWindow)) == .intercept)
    }

    @Test("without a sign-in the same rules hold, and nothing is intercepted")
    func withoutSession() {
        #expect(NavigationDecision.forNavigation(Self.go(Self.nativeClient + "?code=c"), classifier: nil) == .show(.other))
        #expect(NavigationDecision.forNavigation(Self.go("http://example.com/"), classifier: nil) == .refuse(.unencrypted))
        #expect(NavigationDecision.forNavigation(Self.go("https://example.com/", .newWindow), classifier: nil) == .refuse(.popup))
    }

    @Test("a session ends once: answered with its own state, failed without a code, cancelled, handed off; another state is no ending")
    func endings() async throws {
        let session = try Self.session()
        let state = session.request.state.revealed
        #expect(session.resume(with: try #require(URL(string: Self.nativeClient + "?code=c1&state=\(state)"))))
        guard case .answered(.code(let answer)) = await session.ending() else {
            Issue.record("not answered with the code")
            return
        }
        #expect(answer.code.revealed == "c1")
        session.cancel()
        guard case .answered = await session.ending() else {
            Issue.record("a cancel after the answer changed the ending")
            return
        }

        // Another request's answer (a page of the flow navigating to the redirect URI itself):
        // not loaded, not taken; the sign-in goes on and takes its own answer after it.
        let foreign = try Self.session()
        for forged in ["?code=c&state=not-mine", "?code=c", "#code=c&state=x", "?error=access_denied&state=not-mine", "?state=x"] {
            #expect(foreign.decide(Self.go(Self.nativeClient + forged)) == .ignoreForeignAnswer, "\(forged)")
            #expect(!foreign.resume(with: try #require(URL(string: Self.nativeClient + forged))))
        }
        #expect(!foreign.isFinished)
        let own = "?code=mine&state=\(foreign.request.state.revealed)"
        #expect(foreign.decide(Self.go(Self.nativeClient + own)) == .intercept)
        guard case .answered(.code(let taken)) = await foreign.ending() else { throw TestFailure("its own answer was not taken") }
        #expect(taken.code.revealed == "mine")

        let empty = try Self.session()
        empty.resume(with: try #require(URL(string: Self.nativeClient + "?state=\(empty.request.state.revealed)")))
        guard case .failed(let malformed) = await empty.ending() else { throw TestFailure("an answer without a code was answered") }
        #expect(malformed.code == .malformedRedirect)

        let refused = try Self.session()
        let refusal = "?error=access_denied&error_description=AADSTS65004&state=\(refused.request.state.revealed)"
        refused.resume(with: try #require(URL(string: Self.nativeClient + refusal)))
        guard case .answered(.error(let error)) = await refused.ending() else { throw TestFailure("the refusal was not an answer") }
        #expect(error.error == "access_denied")

        let moved = try Self.session()
        moved.handOff()
        moved.cancel()
        guard case .handedOff = await moved.ending() else { throw TestFailure("the hand-off was not the ending") }
        // A redirect after the ending is still not loaded, and changes nothing.
        #expect(moved.decide(Self.go(Self.nativeClient + "?code=late&state=x")) == .intercept)
        guard case .handedOff = await moved.ending() else { throw TestFailure("a late redirect changed the ending") }
    }

    @Test("\"Continue in your browser\": the store dismisses the agent and says the sign-in moved, not that it failed")
    func handOff() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await fixture.configure()
        let agent = FakeUserAgent { _, _ in [.handOff] }
        do {
            _ = try await fixture.store.signIn(accountType: fixture.accountType, using: agent)
            Issue.record("the sign-in went on")
        } catch {
            #expect(error.code == .handedOffToBrowser)
        }
        #expect(agent.dismissed == agent.presented.map(\.id))
    }

    struct TestFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
