import FoundationEssentials

/// What a user should read for the identity service's codes that a person can act on: the
/// service's own text says what went wrong to a developer; this says what to do.
enum ServiceErrorAdvice {
    /// The sentence for `serviceCode` (`AADSTS50194`, …), if Sesame knows a better one.
    static func sentence(for serviceCode: String?) -> String? {
        switch serviceCode {
        case "AADSTS50194":
            "This app is registered for one organization only: use your tenant's authority "
                + "(https://login.microsoftonline.com/<your tenant>), not /common or /organizations, in its settings."
        case "AADSTS90094", "AADSTS90095":
            "Your organization lets only an administrator approve this app. Ask your IT administrator to grant it consent "
                + "for everyone, then sign in again."
        case "AADSTS50076", "AADSTS50079":
            "Your organization asks for another sign-in step (multi-factor authentication): sign in again."
        case "AADSTS50196":
            "The identity service saw too many sign-in requests in a row and asks Sesame to slow down; try again in a minute."
        case "AADB2C90088":
            "This sign-in belongs to another user flow; sign in again."
        default:
            nil
        }
    }
}
