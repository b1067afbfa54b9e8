import FoundationEssentials
import SesameCore

/// The Linux identity broker's wire protocol, as Microsoft's broker client (MSALRuntime, which MSAL
/// for Python, .NET and Node, Edge and Git Credential Manager use on Linux) speaks it over the
/// session bus: the name `com.microsoft.identity.broker1`, one object, and methods that take three
/// strings — the protocol version (`0.0`), a correlation id, a JSON request — and answer one JSON
/// string. No introspection describes the payloads; these types are written from the public
/// references (Siemens' sso-mib and linux-entra-sso, Himmelblau's broker) and from what MSAL for
/// Python 1.39 with pymsalruntime 0.20 sent and accepted here (docs/design/broker.md). Everything
/// read is bounded and typed: unknown fields are ignored, a wrong type is refused with the
/// broker's own error shape (`ApiContractViolation`), never a trap.
public enum BrokerProtocol {
    /// The well-known name MSALRuntime looks for (one `Peer.Ping` when an app starts).
    public static let busName = "com.microsoft.identity.broker1"
    /// The object.
    public static let objectPath = "/com/microsoft/identity/broker1"
    /// The interface.
    public static let interfaceName = "com.microsoft.identity.Broker1"
    /// The largest request accepted.
    public static let maximumRequestBytes = 64 * 1024
    /// The longest string field accepted.
    public static let maximumFieldLength = 4096
    /// The most scopes one request may name.
    public static let maximumScopes = 32

    /// The interface, as `gdbus introspect` would show it: every method `(sss) → s`.
    public static var introspectionXML: String {
        let methods = BrokerMethod.allCases.map { method in
            """
                <method name="\(method.rawValue)">
                  <arg name="protocolVersion" type="s" direction="in"/>
                  <arg name="correlationId" type="s" direction="in"/>
                  <arg name="request" type="s" direction="in"/>
                  <arg name="response" type="s" direction="out"/>
                </method>
            """
        }
        return "<node>\n  <interface name=\"\(interfaceName)\">\n" + methods.joined(separator: "\n") + "\n  </interface>\n</node>"
    }
}

/// The methods, by their wire names.
public enum BrokerMethod: String, Sendable, CaseIterable {
    case getLinuxBrokerVersion
    case getAccounts
    case acquireTokenSilently
    case acquireTokenInteractively
    case removeAccount
    case cancelInteractiveFlow
    case acquirePrtSsoCookie
    case generateSignedHttpRequest
}

/// An account as the broker client knows it: MSAL's account fields. Only an account with a home
/// account id (`uid.utid`), a local account id, an environment, a realm and a user name is used by
/// the client; the others are optional.
public struct BrokerAccount: Sendable, Hashable {
    /// `homeAccountId`: `<uid>.<utid>` from `client_info`.
    public var homeAccountID: String
    /// `localAccountId`: the user's object id in the tenant (`oid`).
    public var localAccountID: String
    /// `environment`: the authority's host (`login.microsoftonline.com`).
    public var environment: String
    /// `realm`: the tenant id.
    public var realm: String
    /// `username`: the UPN (`preferred_username`).
    public var username: String
    /// `name`, `givenName`, `familyName`.
    public var name: String = ""
    public var givenName: String = ""
    public var familyName: String = ""
    /// `clientInfo`: base64url `{"uid","utid"}`.
    public var clientInfo: String = ""

    public init(homeAccountID: String, localAccountID: String, environment: String, realm: String, username: String) {
        self.homeAccountID = homeAccountID
        self.localAccountID = localAccountID
        self.environment = environment
        self.realm = realm
        self.username = username
    }

    /// The account a request names (`authParameters.account`); nil for `null` or an account the
    /// client would not use (a required field missing or empty).
    init?(_ value: JSONValue?) throws(BrokerFailure) {
        guard let value, value != .null else { return nil }
        guard case .object(let fields) = value else { throw BrokerFailure.contract("account is not an object") }
        let read = { (key: String) throws(BrokerFailure) -> String in try BrokerRequest.string(fields[key], key) ?? "" }
        homeAccountID = try read("homeAccountId")
        localAccountID = try read("localAccountId")
        environment = try read("environment")
        realm = try read("realm")
        username = try read("username")
        name = try read("name")
        givenName = try read("givenName")
        familyName = try read("familyName")
        clientInfo = try read("clientInfo")
        guard homeAccountID.split(separator: ".").count == 2, !localAccountID.isEmpty, !environment.isEmpty, !realm.isEmpty,
            !username.isEmpty
        else { return nil }
    }

    /// The account as replies carry it.
    public var json: JSONValue {
        .object([
            "homeAccountId": .string(homeAccountID), "localAccountId": .string(localAccountID), "environment": .string(environment),
            "realm": .string(realm), "username": .string(username), "name": .string(name), "givenName": .string(givenName),
            "familyName": .string(familyName), "clientInfo": .string(clientInfo), "passwordExpiry": .number(0),
        ])
    }
}

/// What a token request asks (`authParameters`).
public struct BrokerAuthParameters: Sendable, Hashable {
    /// `authority`: `https://<host>/<tenant>` as the app gave it (MSALRuntime drops the port).
    public var authority: URL
    /// `clientId`: the app's own registration — self-declared by the caller.
    public var clientID: String
    /// `redirectUri`: the native-client URI the broker signs in with.
    public var redirectURI: String
    /// `requestedScopes`: exactly the app's scopes.
    public var requestedScopes: [String]
    /// `account`: the account to use, or nil (the broker picks, or answers `InteractionRequired`).
    public var account: BrokerAccount?
    /// `username`: the login hint, or empty.
    public var username: String
    /// `authorizationType`: 1 silent, 6 interactive, 8 PRT cookie.
    public var authorizationType: Int
    /// `decodedClaims`: a claims challenge, raw JSON, or empty.
    public var claims: String
    /// `additionalQueryParametersForAuthorization`: string pairs (`msal_client_sku`, `max_age`, …).
    public var additionalParameters: [String: String]
}

/// A request, typed.
public enum BrokerRequest: Sendable, Hashable {
    case version
    case accounts(clientID: String)
    case silent(BrokerAuthParameters)
    case interactive(BrokerAuthParameters)
    case removeAccount(clientID: String, account: BrokerAccount?)
    case cancelInteractiveFlow
    case prtSsoCookie(BrokerSSORequest)
    case signedHTTPRequest

    /// The request `method` carries, or the broker's error to answer with.
    public static func parse(
        method: String, protocolVersion: String, correlationID: String, request: String
    ) throws(BrokerFailure)
        -> BrokerRequest
    {
        guard let method = BrokerMethod(rawValue: method) else { throw .contract("no such method") }
        guard protocolVersion.utf8.count <= 16, correlationID.utf8.count <= 64 else { throw .contract("oversized arguments") }
        guard request.utf8.count <= BrokerProtocol.maximumRequestBytes else { throw .contract("the request is too large") }
        let json: [String: JSONValue]
        switch method {
        case .getLinuxBrokerVersion: return .version
        case .cancelInteractiveFlow: return .cancelInteractiveFlow
        case .generateSignedHttpRequest: return .signedHTTPRequest
        default: break
        }
        do {
            guard case .object(let object) = try JSONDecoder().decode(JSONValue.self, from: Data(request.utf8)) else {
                throw BrokerFailure.contract("the request is not a JSON object")
            }
            json = object
        } catch let failure as BrokerFailure {
            throw failure
        } catch {
            throw .contract("the request is not JSON")
        }
        switch method {
        case .getAccounts:
            return .accounts(clientID: try requiredString(json["clientId"], "clientId"))
        case .removeAccount:
            return .removeAccount(clientID: try requiredString(json["clientId"], "clientId"), account: try BrokerAccount(json["account"]))
        case .acquireTokenSilently:
            return .silent(try authParameters(json["authParameters"]))
        case .acquireTokenInteractively:
            return .interactive(try authParameters(json["authParameters"]))
        case .acquirePrtSsoCookie:
            return .prtSsoCookie(try BrokerSSORequest.parse(json))
        default:
            throw .contract("no such method")
        }
    }

    private static func authParameters(_ value: JSONValue?) throws(BrokerFailure) -> BrokerAuthParameters {
        guard case .object(let fields)? = value else { throw .contract("authParameters is missing or not an object") }
        let authorityText = try requiredString(fields["authority"], "authority")
        guard let authority = URL(string: authorityText), authority.scheme == "https", authority.host != nil else {
            throw .contract("authority is not an https URL")
        }
        let scopes: [String]
        switch fields["requestedScopes"] {
        case .array(let values)?:
            guard values.count <= BrokerProtocol.maximumScopes else { throw .contract("too many requestedScopes") }
            scopes = try values.map { value throws(BrokerFailure) in try requiredString(value, "requestedScopes") }
        default: throw .contract("requestedScopes is missing or not an array")
        }
        var additional: [String: String] = [:]
        if case .object(let pairs)? = fields["additionalQueryParametersForAuthorization"] {
            for (key, value) in pairs.prefix(64) { if let text = try string(value, key) { additional[key] = text } }
        }
        let type: Int
        switch fields["authorizationType"] {
        case .number(let number)? where number == number.rounded() && abs(number) < 1_000: type = Int(number)
        case nil: type = 0
        default: throw .contract("authorizationType is not an integer")
        }
        return BrokerAuthParameters(
            authority: authority, clientID: try requiredString(fields["clientId"], "clientId"),
            redirectURI: try string(fields["redirectUri"], "redirectUri") ?? "", requestedScopes: scopes,
            account: try BrokerAccount(fields["account"]), username: try string(fields["username"], "username") ?? "",
            authorizationType: type, claims: try string(fields["decodedClaims"], "decodedClaims") ?? "", additionalParameters: additional)
    }

    /// A string field, bounded; nil when absent or null.
    static func string(_ value: JSONValue?, _ key: String) throws(BrokerFailure) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?:
            guard text.utf8.count <= BrokerProtocol.maximumFieldLength else { throw .contract("\(key) is too long") }
            return text
        default: throw .contract("\(key) is not a string")
        }
    }

    private static func requiredString(_ value: JSONValue?, _ key: String) throws(BrokerFailure) -> String {
        guard let text = try string(value, key), !text.isEmpty else { throw .contract("\(key) is missing") }
        return text
    }
}

/// The broker client's statuses, as numbered on the wire (pymsalruntime 0.20).
public enum BrokerStatus: Int, Sendable {
    case unexpected = 0
    /// The client then signs in interactively (`acquireTokenInteractively`).
    case interactionRequired = 2
    case noNetwork = 3
    case apiContractViolation = 6
    /// The user closed the sign-in, or said no.
    case userCanceled = 7
    case incorrectConfiguration = 9
    case accountUnusable = 13
    /// No device registration (no PRT, no device identity).
    case deviceNotRegistered = 17
    case accountNotFound = 19
}

/// An answer the broker client reads as a failure: `{"brokerTokenResponse":{"error":{…}}}` with
/// integer `status`, `errorCode` and a non-zero `tag` (a zero tag makes the client substitute its
/// own), and `context`, the sentence the app's user may read.
public struct BrokerFailure: Error, Sendable, Equatable {
    public var status: BrokerStatus
    /// Entra's numeric code (53003), or 0.
    public var errorCode: Int
    /// Where in Sesame the failure was decided (non-zero).
    public var tag: Int
    /// What happened, for a person; never a secret.
    public var context: String

    public init(_ status: BrokerStatus, errorCode: Int = 0, tag: Int, _ context: String) {
        self.status = status
        self.errorCode = errorCode
        self.tag = tag == 0 ? 0x5E5A_0000 : tag
        self.context = context
    }

    /// A request that breaks the contract.
    static func contract(_ reason: String) -> BrokerFailure {
        BrokerFailure(.apiContractViolation, tag: 0x5E5A_0006, "Sesame could not read the request: \(reason).")
    }

    /// The reply string.
    public var reply: String {
        BrokerJSON.text(
            .object([
                "brokerTokenResponse": .object([
                    "error": .object([
                        "status": .number(Double(status.rawValue)), "errorCode": .number(Double(errorCode)), "tag": .number(Double(tag)),
                        // The client appends ". Status: …" itself.
                        "context": .string(context.hasSuffix(".") ? String(context.dropLast()) : context), "protocolError": .string(""),
                        "subStatus": .number(0),
                    ])
                ])
            ]))
    }
}

/// A token for the caller's app, as the broker client accepts it: `accessToken` (non-empty),
/// `accessTokenType` 0 (bearer), `expiresOn` and `extendedExpiresOn` in milliseconds, `clientInfo`
/// (the client builds the account from it and from the id_token's `preferred_username`, `oid`),
/// `idToken`, `grantedScopes` (a space-separated string covering every requested scope), and the
/// `account` other clients (Edge, sso-mib) read.
public struct BrokerTokenReply: Sendable {
    public var accessToken: Secret
    public var expiresOn: Date
    public var extendedExpiresOn: Date
    public var idToken: Secret
    public var clientInfo: String
    public var grantedScopes: [String]
    public var account: BrokerAccount

    public init(
        accessToken: Secret, expiresOn: Date, extendedExpiresOn: Date? = nil, idToken: Secret, clientInfo: String,
        grantedScopes: [String], account: BrokerAccount
    ) {
        self.accessToken = accessToken
        self.expiresOn = expiresOn
        self.extendedExpiresOn = extendedExpiresOn ?? expiresOn
        self.idToken = idToken
        self.clientInfo = clientInfo
        self.grantedScopes = grantedScopes
        self.account = account
    }

    /// The reply string (it holds the tokens: it goes to the caller only, never to a log).
    public var reply: String {
        let milliseconds = { (date: Date) in JSONValue.number((date.timeIntervalSince1970 * 1000).rounded()) }
        return BrokerJSON.text(
            .object([
                "brokerTokenResponse": .object([
                    "accessToken": .string(accessToken.revealed), "accessTokenType": .number(0),
                    "expiresOn": milliseconds(expiresOn), "extendedExpiresOn": milliseconds(extendedExpiresOn),
                    "idToken": .string(idToken.revealed), "clientInfo": .string(clientInfo),
                    "grantedScopes": .string(grantedScopes.joined(separator: " ")), "account": account.json,
                ])
            ]))
    }
}

/// The other replies.
public enum BrokerReply {
    /// `getAccounts`: `{"accounts":[…]}` (`[]`: nobody the caller may see).
    public static func accounts(_ accounts: [BrokerAccount]) -> String {
        BrokerJSON.text(.object(["accounts": .array(accounts.map(\.json))]))
    }

    /// `getLinuxBrokerVersion`: `{"linuxBrokerVersion": …}`.
    public static func version(_ version: String) -> String {
        BrokerJSON.text(.object(["linuxBrokerVersion": .string(version)]))
    }

    /// `removeAccount`, `cancelInteractiveFlow`: `{}`.
    public static let empty = "{}"
}

enum BrokerJSON {
    static func text(_ value: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
