import FoundationEssentials

/// What a user should read for the identity service's codes that a person can act on: the
/// service's own text says what went wrong to a developer; this says what to do.
enum ServiceErrorAdvice {
    /// The sentence for `serviceCode` when the refusal names the authentication strength it asks
    /// for (``AuthenticationStrength/refusalCodes``): what would meet it; else the code's own.
    static func sentence(for serviceCode: String?, strength: AuthenticationStrength?) -> String? {
        guard let strength, let serviceCode, AuthenticationStrength.refusalCodes.contains(serviceCode) else {
            return sentence(for: serviceCode)
        }
        return sentence(for: strength)
    }

    /// What meets `strength`, and where Sesame can sign in with it.
    static func sentence(for strength: AuthenticationStrength) -> String {
        switch strength {
        case .mfa:
            "Your organization asks for a second way of proving it is you for this app: the Microsoft Authenticator app, a code "
                + "from an authenticator app, a text message, or a passkey or security key. Sign in again and choose one when the "
                + "page asks."
        case .passwordlessMfa:
            "Your organization asks for a passwordless sign-in for this app: a passkey or a security key (FIDO2), Microsoft "
                + "Authenticator's phone sign-in, Windows Hello for Business or a certificate. A password with a code or an "
                + "approval is not enough. Sesame's sign-in window cannot use passkeys yet: sign in with your browser, or with "
                + "a code on another device that has one."
        case .phishingResistantMfa:
            "Your organization asks for a phishing-resistant sign-in for this app: a passkey or a security key (FIDO2), Windows "
                + "Hello for Business or a certificate. A text message, a code or an Authenticator approval is not enough. Sesame's "
                + "sign-in window cannot use passkeys yet: sign in with your browser, or with a code on another device that has "
                + "one."
        }
    }

    /// The sentence for `serviceCode` (`AADSTS50194`, …), if Sesame knows a better one.
    static func sentence(for serviceCode: String?) -> String? {
        switch serviceCode {
        case "AADSTS50194":
            "This app is registered for one organization only: use your tenant's authority "
                + "(https://login.microsoftonline.com/<your tenant>), not /common or /organizations, in its settings."
        case "AADSTS90094":
            "Your organization lets only an administrator approve this app. Ask your IT administrator to grant it consent "
                + "for everyone, then sign in again."
        case "AADSTS90095":
            "Your organization lets only an administrator approve this app. Ask for approval on the sign-in page (Request approval), "
                + "or send your IT administrator the approval link; sign in again once they approved it."
        case "AADSTS50076", "AADSTS50074":
            "Your organization asks for another sign-in step (multi-factor authentication): sign in again."
        case "AADSTS50079":
            "Your organization requires you to set up a second way to sign in first. Register at https://aka.ms/mfasetup, or when "
                + "the sign-in page asks, then sign in again."
        case "AADSTS53003":
            "Your organization's access policy blocks this sign-in. Only your IT help desk can change that: send them the details."
        case "AADSTS530003", "AADSTS53000":
            "Your organization allows this only from a device it manages, which Sesame cannot show on Linux. Try Continue in your "
                + "browser (a browser your organization manages may pass), or send your IT help desk the details."
        case "AADSTS50053":
            "Your account is locked for a while after too many wrong passwords. Wait a few minutes, then try again; if it stays "
                + "locked, your IT help desk can unlock it."
        case "AADSTS50057":
            "Your account is disabled. Only your IT help desk can enable it: send them the details."
        case "AADSTS50055":
            "Your password has expired. Sign in again: the sign-in page asks for a new one."
        case "AADSTS50196":
            "The identity service saw too many sign-in requests in a row and asks Sesame to slow down; try again in a minute."
        case "AADB2C90088":
            "This sign-in belongs to another user flow; sign in again."
        // A refresh token from this computer's PRT sign-in names the device: Entra refuses it once
        // the device is removed or disabled, as it does the PRT.
        case "AADSTS700003":
            "This computer is no longer registered with your organization: sign in again."
        case "AADSTS135011":
            "Your organization has disabled this computer: sign in again."
        default:
            nil
        }
    }
}
