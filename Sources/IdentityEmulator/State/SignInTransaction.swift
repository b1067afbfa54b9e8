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
    /// The second factor passed after the first (an SMS code, the Authenticator's approval, an
    /// app's code, a passkey).
    var secondFactor: AuthenticationMethod?
    /// A method that signed in without the password: a Temporary Access Pass or a passkey (it is
    /// both factors).
    var passwordlessMethod: AuthenticationMethod?
    /// The method whose page is on screen (what a code or an approval answers).
    var pendingMethod: AuthenticationMethod?
    /// The authentication strength a Conditional Access rule demands of this sign-in.
    var requiredStrength: AuthenticationStrength?
    /// Registering Microsoft Authenticator ("Keep your account secure"): the activation code the
    /// page's QR code carries, once shown.
    var activationCode: String?
    /// The interrupt to register methods was shown (or skipped) in this sign-in.
    var registrationOffered = false
    /// The `amr` of the Primary Refresh Token that signed this sign-in in.
    var inheritedReferences: [String] = []
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

    /// The first factor is done: Entra's password, the federated provider's answer, or a
    /// passwordless method.
    var firstFactorVerified: Bool { passwordVerified || federationVerified || passwordlessMethod != nil }

    /// Multi-factor authentication is done: a second factor, or a method that is both.
    var mfaVerified: Bool { secondFactor != nil || passwordlessMethod != nil || inheritedReferences.contains("mfa") }

    /// Whether this sign-in meets `strength`.
    func meets(_ strength: AuthenticationStrength) -> Bool {
        strength.isSatisfied(by: usedMethods) || strength.isSatisfied(byReferences: inheritedReferences)
    }

    /// The methods this sign-in used besides the password.
    var usedMethods: Set<AuthenticationMethod> { Set([secondFactor, passwordlessMethod].compactMap(\.self)) }

    /// `amr`, as Entra writes it: ``AuthenticationMethodReferences``.
    var methods: [String] {
        AuthenticationMethodReferences.values(
            password: passwordVerified || federationVerified, federated: federationVerified, secondFactor: secondFactor,
            passwordless: passwordlessMethod, inherited: inheritedReferences)
    }
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
