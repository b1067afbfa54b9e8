import FoundationEssentials

/// A token endpoint error (OAuth 2.0 §5.2) with Entra's extensions.
public struct OAuthErrorResponse: Sendable, Hashable, Decodable {
    /// `error`: `invalid_grant`, `interaction_required`, `invalid_client`, ….
    public let error: String
    /// `error_description`: `AADSTSnnnnn: text\r\nTrace ID: …`.
    public let errorDescription: String?
    /// `error_codes`: Entra's numeric codes, e.g. `[70008]`.
    public let errorCodes: [Int]
    /// `suberror`: `basic_action`, `consent_required`, `bad_token`, ….
    public let suberror: String?
    /// `claims`: a claims challenge, a JSON *string*.
    public let claims: String?
    /// `trace_id`.
    public let traceID: String?
    /// `correlation_id`.
    public let correlationID: String?
    /// `timestamp`.
    public let timestamp: String?
    /// `error_uri`.
    public let errorURI: String?

    enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
        case errorCodes = "error_codes"
        case suberror
        case claims
        case traceID = "trace_id"
        case correlationID = "correlation_id"
        case timestamp
        case errorURI = "error_uri"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        error = try container.decode(String.self, forKey: .error)
        errorDescription = try container.decodeIfPresent(String.self, forKey: .errorDescription)
        errorCodes = (try? container.decodeIfPresent([Int].self, forKey: .errorCodes)) ?? []
        suberror = try container.decodeIfPresent(String.self, forKey: .suberror)
        claims = try container.decodeIfPresent(String.self, forKey: .claims)
        traceID = try container.decodeIfPresent(String.self, forKey: .traceID)
        correlationID = try container.decodeIfPresent(String.self, forKey: .correlationID)
        timestamp = try container.decodeIfPresent(String.self, forKey: .timestamp)
        errorURI = try container.decodeIfPresent(String.self, forKey: .errorURI)
    }

    /// Whether only a new interactive sign-in can fix this (MSAL's `interaction_required`
    /// classification): `invalid_grant`, `interaction_required`, `consent_required`, `login_required`.
    public var requiresInteraction: Bool {
        ["invalid_grant", "interaction_required", "consent_required", "login_required"].contains(error)
    }

    /// The first line of the description: `AADSTS70008: The provided … has expired …`.
    public var summary: String {
        errorDescription?.split(whereSeparator: \.isNewline).first.map(String.init) ?? error
    }
}
