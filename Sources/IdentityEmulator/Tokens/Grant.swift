import FoundationEssentials

/// What an authorization code or a refresh token stands for: who signed in, to which app, with
/// which consented scopes, how, and (B2C) through which user flow.
struct Grant: Codable, Sendable, Equatable {
    var userID: String
    var tenantID: String
    var clientID: String
    /// The scopes granted, space-separated, as the client asked for them.
    var scope: String
    /// The B2C policy that issued the grant (refresh tokens are bound to it).
    var policy: String?
    var authTime: Date
    /// The sign-in session (`sid`).
    var sessionID: String
    /// `amr`: `pwd`, plus `mfa` after the SMS step.
    var methods: [String]
    /// B2C sign-up: the id_token carries `newUser`.
    var newUser: Bool = false
    /// The registered device the sign-in came from (a PRT, its cookie): the tokens carry it as
    /// `deviceid`, and Conditional Access sees a registered device.
    var deviceID: String? = nil
}
