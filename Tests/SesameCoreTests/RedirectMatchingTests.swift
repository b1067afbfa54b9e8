import Foundation
import SesameCore
import SesameCoreTestSupport
import Testing

@Suite("Redirect matching and navigation classes")
struct RedirectMatchingTests {
    let v2 = AccountConfiguration(
        clientID: "client", scopes: ["openid"],
        authorizationURL: URL(string: "https://login.microsoftonline.com/common/oauth2/v2.0/authorize")!,
        tokenURL: URL(string: "https://login.microsoftonline.com/common/oauth2/v2.0/token")!,
        redirectURL: URL(string: "urn:ietf:wg:oauth:2.0:oob")!,
        loginURL: URL(string: "https://login.microsoftonline.com/common/login")!,
        storageGroup: "g")

    @Test("the seeds' three URL cases: authorize and login are shown, the redirect is intercepted")
    func seedCases() {
        let classifier = NavigationClassifier(configuration: v2)
        #expect(
            classifier.classify(URL(string: "https://login.microsoftonline.com/common/oauth2/v2.0/authorize?client_id=client&state=x")!)
                == .authorize)
        #expect(classifier.classify(URL(string: "https://login.microsoftonline.com/common/login")!) == .login)
        #expect(classifier.classify(URL(string: "urn:ietf:wg:oauth:2.0:oob?code=abc&state=x")!) == .redirect)
        #expect(classifier.classify(URL(string: "https://login.live.com/oauth20_authorize.srf?x=1")!) == .other)
    }

    @Test(
        "look-alikes that contain the redirect URI as text are not intercepted",
        arguments: [
            "https://evil.example/?x=urn:ietf:wg:oauth:2.0:oob?code=1",
            "https://login.microsoftonline.com.evil.example/common/oauth2/nativeclient?code=1",
            "https://evil.example/login.microsoftonline.com/common/oauth2/nativeclient?code=1",
            "http://login.microsoftonline.com/common/oauth2/nativeclient?code=1",
            "https://login.microsoftonline.com:8443/common/oauth2/nativeclient?code=1",
            "https://login.microsoftonline.com/common/oauth2/nativeclientX?code=1",
            "https://login.microsoftonline.com/common/oauth2/NativeClient?code=1",
            "https://user@login.microsoftonline.com/common/oauth2/nativeclient?code=1",
            "urn:ietf:wg:oauth:2.0:oobx?code=1",
            "urn:ietf:wg:oauth:2.0:oob/x?code=1",
        ])
    func lookAlikes(url: String) {
        let nativeClient = RedirectMatcher(redirectURI: URL(string: "https://login.microsoftonline.com/common/oauth2/nativeclient")!)
        let oob = RedirectMatcher(redirectURI: URL(string: "urn:ietf:wg:oauth:2.0:oob")!)
        #expect(!nativeClient.matches(url))
        #expect(!oob.matches(url))
    }

    @Test(
        "real redirects match whatever their query, host case or explicit default port",
        arguments: [
            (
                "https://login.microsoftonline.com/common/oauth2/nativeclient",
                "https://login.microsoftonline.com/common/oauth2/nativeclient?code=0.AAA&state=s"
            ),
            (
                "https://login.microsoftonline.com/common/oauth2/nativeclient",
                "https://LOGIN.microsoftonline.com:443/common/oauth2/nativeclient#code=x"
            ),
            (
                "https://fabrikamb2c.b2clogin.com/oauth2/nativeclient",
                "https://fabrikamb2c.b2clogin.com/oauth2/nativeclient?error=access_denied"
            ),
            ("urn:ietf:wg:oauth:2.0:oob", "urn:ietf:wg:oauth:2.0:oob?code=abc"),
            ("urn:ietf:wg:oauth:2.0:oob", "URN:ietf:wg:oauth:2.0:oob?code=abc"),
            ("http://127.0.0.1:49152/redirect", "http://127.0.0.1:49152/redirect?code=1"),
            ("https://contoso.com", "https://contoso.com/?code=1"),
        ])
    func realRedirects(registered: String, navigation: String) {
        #expect(RedirectMatcher(redirectURI: URL(string: registered)!).matches(navigation))
    }

    @Test("a redirect URI on the identity host is still classified as the redirect")
    func nativeClientOnIdentityHost() {
        var configuration = v2
        configuration.redirectURL = URL(string: "https://login.microsoftonline.com/common/oauth2/nativeclient")!
        let classifier = NavigationClassifier(configuration: configuration)
        #expect(classifier.classify(URL(string: "https://login.microsoftonline.com/common/oauth2/nativeclient?code=1")!) == .redirect)
        #expect(
            classifier.classify(URL(string: "https://login.microsoftonline.com.evil.example/common/oauth2/nativeclient?code=1")!) == .other)
    }
}
