import FoundationEssentials

/// A way a user proves who they are besides the password, named as Entra's authentication
/// methods policy names its configurations (`authenticationMethodConfigurations` ids, in lower
/// camel case) and ordered as system-preferred MFA prefers them: strongest first.
public enum AuthenticationMethod: String, Sendable, Codable, CaseIterable, Comparable {
    /// A Temporary Access Pass (`temporaryAccessPassAuthenticationMethod`): an administrator's
    /// time-limited pass, in place of the password and the second factor.
    case temporaryAccessPass
    /// A passkey or a FIDO2 security key (`fido2AuthenticationMethod`): a WebAuthn assertion.
    case fido2
    /// Microsoft Authenticator's push with number matching (`microsoftAuthenticatorAuthenticationMethod`).
    case microsoftAuthenticator
    /// An authenticator app's six-digit code, RFC 6238 TOTP (`softwareOathAuthenticationMethod`).
    case softwareOath
    /// A code texted to the mobile phone (`phoneAuthenticationMethod`, `smsSignInState`).
    case sms

    /// System-preferred MFA's order (Microsoft's: a Temporary Access Pass, a passkey,
    /// Authenticator notifications, TOTP, telephony).
    var preference: Int {
        switch self {
        case .temporaryAccessPass: 0
        case .fido2: 1
        case .microsoftAuthenticator: 2
        case .softwareOath: 3
        case .sms: 4
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.preference < rhs.preference }

    /// What the "Verify your identity" list calls it.
    var choiceText: String {
        switch self {
        case .fido2: "Face, fingerprint, PIN or security key"
        case .microsoftAuthenticator: "Approve a request on my Microsoft Authenticator app"
        case .softwareOath: "Use a verification code"
        case .sms: "Text"
        case .temporaryAccessPass: "Temporary Access Pass"
        }
    }

    /// The id the pages' buttons carry (Entra's `authMethodId` values).
    var authMethodID: String {
        switch self {
        case .fido2: "FidoKey"
        case .microsoftAuthenticator: "PhoneAppNotification"
        case .softwareOath: "PhoneAppOTP"
        case .sms: "OneWaySMS"
        case .temporaryAccessPass: "AccessPass"
        }
    }

    init?(authMethodID: String) {
        guard let method = Self.allCases.first(where: { $0.authMethodID == authMethodID }) else { return nil }
        self = method
    }
}

/// A Conditional Access authentication strength (the built-in `authenticationStrengthPolicy`
/// objects): which methods satisfy it after, or instead of, the password.
public enum AuthenticationStrength: String, Sendable, Equatable, Decodable, CaseIterable {
    /// "Multifactor authentication" (`00000000-0000-0000-0000-000000000002`): any second factor.
    case mfa
    /// "Passwordless MFA" (`…0003`): a passkey, Authenticator phone sign-in, Windows Hello.
    case passwordlessMfa
    /// "Phishing-resistant MFA" (`…0004`): a passkey or security key, Windows Hello, a certificate.
    case phishingResistantMfa

    /// The built-in policy's id, as the claims challenge and the sign-in logs carry it.
    var policyID: String {
        switch self {
        case .mfa: "00000000-0000-0000-0000-000000000002"
        case .passwordlessMfa: "00000000-0000-0000-0000-000000000003"
        case .phishingResistantMfa: "00000000-0000-0000-0000-000000000004"
        }
    }

    /// The display name Entra gives it.
    var displayName: String {
        switch self {
        case .mfa: "Multifactor authentication"
        case .passwordlessMfa: "Passwordless MFA"
        case .phishingResistantMfa: "Phishing-resistant MFA"
        }
    }

    /// What satisfies it, in words (Microsoft's table of combinations).
    var satisfiedBy: String {
        switch self {
        case .mfa:
            "a password and a second factor (a text, a call, Microsoft Authenticator, an authenticator app's code), a Temporary "
                + "Access Pass, or a passkey"
        case .passwordlessMfa:
            "a passkey or security key (FIDO2), Windows Hello for Business, Microsoft Authenticator's phone sign-in, or a "
                + "certificate"
        case .phishingResistantMfa: "a passkey or security key (FIDO2), Windows Hello for Business, or a certificate"
        }
    }

    /// The methods (of those emulated) that satisfy it as the second factor or alone.
    var satisfyingMethods: Set<AuthenticationMethod> {
        switch self {
        case .mfa: Set(AuthenticationMethod.allCases)
        case .passwordlessMfa, .phishingResistantMfa: [.fido2]
        }
    }

    /// Whether a sign-in that used `methods` meets it.
    func isSatisfied(by methods: Set<AuthenticationMethod>) -> Bool { !methods.isDisjoint(with: satisfyingMethods) }

    /// Whether a grant whose `amr` is `references` meets it (a refresh token's, a PRT's).
    func isSatisfied(byReferences references: [String]) -> Bool {
        switch self {
        case .mfa: references.contains("mfa")
        case .passwordlessMfa, .phishingResistantMfa: references.contains("fido")
        }
    }
}
