import Foundation
import SesameCore
import SesameCoreTestSupport
import SesameService
import Testing

/// The window's sign-in, for the broker: the fake provider's user signs in at once (or closes it).
@MainActor
final class ScriptedBrokerSignIn: BrokerSignIn {
    let store: AccountStore
    let agent: any SignInUserAgent
    private(set) var shown: [(accountType: String, program: ProgramIdentity, parameters: [String: String])] = []
    private(set) var cancelled = 0

    init(store: AccountStore, agent: any SignInUserAgent) {
        self.store = store
        self.agent = agent
    }

    func brokerSignIn(
        accountType: String, program: ProgramIdentity, parameters: [String: String]
    ) async throws(AccountStoreError)
        -> Account
    {
        shown.append((accountType, program, parameters))
        return try await store.signIn(accountType: accountType, parameters: parameters, using: agent)
    }

    func cancelBrokerSignIn() { cancelled += 1 }
}

@MainActor
@Suite("The identity broker's answers (no bus)")
struct BrokerServiceTests {
    static let app = ProgramIdentity.executable("/usr/bin/python3.11")!
    static let edge = ProgramIdentity.executable("/opt/microsoft/msedge/msedge")!

    /// A broker over the samples' store (Sesame's own Directory sample signed in), with the
    /// fake provider's app as the caller's.
    static func broker(_ answers: [AccessAnswer?]) async throws -> (SamplesFixture, BrokerService, ScriptedQuestions, ScriptedBrokerSignIn)
    {
        let fixture = try await SamplesFixture()
        _ = await fixture.session(.directory).signIn()
        let service = AccountService(
            store: fixture.model.store, accountTypes: fixture.model.samples.map(\.accountType), trace: fixture.trace,
            access: ProgramAccess(file: nil), trusted: [])
        let questions = ScriptedQuestions(answers)
        service.questioner = questions
        let broker = BrokerService(service: service, store: fixture.model.store, trace: fixture.trace, version: "0.3.0", extraHosts: [])
        let signer = ScriptedBrokerSignIn(store: fixture.model.store, agent: fixture.agent)
        broker.signer = signer
        return (fixture, broker, questions, signer)
    }

    /// `authParameters` as MSALRuntime sends them for the fake provider's app.
    static func parameters(
        _ fixture: SamplesFixture, type: Int, account: String = "null", clientID: String? = nil, authority: String? = nil
    )
        -> String
    {
        """
        {"authParameters":{"authority":"\(authority ?? "https://login.microsoftonline.com/common")","clientId":"\(clientID ?? fixture.provider.clientID)",\
        "redirectUri":"https://login.microsoftonline.com/common/oauth2/nativeclient","requestedScopes":["User.Read"],\
        "account":\(account),"username":"","authorizationType":\(type),"decodedClaims":""}}
        """
    }

    static func ask(
        _ broker: BrokerService, _ method: BrokerMethod, _ json: String, as program: ProgramIdentity = app
    ) async throws
        -> [String: Any]
    {
        let request = try BrokerRequest.parse(method: method.rawValue, protocolVersion: "0.0", correlationID: "c", request: json)
        let reply = await broker.answer(request, from: program)
        return try #require(try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any])
    }

    static func tokenResponse(_ reply: [String: Any]) -> [String: Any] { reply["brokerTokenResponse"] as? [String: Any] ?? [:] }
    static func status(_ reply: [String: Any]) -> Int? { (tokenResponse(reply)["error"] as? [String: Any])?["status"] as? Int }

    @Test("an interactive request signs in for the caller's own app, then asks; the reply is what MSALRuntime accepts")
    func interactive() async throws {
        let (fixture, broker, questions, signer) = try await Self.broker([.always])
        defer { fixture.remove() }
        let reply = Self.tokenResponse(try await Self.ask(broker, .acquireTokenInteractively, Self.parameters(fixture, type: 6)))
        #expect(signer.shown.map(\.accountType) == ["app:\(fixture.provider.clientID)"])
        #expect(questions.asked.count == 1)
        let question = try #require(questions.asked.first)
        #expect(question.app == fixture.provider.clientID, "the question does not name the app it signs in as")
        #expect(question.username == fixture.provider.username)
        #expect((reply["accessToken"] as? String)?.isEmpty == false, "\(reply.keys)")
        #expect((reply["idToken"] as? String)?.split(separator: ".").count == 3)
        #expect(reply["accessTokenType"] as? Int == 0)
        #expect((reply["expiresOn"] as? Double ?? 0) > Date().timeIntervalSince1970 * 1000 - 86_400_000)
        #expect(reply["extendedExpiresOn"] != nil)
        #expect((reply["grantedScopes"] as? String)?.split(separator: " ").contains("User.Read") == true)
        let info = try #require(Base64URL.decode(reply["clientInfo"] as? String ?? ""))
        let fields = try #require(try JSONSerialization.jsonObject(with: info) as? [String: String])
        #expect(fields["uid"] != nil && fields["utid"] != nil)
        let account = try #require(reply["account"] as? [String: Any])
        #expect(account["username"] as? String == fixture.provider.username)
        #expect((account["homeAccountId"] as? String)?.split(separator: ".").count == 2)

        // The program now sees the account; another program does not.
        let accounts = try await Self.ask(broker, .getAccounts, #"{"clientId":"\#(fixture.provider.clientID)","redirectUri":"x"}"#)
        #expect((accounts["accounts"] as? [[String: Any]])?.compactMap { $0["username"] as? String } == [fixture.provider.username])
        let other = try await Self.ask(broker, .getAccounts, #"{"clientId":"\#(fixture.provider.clientID)"}"#, as: Self.edge)
        #expect((other["accounts"] as? [Any])?.isEmpty == true, "another program saw the account")
    }

    @Test("silent: a new token once the old one expired, with no page and no question; nobody signed in is interaction required")
    func silent() async throws {
        let (fixture, broker, questions, signer) = try await Self.broker([.always])
        defer { fixture.remove() }
        let none = try await Self.ask(broker, .acquireTokenSilently, Self.parameters(fixture, type: 1))
        #expect(Self.status(none) == BrokerStatus.interactionRequired.rawValue)
        let first = Self.tokenResponse(try await Self.ask(broker, .acquireTokenInteractively, Self.parameters(fixture, type: 6)))
        fixture.provider.clock.advance(by: 3600)
        let account = try JSONSerialization.data(withJSONObject: try #require(first["account"]))
        let second = Self.tokenResponse(
            try await Self.ask(
                broker, .acquireTokenSilently, Self.parameters(fixture, type: 1, account: String(decoding: account, as: UTF8.self))))
        #expect((second["accessToken"] as? String)?.isEmpty == false, "\(second)")
        #expect(second["accessToken"] as? String != first["accessToken"] as? String, "the expired token came back")
        #expect(signer.shown.count == 1, "a silent request showed a page")
        #expect(questions.asked.count == 1, "a silent request asked")
    }

    @Test("Deny: the client's cancel status, no token, and the next request shows no page")
    func denied() async throws {
        let (fixture, broker, questions, signer) = try await Self.broker([.deny, .allowOnce])
        defer { fixture.remove() }
        let refused = try await Self.ask(broker, .acquireTokenInteractively, Self.parameters(fixture, type: 6))
        #expect(Self.status(refused) == BrokerStatus.userCanceled.rawValue)
        #expect(Self.tokenResponse(refused)["accessToken"] == nil)
        #expect(!"\(refused)".contains("eyJ"), "a token in a refusal")
        let again = try await Self.ask(broker, .acquireTokenInteractively, Self.parameters(fixture, type: 6))
        #expect(Self.status(again) == BrokerStatus.userCanceled.rawValue)
        #expect(signer.shown.count == 1, "a denied program got a sign-in page again")
        #expect(questions.asked.count == 1)
    }

    @Test("removeAccount forgets that app's tokens only: Sesame's own sign-in stays")
    func remove() async throws {
        let (fixture, broker, questions, signer) = try await Self.broker([.always])
        defer { fixture.remove() }
        defer { withExtendedLifetime((questions, signer)) {} }
        let token = Self.tokenResponse(try await Self.ask(broker, .acquireTokenInteractively, Self.parameters(fixture, type: 6)))
        let account = try JSONSerialization.data(withJSONObject: try #require(token["account"], "\(token)"))
        let removed = try await Self.ask(
            broker, .removeAccount, #"{"clientId":"\#(fixture.provider.clientID)","account":\#(String(decoding: account, as: UTF8.self))}"#)
        #expect(removed.isEmpty)
        let accounts = try await Self.ask(broker, .getAccounts, #"{"clientId":"\#(fixture.provider.clientID)"}"#)
        #expect((accounts["accounts"] as? [Any])?.isEmpty == true)
        #expect(try await fixture.model.store.accounts(ofType: "myGraphService").count == 1, "Sesame's own sign-in went too")
    }

    @Test(
        "B2C, AD FS, another host, a client id that is no GUID: the broker's error with a sentence, no page",
        arguments: [
            ("https://fabrikamb2c.b2clogin.com/tfp/fabrikamb2c.onmicrosoft.com/B2C_1_susi", nil, "B2C"),
            ("https://login.microsoftonline.com/adfs", nil, "AD FS"),
            ("https://login.example.com/common", nil, "login.example.com"),
            ("https://login.microsoftonline.com/common", "not-a-guid", "client id"),
            // Microsoft's host, but not as Entra names it: the canonical form only.
            ("https://evil.example@login.microsoftonline.com/common", nil, "names a user"),
            ("https://login.microsoftonline.com:8443/common", nil, "port 8443"),
            ("https://login.microsoftonline.com/a%2F..%2F..%2Fx", nil, "tenant"),
            ("https://login.microsoftonline.com/common?x=1", nil, "query"),
        ])
    func refusedAuthorities(authority: String, clientID: String?, named: String) async throws {
        let (fixture, broker, questions, signer) = try await Self.broker([.always])
        defer { fixture.remove() }
        defer { withExtendedLifetime(questions) {} }
        let reply = try await Self.ask(
            broker, .acquireTokenInteractively, Self.parameters(fixture, type: 6, clientID: clientID, authority: authority))
        #expect(Self.status(reply) == BrokerStatus.incorrectConfiguration.rawValue)
        let context = (Self.tokenResponse(reply)["error"] as? [String: Any])?["context"] as? String ?? ""
        #expect(context.contains(named), "\(context)")
        #expect(signer.shown.isEmpty)
    }

    @Test("single sign-on says this device is not registered; a signed request is not made; cancel with no sign-in open is refused")
    func deviceMethods() async throws {
        let (fixture, broker, _, signer) = try await Self.broker([])
        defer { fixture.remove() }
        let cookie =
            #"{"account":null,"authParameters":{"clientId":"d7b530a4-7680-4c23-a8bf-c52c121d2e87"},"ssoUrl":"https://login.microsoftonline.com/"}"#
        let reply = try await Self.ask(broker, .acquirePrtSsoCookie, cookie)
        #expect(Self.status(reply) == BrokerStatus.deviceNotRegistered.rawValue)
        #expect((Self.tokenResponse(reply)["error"] as? [String: Any])?["context"] as? String ?? "" != "")
        // Whether the computer is registered or not (BrokerForeignCallerTests).
        #expect(Self.status(try await Self.ask(broker, .generateSignedHttpRequest, "{}")) == BrokerStatus.unexpected.rawValue)
        #expect(Self.status(try await Self.ask(broker, .cancelInteractiveFlow, "{}")) == BrokerStatus.unexpected.rawValue)
        #expect(
            try await Self.ask(broker, .getLinuxBrokerVersion, #"{"msalCppVersion":"1.0"}"#)["linuxBrokerVersion"] as? String == "0.3.0")
        #expect(signer.cancelled == 0, "a cancel with no sign-in of the program's open reached the window")
    }
}
