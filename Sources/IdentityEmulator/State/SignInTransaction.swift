import FoundationEssentials

/// One trip through the sign-in pages, from `/authorize` to the redirect. The pages carry only its
/// id (`ctx`); every step's outcome is kept here, so a form cannot claim a step it did not pass.
struct SignInTransaction: Sendable {
    let id: String
    let request: AuthorizeRequest
    let createdAt: Date
    /// The user named on the username page (or by the session).
    var userID: String?
    var passwordVerified = false
    /// The SMS code sent for this transaction.
    var smsCode: String?
    var smsVerified = false
    /// "Stay signed in?" answered.
    var staySignedIn: Bool?
    var consentGiven = false
    /// Set when the user came from the session cookie (single sign-on).
    var fromSession = false
    /// B2C sign-up created this user.
    var newUser = false
    /// B2C password reset: the email being verified, the code sent to it, and whether it matched.
    var resetEmail: String?
    var resetCode: String?
    var resetVerified = false
    /// The device authorization these pages sign in for (the device code flow's verification
    /// page started them): finishing approves the device instead of redirecting with a code.
    var deviceKey: String?
    /// Home realm discovery sent the browser to a federated domain's identity provider for this
    /// user name (a UPN): only an assertion for it may continue the sign-in.
    var federatedUserName: String?
    /// The identity provider's signed answer for ``federatedUserName`` was accepted at `/login.srf`
    /// (the first factor, in place of Entra's password).
    var federationVerified = false

    /// A user of another organization (the tenant policy's `otherTenantDomains`): their home
    /// tenant signs them in, then this one refuses them (AADSTS50020).
    var foreignUserName: String?
    /// A Conditional Access rule demands MFA of this sign-in.
    var conditionalAccessMFA = false
    /// The registered device whose PRT cookie (`x-ms-RefreshTokenCredential`) signed this
    /// sign-in in: its tokens carry `deviceid`.
    var deviceID: String?
    /// The client platform the browser runs on (its `User-Agent`), as Conditional Access reads it.
    var platform = "unknown"

    /// The first factor is done: Entra's password, or the federated provider's answer.
    var firstFactorVerified: Bool { passwordVerified || federationVerified }

    /// `amr`: `pwd` (a password, Entra's or the provider's), `fed` when a federated provider
    /// vouched for it, `mfa` after the SMS code.
    var methods: [String] { (federationVerified ? ["pwd", "fed"] : ["pwd"]) + (smsVerified ? ["mfa"] : []) }
}

/// A browser's sign-in session: what the session cookie (`ESTSAUTH`, `x-ms-cpim-sso:…`) points to.
struct SignInSession: Codable, Sendable {
    var userID: String
    var tenantID: String
    var authTime: Date
    var methods: [String]
    /// "Stay signed in?" → Yes: the cookie outlives the browser session.
    var persistent: Bool
    /// The `sid` claim.
    var sessionID: String
}
