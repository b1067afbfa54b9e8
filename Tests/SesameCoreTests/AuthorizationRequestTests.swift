import Crypto
import Foundation
import SesameCore
import SesameCoreTestSupport
import Testing

@Suite("Authorization requests")
struct AuthorizationRequestTests {
    let configuration = FakeIdentityProvider().configuration

    func query(_ url: URL) -> [String: String] {
        Dictionary(
            FormEncoding.decode(URLComponents(url: url, resolvingAgainstBaseURL: false)!.percentEncodedQuery!), uniquingKeysWith: { $1 })
    }

    @Test("the URL carries code flow, client, redirect, scopes, state, nonce, PKCE S256 and client_info")
    func parameters() {
        let request = AuthorizationRequest(
            configuration: configuration, additionalParameters: ["prompt": "select_account", "login_hint": "alex@contoso.com"])
        let fields = query(request.url)
        #expect(request.url.absoluteString.hasPrefix("https://login.microsoftonline.com/common/oauth2/v2.0/authorize?"))
        #expect(fields["response_type"] == "code")
        #expect(fields["client_id"] == configuration.clientID)
        #expect(fields["redirect_uri"] == "https://login.microsoftonline.com/common/oauth2/nativeclient")
        #expect(fields["scope"] == "openid profile offline_access User.Read")
        #expect(fields["state"] == request.state.revealed)
        #expect(fields["nonce"] == request.nonce.revealed)
        #expect(fields["code_challenge_method"] == "S256")
        let expected = Base64URL.encode(SHA256.hash(data: Data(request.proofKey.verifier.revealed.utf8)))
        #expect(fields["code_challenge"] == expected)
        #expect(fields["client_info"] == "1")
        #expect(fields["prompt"] == "select_account")
        #expect(fields["login_hint"] == "alex@contoso.com")
        #expect(fields["code_verifier"] == nil)
    }

    @Test("state, nonce and verifier are fresh CSPRNG values every time")
    func freshValues() {
        let requests = (0..<200).map { _ in AuthorizationRequest(configuration: configuration) }
        #expect(Set(requests.map(\.state.revealed)).count == 200)
        #expect(Set(requests.map(\.nonce.revealed)).count == 200)
        #expect(Set(requests.map(\.proofKey.verifier.revealed)).count == 200)
        #expect(requests.allSatisfy { $0.proofKey.verifier.revealed.count == 43 && $0.state.revealed.count == 43 })
    }

    @Test("PKCE matches RFC 7636 appendix B")
    func rfc7636Vector() {
        let key = ProofKey(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(key.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    @Test("B2C's ?p= policy stays on the URL and additional parameters such as domain_hint are added")
    func b2cPolicy() {
        let b2c = AccountConfiguration(
            clientID: "c", scopes: ["openid", "offline_access", "c"],
            authorizationURL: URL(
                string: "https://fabrikamb2c.b2clogin.com/fabrikamb2c.onmicrosoft.com/oauth2/v2.0/authorize?p=B2C_1_SignUpSignIn")!,
            tokenURL: URL(string: "https://fabrikamb2c.b2clogin.com/fabrikamb2c.onmicrosoft.com/oauth2/v2.0/token?p=B2C_1_SignUpSignIn")!,
            redirectURL: URL(string: "urn:ietf:wg:oauth:2.0:oob")!, storageGroup: "g",
            additionalAuthorizationParameters: ["domain_hint": "contoso.com", "p": "B2C_1_SignUpSignIn"])
        let url = AuthorizationRequest(configuration: b2c).url
        #expect(
            url.absoluteString.hasPrefix(
                "https://fabrikamb2c.b2clogin.com/fabrikamb2c.onmicrosoft.com/oauth2/v2.0/authorize?p=B2C_1_SignUpSignIn&"))
        #expect(url.absoluteString.components(separatedBy: "p=B2C_1_SignUpSignIn").count == 2)
        #expect(query(url)["domain_hint"] == "contoso.com")
        #expect(query(url)["client_info"] == "1")
    }

    @Test("no client_info for a non-Microsoft authority")
    func nonMicrosoft() {
        var other = configuration
        other.authorizationURL = URL(string: "https://accounts.example.org/authorize")!
        #expect(query(AuthorizationRequest(configuration: other).url)["client_info"] == nil)
    }
}
