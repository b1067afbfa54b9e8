import Foundation
import SesameCore
import SesameService
import SesameTestSupport
import Testing

/// The Linux broker interface's contract, from payloads recorded between MSAL for Python 1.39
/// (pymsalruntime 0.20) and a stand-in broker (tokens redacted; docs/design/broker.md): every
/// request the client sent parses into its typed value, unknown fields ignored; a wrong type is the
/// broker's own `ApiContractViolation`, never a trap; and every reply Sesame builds has the fields
/// and types of the replies the client accepted — and not the shapes it rejected.
@Suite("The identity broker's contract (recorded payloads)")
struct BrokerContractTests {
    struct Fixture {
        let method: String
        let protocolVersion: String
        let correlationID: String
        let request: String?
        let reply: [String: Any]?
        let accepted: Bool?
    }

    static func fixture(_ name: String) throws -> Fixture {
        let url = Repository.root.appending(path: "Tests/SesameSamplesTests/Fixtures/broker/\(name).json")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let request = (json["request"] as? [String: Any]).map { try? JSONSerialization.data(withJSONObject: $0) }.flatMap { $0 }
        return Fixture(
            method: json["method"] as? String ?? "", protocolVersion: json["protocolVersion"] as? String ?? "",
            correlationID: json["correlationId"] as? String ?? "", request: request.map { String(decoding: $0, as: UTF8.self) },
            reply: json["reply"] as? [String: Any], accepted: (json["msal"] as? [String: Any])?["accepted"] as? Bool)
    }

    static func parse(_ fixture: Fixture) throws -> BrokerRequest {
        try BrokerRequest.parse(
            method: fixture.method, protocolVersion: fixture.protocolVersion, correlationID: fixture.correlationID,
            request: fixture.request ?? "")
    }

    @Test("getAccounts: the client id (its redirectUri field holds the client id again, and is ignored)")
    func getAccounts() throws {
        #expect(try Self.parse(Self.fixture("e2e-01-getAccounts-empty")) == .accounts(clientID: "5b0a2c1d-8f3e-4a6b-9c7d-1e2f3a4b5c6d"))
    }

    @Test("acquireTokenInteractively: authority without its port, the client id, nativeclient, the scopes as the app gave them")
    func interactive() throws {
        guard case .interactive(let parameters) = try Self.parse(Self.fixture("e2e-03-acquireTokenInteractively-success")) else {
            Issue.record("not an interactive request")
            return
        }
        #expect(parameters.authority.absoluteString == "https://login.microsoftonline.com/9f2b1c3e-5a7d-4e2b-8c41-0d6a3f5b7e21")
        #expect(parameters.clientID == "5b0a2c1d-8f3e-4a6b-9c7d-1e2f3a4b5c6d")
        #expect(parameters.redirectURI == "https://login.microsoftonline.com/common/oauth2/nativeclient")
        #expect(parameters.requestedScopes == ["User.Read"])
        #expect(parameters.account == nil)
        #expect(parameters.authorizationType == 6)
        #expect(parameters.additionalParameters["msal_client_sku"] == "MSAL.Python")
        guard case .interactive(let hinted) = try Self.parse(Self.fixture("interactive-login_hint")) else {
            Issue.record("not an interactive request")
            return
        }
        #expect(!hinted.username.isEmpty, "login_hint arrives as username")
    }

    @Test("acquireTokenSilently: the account MSALRuntime chose (homeAccountId uid.utid, oid, environment, realm, username)")
    func silent() throws {
        for name in ["e2e-05-acquireTokenSilently-success", "silent-01-acquireTokenSilently-from-acquire_token_silent"] {
            guard case .silent(let parameters) = try Self.parse(Self.fixture(name)) else {
                Issue.record("\(name): not a silent request")
                continue
            }
            #expect(parameters.authorizationType == 1, "\(name)")
            let account = try #require(parameters.account, "\(name): no account")
            #expect(account.homeAccountID.split(separator: ".").count == 2)
            #expect(account.environment == "login.microsoftonline.com")
            #expect(account.username == "alex@contoso.onmicrosoft.com")
        }
    }

    @Test("the methods MSAL for Python never calls, from the public references: each parses, and Sesame answers in their shape")
    func otherMethods() throws {
        let edge = "d7b530a4-7680-4c23-a8bf-c52c121d2e87"
        #expect(try Self.parse(Self.fixture("reference-getLinuxBrokerVersion")) == .version)
        let versionReply = try #require(Self.json(BrokerReply.version("0.3.0")))
        #expect(Set(versionReply.keys) == Set(try #require(Self.fixture("reference-getLinuxBrokerVersion").reply).keys))
        #expect(versionReply["linuxBrokerVersion"] is String)

        guard case .removeAccount(let clientID, let account?) = try Self.parse(Self.fixture("reference-removeAccount")) else {
            Issue.record("removeAccount did not parse with its account")
            return
        }
        #expect(clientID == edge)
        #expect(account.homeAccountID == "4c1b9a54-7f4e-4f2b-9a5f-2a0c6c1d7e01.9f2b1c3e-5a7d-4e2b-8c41-0d6a3f5b7e21")
        #expect(account.username == "alex@contoso.onmicrosoft.com")
        #expect(try #require(Self.json(BrokerReply.empty)).isEmpty)

        #expect(try Self.parse(Self.fixture("reference-cancelInteractiveFlow")) == .cancelInteractiveFlow)
        // The device-bound methods: parsed, and answered with the broker's error shape, status 17.
        #expect(
            try Self.parse(Self.fixture("reference-acquirePrtSsoCookie"))
                == .prtSsoCookie(
                    BrokerSSORequest(
                        ssoURL: URL(string: "https://login.microsoftonline.com/")!, username: "alex@contoso.onmicrosoft.com",
                        clientID: "d7b530a4-7680-4c23-a8bf-c52c121d2e87")))
        #expect(try Self.parse(Self.fixture("reference-generateSignedHttpRequest")) == .signedHTTPRequest)
        let refusal = BrokerFailure(.deviceNotRegistered, tag: 0x5E5A_0017, "This device is not registered.")
        let error = try #require((Self.json(refusal.reply)?["brokerTokenResponse"] as? [String: Any])?["error"] as? [String: Any])
        #expect(error["status"] as? Int == 17)
        #expect((error["tag"] as? Int ?? 0) != 0)
        #expect(error["errorCode"] is Int)
        #expect(error["context"] as? String == "This device is not registered", "the client appends its own full stop")
    }

    static func json(_ text: String) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }

    @Test("hostile requests: the broker's ApiContractViolation with a non-zero tag, never a trap")
    func hostile() throws {
        let cases: [(String, String)] = [
            ("getAccounts", "not json"), ("getAccounts", "[]"), ("getAccounts", #"{"clientId": 42}"#),
            ("acquireTokenSilently", #"{"authParameters": "x"}"#),
            ("acquireTokenSilently", #"{"authParameters": {"authority": "http://evil", "clientId": "a", "requestedScopes": []}}"#),
            ("acquireTokenSilently", #"{"authParameters": {"authority": "https://a/b", "clientId": "a", "requestedScopes": [1]}}"#),
            (
                "acquireTokenInteractively",
                #"{"authParameters": {"authority": "https://a/b", "clientId": "a", "requestedScopes": ["s"], "authorizationType": "6"}}"#
            ),
            (
                "acquireTokenInteractively",
                #"{"authParameters": {"authority": "https://a/b", "clientId": "a", "requestedScopes": ["s"], "account": 5}}"#
            ),
            ("getAccounts", "{\"clientId\": \"" + String(repeating: "a", count: 70_000) + "\"}"),
            ("noSuchMethod", "{}"),
        ]
        for (method, request) in cases {
            do {
                _ = try BrokerRequest.parse(method: method, protocolVersion: "0.0", correlationID: "c", request: request)
                Issue.record("\(method) \(request.prefix(80)) was accepted")
            } catch {
                #expect(error.status == .apiContractViolation)
                #expect(error.tag != 0)
                let reply = try #require(try JSONSerialization.jsonObject(with: Data(error.reply.utf8)) as? [String: Any])
                let fields = try #require((reply["brokerTokenResponse"] as? [String: Any])?["error"] as? [String: Any])
                #expect(fields["status"] as? Int == 6 && fields["errorCode"] as? Int == 0 && fields["tag"] as? Int != 0)
            }
        }
        // An account that lacks what the client needs is no account (the broker picks or asks).
        let partial =
            #"{"authParameters": {"authority": "https://a/b", "clientId": "a", "requestedScopes": ["s"], "account": {"homeAccountId": "x"}}}"#
        guard
            case .silent(let parameters) = try BrokerRequest.parse(
                method: "acquireTokenSilently", protocolVersion: "0.0", correlationID: "c", request: partial)
        else { return }
        #expect(parameters.account == nil)
    }

    static let account: BrokerAccount = {
        var account = BrokerAccount(
            homeAccountID: "4c1b9a54-7f4e-4f2b-9a5f-2a0c6c1d7e01.9f2b1c3e-5a7d-4e2b-8c41-0d6a3f5b7e21",
            localAccountID: "4c1b9a54-7f4e-4f2b-9a5f-2a0c6c1d7e01", environment: "login.microsoftonline.com",
            realm: "9f2b1c3e-5a7d-4e2b-8c41-0d6a3f5b7e21", username: "alex@contoso.onmicrosoft.com")
        account.clientInfo =
            "eyJ1aWQiOiI0YzFiOWE1NC03ZjRlLTRmMmItOWE1Zi0yYTBjNmMxZDdlMDEiLCJ1dGlkIjoiOWYyYjFjM2UtNWE3ZC00ZTJiLThjNDEtMGQ2YTNmNWI3ZTIxIn0"
        account.name = "Alex Wilber"
        return account
    }()

    @Test("Sesame's token reply has every field and type of the replies the client accepted, none of the rejected shapes")
    func tokenReply() throws {
        let reply = BrokerTokenReply(
            accessToken: Secret("opaque-access-token"), expiresOn: Date(timeIntervalSince1970: 1_795_635_587),
            idToken: Secret("eyJhbGciOiJub25lIn0.eyJwcmVmZXJyZWRfdXNlcm5hbWUiOiJhbGV4In0."), clientInfo: Self.account.clientInfo,
            grantedScopes: ["User.Read", "profile", "openid", "email"], account: Self.account)
        let ours = try #require(
            (try JSONSerialization.jsonObject(with: Data(reply.reply.utf8)) as? [String: Any])?["brokerTokenResponse"] as? [String: Any])
        for name in ["e2e-03-acquireTokenInteractively-success", "minimal-acquireTokenInteractively"] {
            let fixture = try Self.fixture(name)
            #expect(fixture.accepted == true, "\(name) was not accepted by MSAL")
            let theirs = try #require(fixture.reply?["brokerTokenResponse"] as? [String: Any])
            for (key, value) in theirs {
                let mine = try #require(ours[key], "\(key) missing from Sesame's reply")
                #expect(type(of: mine) == type(of: value) || (mine is NSNumber && value is NSNumber), "\(key): \(mine) against \(value)")
            }
        }
        #expect(ours["accessTokenType"] as? Int == 0)
        #expect(ours["expiresOn"] as? Int == 1_795_635_587_000, "milliseconds")
        #expect(ours["extendedExpiresOn"] as? Int == 1_795_635_587_000, "the field Himmelblau's shape lacks")
        #expect(ours["grantedScopes"] as? String == "User.Read profile openid email")
        let clientInfo = try #require(ours["clientInfo"] as? String)
        let decoded = try #require(Base64URL.decode(clientInfo).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] })
        #expect(decoded["uid"] != nil && decoded["utid"] != nil, "the client builds the account from clientInfo")
        for rejected in ["rejected-himmelblau-shape", "rejected-no-clientInfo"] {
            let fixture = try Self.fixture(rejected)
            #expect(fixture.accepted != true, "\(rejected) is a shape the client refused")
            let theirs = try #require(fixture.reply?["brokerTokenResponse"] as? [String: Any])
            #expect(Set(ours.keys).subtracting(theirs.keys).isEmpty == false, "Sesame's reply has what \(rejected) lacked")
        }
    }

    @Test("errors and accounts: the shapes the client read (status 2 falls back to interactive, 7 is the user's cancel)")
    func errorsAndAccounts() throws {
        for (name, status) in [("error-interaction-required", BrokerStatus.interactionRequired), ("error-user-canceled", .userCanceled)] {
            let theirs = try #require(
                ((try Self.fixture(name)).reply?["brokerTokenResponse"] as? [String: Any])?["error"] as? [String: Any])
            #expect(theirs["status"] as? Int == status.rawValue)
            let ours = try #require(
                ((try JSONSerialization.jsonObject(with: Data(BrokerFailure(status, tag: 1, "x").reply.utf8)) as? [String: Any])?[
                    "brokerTokenResponse"] as? [String: Any])?["error"] as? [String: Any])
            #expect(Set(theirs.keys).isSubset(of: Set(ours.keys)), "\(name): \(theirs.keys) against \(ours.keys)")
        }
        let theirs = try #require(((try Self.fixture("e2e-04-getAccounts-one")).reply?["accounts"] as? [[String: Any]])?.first)
        let ours = try #require(
            ((try JSONSerialization.jsonObject(with: Data(BrokerReply.accounts([Self.account]).utf8)) as? [String: Any])?["accounts"]
                as? [[String: Any]])?.first)
        for key in ["homeAccountId", "localAccountId", "environment", "realm", "username"] {
            #expect(ours[key] as? String == theirs[key] as? String || (ours[key] as? String)?.isEmpty == false, "\(key)")
        }
        #expect(BrokerReply.accounts([]) == #"{"accounts":[]}"#)
    }
}
