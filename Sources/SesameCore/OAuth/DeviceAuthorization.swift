import FoundationEssentials

/// A device authorization request's answer (RFC 8628 §3.2): the codes a device shows its user.
///
/// Read as hostile: every text the user will see is bounded and stripped of control characters
/// (a terminal must not receive escape sequences from a server), the lifetimes are clamped, and
/// the verification page must be an `http(s)` URL.
public struct DeviceAuthorizationResponse: Sendable, Decodable, CustomStringConvertible {
    /// `user_code`: what the user types at the verification page.
    public let userCode: String
    /// `device_code`: what the device polls with (never shown, never logged).
    public let deviceCode: Secret
    /// `verification_uri`: the page where the user types the code.
    public let verificationURI: URL
    /// `verification_uri_complete`: the page with the code filled in, if the service sends one.
    public let verificationURIComplete: URL?
    /// `expires_in`: seconds the codes live (clamped to 1 s…1 day).
    public let expiresIn: Int
    /// `interval`: seconds between polls (5 when absent, RFC 8628 §3.2; clamped to 1…60).
    public let interval: Int
    /// `message`: the service's own sentence for the user (Entra sends one), when it sends one.
    public let message: String?

    enum CodingKeys: String, CodingKey {
        case userCode = "user_code"
        case deviceCode = "device_code"
        case verificationURI = "verification_uri"
        case verificationURIComplete = "verification_uri_complete"
        case expiresIn = "expires_in"
        case interval
        case message
    }

    public init(from decoder: any Decoder) throws {
        let fields = try [String: JSONValue](from: decoder)
        func text(_ name: String, limit: Int) throws -> String? {
            guard let value = fields[name]?.stringValue else { return nil }
            guard value.utf8.count <= limit else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(name) is longer than \(limit) bytes"))
            }
            return String(value.unicodeScalars.filter { $0.properties.generalCategory != .control }.map(Character.init))
        }
        func page(_ name: String) throws -> URL? {
            guard let value = try text(name, limit: 2048) else { return nil }
            guard let url = URL(string: value), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(name) is not an http(s) URL"))
            }
            return url
        }
        guard let userCode = try text("user_code", limit: 64), !userCode.isEmpty else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "no user_code"))
        }
        guard let deviceCode = fields["device_code"]?.stringValue, !deviceCode.isEmpty, deviceCode.utf8.count <= 8192 else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "no usable device_code"))
        }
        // RFC 8628 names it verification_uri; early drafts (and some servers) verification_url.
        guard let verificationURI = try page("verification_uri") ?? page("verification_url") else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "no verification_uri"))
        }
        self.userCode = userCode
        self.deviceCode = Secret(deviceCode)
        self.verificationURI = verificationURI
        self.verificationURIComplete = try page("verification_uri_complete")
        self.expiresIn = min(max(fields["expires_in"]?.integerValue ?? 900, 1), 86_400)
        self.interval = min(max(fields["interval"]?.integerValue ?? 5, 1), 60)
        self.message = try text("message", limit: 1024).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// What to tell the user: the service's message, or one built from the page and the code.
    public var instructions: String {
        message ?? "To sign in, use a web browser to open the page \(verificationURI.absoluteString) and enter the code \(userCode)."
    }

    public var description: String {
        "DeviceAuthorizationResponse(user_code: \(userCode), verification_uri: \(verificationURI.absoluteString), "
            + "expires_in: \(expiresIn), interval: \(interval), device_code: <redacted>)"
    }
}

/// Polling the token endpoint with a device code (RFC 8628 §3.4).
public struct DeviceCodeTokenRequest: TokenRequest {
    public var grantType: String { "urn:ietf:params:oauth:grant-type:device_code" }
    /// `client_id`.
    public let clientID: String
    /// `device_code`.
    public let deviceCode: Secret
    /// `client_info=1`.
    public let requestsClientInfo: Bool

    /// A poll with `deviceCode` from the device authorization answer.
    public init(clientID: String, deviceCode: Secret, requestsClientInfo: Bool) {
        self.clientID = clientID
        self.deviceCode = deviceCode
        self.requestsClientInfo = requestsClientInfo
    }

    public var formFields: [(String, String)] {
        var fields = [("client_id", clientID), ("grant_type", grantType), ("device_code", deviceCode.revealed)]
        if requestsClientInfo { fields.append(("client_info", "1")) }
        return fields
    }
}
