import FoundationEssentials

/// A Conditional Access *authentication strength*: which ways of signing in an organization
/// accepts for an app ("Require authentication strength"). Microsoft's three built-in ones, by
/// their Microsoft Graph `authenticationStrengthPolicy` id and display name
/// (https://learn.microsoft.com/entra/identity/authentication/concept-authentication-strengths).
/// A refusal that names one tells the person what would work; the names are all Sesame reads of
/// the service's text.
public enum AuthenticationStrength: String, Sendable, Hashable, CaseIterable, Comparable {
    /// "Multifactor authentication" (`00000000-0000-0000-0000-000000000002`): the password and
    /// any second factor, or a passwordless method.
    case mfa
    /// "Passwordless MFA" (`…0003`): a passkey or security key, Microsoft Authenticator's phone
    /// sign-in, Windows Hello for Business, a certificate.
    case passwordlessMfa
    /// "Phishing-resistant MFA" (`…0004`): a passkey or security key, Windows Hello for Business,
    /// a certificate.
    case phishingResistantMfa

    /// The built-in `authenticationStrengthPolicy` id.
    public var policyID: String {
        switch self {
        case .mfa: "00000000-0000-0000-0000-000000000002"
        case .passwordlessMfa: "00000000-0000-0000-0000-000000000003"
        case .phishingResistantMfa: "00000000-0000-0000-0000-000000000004"
        }
    }

    /// The name Entra shows (the sign-in log's "Requirement").
    public var displayName: String {
        switch self {
        case .mfa: "Multifactor authentication"
        case .passwordlessMfa: "Passwordless MFA"
        case .phishingResistantMfa: "Phishing-resistant MFA"
        }
    }

    /// Whether Sesame's sign-in view can show a method that meets it: it cannot yet do passkeys
    /// or security keys (WebKitGTK has no WebAuthn), so the stronger two need the system browser.
    public var embeddedViewCanMeet: Bool { self == .mfa }

    private var rank: Int {
        switch self {
        case .mfa: 0
        case .passwordlessMfa: 1
        case .phishingResistantMfa: 2
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }

    /// The service's codes that may carry a strength. Microsoft documents no code of its own for
    /// a strength not met
    /// (https://learn.microsoft.com/entra/identity/authentication/troubleshoot-authentication-strengths):
    /// Conditional Access's block (AADSTS53003, seen on a live tenant whose policy required
    /// phishing-resistant MFA of a password sign-in), "strong authentication is required and the
    /// user did not pass the MFA challenge" (AADSTS50074, the emulator's), and the demand for MFA
    /// at the token endpoint (AADSTS50076, with a claims challenge).
    public static let refusalCodes: Set<String> = ["AADSTS53003", "AADSTS50074", "AADSTS50076"]

    /// The strength `text` names — as "strength '<name>'" or "strength: <name>" first (the one a
    /// refusal or Sesame's help desk details name), else the strongest its policy id, display name
    /// or settings name (`phishingResistantMfa`) names — reading at most its first 8 KiB; nil when
    /// it names none. "Multifactor authentication" alone is too common a phrase to count: the MFA
    /// strength is known by its id, as "Multifactor authentication strength", or after "strength".
    public init?(namedIn text: String) {
        let text = String(text.prefix(8192)).lowercased()
        let named = Self.allCases.filter { strength in
            ["strength '", "strength: ", "strength \"", "strength “"].contains { text.contains($0 + strength.displayName.lowercased()) }
        }
        func mentions(_ strength: Self) -> Bool {
            let words: [String] =
                switch strength {
                case .mfa: ["multifactor authentication strength"]
                case .passwordlessMfa: ["passwordless mfa", "passwordlessmfa"]
                case .phishingResistantMfa: ["phishing-resistant mfa", "phishing resistant mfa", "phishingresistantmfa"]
                }
            return text.contains(strength.policyID) || words.contains { text.contains($0) }
        }
        guard let strength = named.max() ?? Self.allCases.filter(mentions).max() else { return nil }
        self = strength
    }
}

extension AccountStoreError {
    /// The authentication strength a Conditional Access refusal asks for, when the refusal names
    /// one (in its claims challenge or its description); nil for any other error.
    public var requiredAuthenticationStrength: AuthenticationStrength? {
        guard let serviceCode, AuthenticationStrength.refusalCodes.contains(serviceCode) else { return nil }
        return AuthenticationStrength(namedIn: (claimsChallenge ?? "").prefix(4096) + "\n" + (errorDescription ?? "").prefix(4096))
    }
}
