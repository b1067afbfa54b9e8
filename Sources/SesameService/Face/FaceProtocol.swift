import FoundationEssentials
import SesameCore

/// What the account service (`sesame-service`, without GTK) and the window it starts for the
/// user (`sesame --service-face`) say to each other: one JSON object a line over a Unix socket
/// pair only the two hold (the window's end at descriptor 3, close-on-exec once it runs, so none
/// of its own children — WebKit's processes — has it). Each side reads only what the kernel says
/// the other process sent (`SCM_CREDENTIALS`), and every reply carries the token the service's
/// first line (``FaceRequest/Kind/hello``) gave. The window is Sesame's own executable, started by
/// the service itself; still, each side reads the other's lines as bounded, typed values.
public enum FaceProtocol {
    /// The window's flag.
    public static let flag = "--service-face"
}

/// A request to the window: ask the user, or sign someone in.
public struct FaceRequest: Sendable, Codable, Equatable {
    /// What the user is asked to do.
    public enum Kind: String, Sendable, Codable {
        /// The access question (``AccessQuestioner``).
        case ask
        /// A sign-in for an account type of Sesame's settings (``ServiceSignIn``).
        case signIn
        /// A sign-in for a program's own app (``BrokerSignIn``), with its configuration.
        case brokerSignIn
        /// Close the broker's sign-in on screen (no reply).
        case cancel
        /// An event of the service's trace, for the window's flow inspector (no reply).
        case event
        /// The service's first line: the token every reply must carry (no reply).
        case hello
    }

    /// Wire field `id`: the reply carries it.
    public var id: Int
    /// Wire field `kind`.
    public var kind: Kind
    /// Wire field `question` (``Kind/ask``).
    public var question: AccessRequest?
    /// Wire field `accountType` (the sign-ins).
    public var accountType: String?
    /// Wire field `program`: who asked for a broker sign-in.
    public var program: ProgramIdentity?
    /// Wire field `parameters`: added to `/authorize` (`login_hint`, `claims`).
    public var parameters: [String: String]?
    /// Wire field `app`: the program's app, as the broker configured it.
    public var app: FaceAppConfiguration?
    /// Wire field `event`: the service's trace event's name (``Kind/event``).
    public var event: String?
    /// Wire field `fields`: its fields, as name–value pairs.
    public var fields: [[String]]?
    /// Wire field `token` (``Kind/hello``): what the window puts in each reply.
    public var token: String?

    public init(
        id: Int, kind: Kind, question: AccessRequest? = nil, accountType: String? = nil, program: ProgramIdentity? = nil,
        parameters: [String: String]? = nil, app: FaceAppConfiguration? = nil
    ) {
        self.id = id
        self.kind = kind
        self.question = question
        self.accountType = accountType
        self.program = program
        self.parameters = parameters
        self.app = app
    }
}

/// A program's app registration as the broker configured it, so that the window's store signs in
/// for it as the service's store will read it.
public struct FaceAppConfiguration: Sendable, Codable, Equatable {
    /// `clientID`, `scopes`, the authorization and token endpoints, the redirect, the storage group.
    public var clientID: String
    public var scopes: [String]
    public var authorizationURL: URL
    public var tokenURL: URL
    public var redirectURL: URL
    public var storageGroup: String

    public init(_ configuration: AccountConfiguration) {
        clientID = configuration.clientID
        scopes = configuration.scopes
        authorizationURL = configuration.authorizationURL
        tokenURL = configuration.tokenURL
        redirectURL = configuration.redirectURL
        storageGroup = configuration.storageGroup
    }

    /// The configuration.
    public var configuration: AccountConfiguration {
        AccountConfiguration(
            clientID: clientID, scopes: scopes, authorizationURL: authorizationURL, tokenURL: tokenURL, redirectURL: redirectURL,
            storageGroup: storageGroup)
    }
}

/// The window's reply.
public struct FaceReply: Sendable, Codable, Equatable {
    /// Wire field `id`: the request's.
    public var id: Int
    /// Wire field `answer`: the user's answer to a question; absent when dismissed.
    public var answer: AccessAnswer?
    /// Wire field `homeAccountID`: who signed in.
    public var homeAccountID: String?
    /// Wire field `error`: why a sign-in gave no account (its sentence never holds a secret).
    public var error: FaceError?
    /// Wire field `token`: the service's ``FaceRequest/token``, proof the reply is the window's.
    public var token: String?

    public init(id: Int, answer: AccessAnswer? = nil, homeAccountID: String? = nil, error: FaceError? = nil) {
        self.id = id
        self.answer = answer
        self.homeAccountID = homeAccountID
        self.error = error
    }
}

/// A sign-in's failure as it crosses to the service.
public struct FaceError: Sendable, Codable, Equatable {
    /// Wire field `cancelled`: the user closed it.
    public var cancelled: Bool
    /// Wire field `message`.
    public var message: String
    /// Wire field `serviceCode`: the identity service's code (`AADSTS53003`), if any.
    public var serviceCode: String?

    public init(_ error: AccountStoreError) {
        cancelled = error.code == .cancelled
        message = error.message
        serviceCode = error.serviceCode
    }

    /// The store's error again.
    public var storeError: AccountStoreError {
        var error = AccountStoreError(cancelled ? .cancelled : .authorizationFailed, message)
        error.serviceCode = serviceCode
        return error
    }
}

extension AccessAnswer: Codable {}

extension AccessRequest: Codable {
    private enum CodingKeys: String, CodingKey {
        case program, accountType, homeAccountID, username, resource, scopes, previouslyAllowed, app, context
    }

    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        let text = { (key: CodingKeys) throws -> String in
            let value = try values.decode(String.self, forKey: key)
            guard value.utf8.count <= 4096 else {
                throw DecodingError.dataCorruptedError(forKey: key, in: values, debugDescription: "too long")
            }
            return value
        }
        let scopes = { (key: CodingKeys) throws -> [String] in
            let list = try values.decode([String].self, forKey: key)
            guard list.count <= 64 else {
                throw DecodingError.dataCorruptedError(forKey: key, in: values, debugDescription: "too many")
            }
            return list
        }
        self.init(
            program: try values.decode(ProgramIdentity.self, forKey: .program), accountType: try text(.accountType),
            homeAccountID: try text(.homeAccountID), username: try text(.username), resource: try text(.resource),
            scopes: try scopes(.scopes), previouslyAllowed: try scopes(.previouslyAllowed), app: try text(.app),
            context: try values.decodeIfPresent(ProgramContext.self, forKey: .context) ?? ProgramContext())
    }

    public func encode(to encoder: any Encoder) throws {
        var values = encoder.container(keyedBy: CodingKeys.self)
        try values.encode(program, forKey: .program)
        try values.encode(accountType, forKey: .accountType)
        try values.encode(homeAccountID, forKey: .homeAccountID)
        try values.encode(username, forKey: .username)
        try values.encode(resource, forKey: .resource)
        try values.encode(scopes, forKey: .scopes)
        try values.encode(previouslyAllowed, forKey: .previouslyAllowed)
        try values.encode(app, forKey: .app)
        try values.encode(context, forKey: .context)
    }
}

extension FaceRequest {
    /// The line for the wire.
    public var line: String { FaceLines.encode(self) }

    /// A request read from a line; nil for anything else.
    public init?(line: String) {
        guard let request = FaceLines.decode(FaceRequest.self, line) else { return nil }
        self = request
    }
}

extension FaceReply {
    /// The line for the wire.
    public var line: String { FaceLines.encode(self) }

    /// A reply read from a line; nil for anything else.
    public init?(line: String) {
        guard let reply = FaceLines.decode(FaceReply.self, line) else { return nil }
        self = reply
    }
}

enum FaceLines {
    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    static func decode<Value: Decodable>(_ type: Value.Type, _ line: String) -> Value? {
        guard line.utf8.count <= 1 << 20 else { return nil }
        return try? JSONDecoder().decode(type, from: Data(line.utf8))
    }
}
