import Foundation
import SesameCore
import SesameService
import SesameTestSupport
import Testing

/// The identity broker's single sign-on for browsers (linux-entra-sso asks as `d7b530a4-…`):
/// `getAccounts` names this computer's user to a program the user allowed, asked once, and
/// `acquirePrtSsoCookie` gives that program the PRT's cookie, which the sign-in service honours
/// with no page. Against the emulator, the computer registered through its pages.
@MainActor
@Suite("A browser's single sign-on through Sesame's broker")
struct BrokerSingleSignOnTests {
    static let user = "alex@contoso.onmicrosoft.com"
    static let linuxEntraSSO = "d7b530a4-7680-4c23-a8bf-c52c121d2e87"
    static let azureCLI = "04b07795-8ddb-461a-bbee-02f9e1bf7b46"
    static let browser = ProgramIdentity.executable("/usr/bin/python3.11")!
    static let other = ProgramIdentity.executable("/usr/bin/perl")!

    static func ask(
        _ broker: BrokerService, _ method: BrokerMethod, _ json: String, as program: ProgramIdentity
    ) async throws -> [String: Any] {
        let request = try BrokerRequest.parse(method: method.rawValue, protocolVersion: "0.0", correlationID: "c", request: json)
        let reply = await broker.answer(request, from: program)
        return try #require(try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any])
    }

    static func cookieRequest(ssoURL: String, account: String = "null") -> String {
        """
        {"account":\(account),"authParameters":{"account":\(account),"additionalQueryParametersForAuthorization":{},\
        "authority":"https://login.microsoftonline.com/common","authorizationType":8,"clientId":"\(linuxEntraSSO)",\
        "redirectUri":"https://login.microsoftonline.com/common/oauth2/nativeclient",\
        "requestedScopes":["https://graph.microsoft.com/.default"],"username":"\(user)","uxContextHandle":-1,"ssoUrl":"\(ssoURL)"},\
        "mamEnrollment":false,"ssoUrl":"\(ssoURL)"}
        """
    }

    @Test(
        "the cookie only for the sign-in service's own origin: https, its host, its port; never http, another host or port, a user name"
    )
    func cookieOrigin() throws {
        let authority = try #require(URL(string: "https://login.microsoftonline.com/organizations"))
        let allowed = { (url: String) throws -> Bool in
            BrokerSingleSignOn.isSignInService(try #require(URL(string: url)), registeredWith: authority)
        }
        #expect(try allowed("https://login.microsoftonline.com/common/oauth2/v2.0/authorize?sso_nonce=x"))
        #expect(try allowed("https://LOGIN.microsoftonline.com/"), "host names are case-insensitive")
        #expect(try allowed("https://login.microsoftonline.com:443/"), "443 is https's own port")
        #expect(try !allowed("http://login.microsoftonline.com/common/oauth2/v2.0/authorize"), "plain http for an https service")
        #expect(try !allowed("http://login.microsoftonline.com:443/"))
        #expect(try !allowed("https://login.microsoftonline.com:8443/"))
        #expect(try !allowed("https://login.microsoftonline.com.evil.example/"))
        #expect(try !allowed("https://evil.example@login.microsoftonline.com/"))
        #expect(try !allowed("wss://login.microsoftonline.com/"))
        // The emulator, on loopback, serves plain http: only there, and only at its own port.
        let emulator = try #require(URL(string: "http://127.0.0.1:18400/organizations"))
        #expect(BrokerSingleSignOn.isSignInService(try #require(URL(string: "http://127.0.0.1:18400/")), registeredWith: emulator))
        #expect(!BrokerSingleSignOn.isSignInService(try #require(URL(string: "https://127.0.0.1:18400/")), registeredWith: emulator))
        #expect(!BrokerSingleSignOn.isSignInService(try #require(URL(string: "http://127.0.0.1:18401/")), registeredWith: emulator))
    }

    @Test(
        "asked once, the browser gets the device's user and a cookie the sign-in service signs in with; another program denied gets neither"
    )
    func singleSignOn() async throws {
        let emulator = try await RunningEmulator(users: 20)
        let pages = HeadlessBrowser.sockets(base: emulator.base, codes: emulator.codes)
        let identity = DeviceIdentity(storage: MemoryDeviceIdentityStorage(), transport: AsyncHTTPClientTransport())
        let registration = try await identity.register(
            authority: emulator.base.appending(path: "organizations"), tenant: "organizations", displayName: "alex-laptop",
            osVersion: "Debian 13", using: HeadlessSignInPages(pages, user: Self.user))
        let folder = FileManager.default.temporaryDirectory.appending(path: "sesame-sso-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = AccountStore(storage: FileTokenStorage(directory: folder), transport: AsyncHTTPClientTransport(), device: identity)
        let trace = try FlowTrace(file: nil)
        let decisions = folder.appending(path: "program-access.json")
        let service = AccountService(store: store, accountTypes: [], trace: trace, access: ProgramAccess(file: decisions), trusted: [])
        let questions = ScriptedQuestions([.always, .deny])
        service.questioner = questions
        let broker = BrokerService(service: service, store: store, trace: trace, version: "0.3.0", extraHosts: [])

        // The browser's native host lists accounts: the user is asked, once, about single sign-on.
        let listed = try await Self.ask(broker, .getAccounts, #"{"clientId":"\#(Self.linuxEntraSSO)","redirectUri":"x"}"#, as: Self.browser)
        let accounts = try #require(listed["accounts"] as? [[String: Any]])
        #expect(accounts.count == 1)
        let account = try #require(accounts.first)
        #expect(account["username"] as? String == Self.user)
        #expect((account["homeAccountId"] as? String)?.hasSuffix(".9f2b1c3e-5a7d-4e2b-8c41-0d6a3f5b7e21") == true, "\(account)")
        #expect(questions.asked.count == 1)
        #expect(questions.asked.first?.scopes.first?.contains("single sign-on") == true)

        // Its cookie, for the sign-in service's page it loads: /authorize signs the browser in with it, no page.
        let accountJSON = String(decoding: try JSONSerialization.data(withJSONObject: account), as: UTF8.self)
        let answer = try await Self.ask(
            broker, .acquirePrtSsoCookie, Self.cookieRequest(ssoURL: emulator.base.absoluteString + "/", account: accountJSON),
            as: Self.browser)
        let items = try #require(answer["cookieItems"] as? [[String: Any]], "\(answer.keys)")
        #expect(items.first?["cookieName"] as? String == "x-ms-RefreshTokenCredential")
        let cookie = try #require(items.first?["cookieContent"] as? String)
        #expect(answer["cookieContent"] as? String == cookie)
        #expect(questions.asked.count == 1, "Always covers the cookie: no second question")
        let authorize = FormEncoding.url(
            emulator.base.appending(path: "organizations/oauth2/v2.0/authorize"),
            appending: [
                ("client_id", Self.azureCLI), ("response_type", "code"), ("redirect_uri", "http://localhost"), ("scope", "openid profile"),
            ])
        let signedIn = try await HeadlessBrowser.sockets(base: emulator.base, codes: emulator.codes).get(
            authorize.absoluteString, cookie: "x-ms-RefreshTokenCredential=\(cookie)")
        #expect(signedIn.status == 302)
        #expect(signedIn.location?.hasPrefix("http://localhost/?code=") == true, "\(signedIn.text.prefix(300))")
        #expect(emulator.codes.all.contains("prt-sso \(registration.deviceID) \(Self.azureCLI)"))

        // Never for another host: the cookie goes to the sign-in service only.
        let elsewhere = try await Self.ask(
            broker, .acquirePrtSsoCookie, Self.cookieRequest(ssoURL: "https://evil.example/", account: accountJSON), as: Self.browser)
        #expect(elsewhere["cookieItems"] == nil)
        #expect((elsewhere["brokerTokenResponse"] as? [String: Any])?["error"] != nil)
        // Nor for the sign-in service's host and port under another scheme: the cookie would
        // travel to a server that is not the one the computer is registered with.
        let otherScheme = emulator.base.absoluteString.replacingOccurrences(of: "http://", with: "https://") + "/"
        let wrongScheme = try await Self.ask(
            broker, .acquirePrtSsoCookie, Self.cookieRequest(ssoURL: otherScheme, account: accountJSON), as: Self.browser)
        #expect(!wrongScheme.keys.contains("cookieItems"), "a cookie for \(otherScheme)")
        #expect((wrongScheme["brokerTokenResponse"] as? [String: Any])?["error"] != nil)

        // Another program, denied: no account, no cookie, and not asked again.
        let denied = try await Self.ask(broker, .getAccounts, #"{"clientId":"\#(Self.linuxEntraSSO)","redirectUri":"x"}"#, as: Self.other)
        #expect((denied["accounts"] as? [Any])?.isEmpty == true)
        let noCookie = try await Self.ask(
            broker, .acquirePrtSsoCookie, Self.cookieRequest(ssoURL: emulator.base.absoluteString + "/", account: accountJSON),
            as: Self.other)
        #expect(noCookie["cookieItems"] == nil)
        #expect(questions.asked.count == 2)
        // The Always is kept: read again (a restart), the browser is allowed and the other denied.
        let kept = ProgramAccess(file: decisions)
        let request = { (program: ProgramIdentity) in
            AccessRequest(
                program: program, accountType: BrokerSingleSignOn.accountType,
                homeAccountID: try #require(account["homeAccountId"] as? String),
                username: Self.user, resource: "", scopes: [BrokerSingleSignOn.singleSignOnPermission])
        }
        #expect(kept.decision(for: try request(Self.browser)) == .allowed)
        #expect(kept.decision(for: try request(Self.other)) == .denied)
        // An MSAL program listing its own app's accounts is not asked about single sign-on.
        let msal = try await Self.ask(broker, .getAccounts, #"{"clientId":"\#(Self.azureCLI)","redirectUri":"x"}"#, as: Self.other)
        #expect((msal["accounts"] as? [Any])?.isEmpty == true)
        #expect(questions.asked.count == 2)
    }
}
