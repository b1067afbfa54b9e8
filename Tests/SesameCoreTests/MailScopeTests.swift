import Foundation
import Testing

@testable import SesameCore

/// What a mail client is handed: Exchange Online's scopes by their short names, the SASL strings
/// a server reads, and the administrator's consent link for the app registration.
@Suite("Mail: scopes, SASL strings, the admin consent link")
struct MailScopeTests {
    @Test("short names and portal-style names become Exchange's scopes; anything else stays as written")
    func shortNames() {
        #expect(MailScope.expand("imap") == ["https://outlook.office.com/IMAP.AccessAsUser.All"])
        #expect(MailScope.expand("SMTP") == ["https://outlook.office.com/SMTP.Send"])
        #expect(MailScope.expand("mail") == ["https://outlook.office.com/IMAP.AccessAsUser.All", "https://outlook.office.com/SMTP.Send"])
        #expect(MailScope.expand("IMAP.AccessAsUser.All") == ["https://outlook.office.com/IMAP.AccessAsUser.All"], "not Graph's")
        #expect(MailScope.expand("User.Read") == ["User.Read"])
        #expect(MailScope.isExchange("https://outlook.office365.com/SMTP.Send"))
        #expect(!MailScope.isExchange("https://graph.microsoft.com/IMAP.AccessAsUser.All"))
    }

    @Test("XOAUTH2 and OAUTHBEARER as RFC 7628 and Microsoft spell them")
    func saslStrings() throws {
        let token = Secret("eyJ0.eyJ1.c2ln")
        let xoauth2 = try #require(Data(base64Encoded: SASLResponse.xoauth2(user: "alex@contoso.com", token: token)))
        #expect(String(decoding: xoauth2, as: UTF8.self) == "user=alex@contoso.com\u{1}auth=Bearer eyJ0.eyJ1.c2ln\u{1}\u{1}")
        let bearer = try #require(
            Data(base64Encoded: SASLResponse.oauthBearer(user: "a,b=c@contoso.com", token: token, host: "imap.test", port: 993)))
        #expect(
            String(decoding: bearer, as: UTF8.self)
                == "n,a=a=2Cb=3Dc@contoso.com,\u{1}host=imap.test\u{1}port=993\u{1}auth=Bearer eyJ0.eyJ1.c2ln\u{1}\u{1}")
    }

    @Test("the admin consent link: the tenant (organizations for common), the client, the scopes, the redirect; none for B2C")
    func adminConsentLink() throws {
        var configuration = AccountConfiguration(
            clientID: "6731de76-14a6-49ae-97bc-6eba6914391e", scopes: ["openid", "offline_access", "User.Read"],
            authorizationURL: URL(string: "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize")!,
            tokenURL: URL(string: "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token")!,
            redirectURL: URL(string: "https://login.microsoftonline.com/common/oauth2/nativeclient")!, storageGroup: "mail-test")
        let link = try #require(configuration.adminConsentURL(scopes: configuration.scopes + MailScope.expand("mail")))
        let components = try #require(URLComponents(url: link, resolvingAgainstBaseURL: false))
        #expect(components.host == "login.microsoftonline.com")
        #expect(components.path == "/contoso.onmicrosoft.com/v2.0/adminconsent")
        let items = Dictionary(uniqueKeysWithValues: (components.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        #expect(items["client_id"] == "6731de76-14a6-49ae-97bc-6eba6914391e")
        #expect(items["scope"] == "User.Read https://outlook.office.com/IMAP.AccessAsUser.All https://outlook.office.com/SMTP.Send")
        #expect(items["redirect_uri"] == "https://login.microsoftonline.com/common/oauth2/nativeclient")

        configuration.authorizationURL = URL(string: "https://login.microsoftonline.com/common/oauth2/v2.0/authorize")!
        #expect(configuration.adminConsentURL(scopes: ["User.Read"])?.path == "/organizations/v2.0/adminconsent")
        configuration.authorizationURL = URL(
            string: "https://fabrikamb2c.b2clogin.com/fabrikamb2c.onmicrosoft.com/oauth2/v2.0/authorize?p=B2C_1_SignUpSignIn")!
        #expect(configuration.adminConsentURL(scopes: ["User.Read"]) == nil, "B2C has no admin consent")
    }
}
