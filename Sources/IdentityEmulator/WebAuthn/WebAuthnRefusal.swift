import FoundationEssentials

/// Why the relying party refused a registration or a sign-in. Each case is one check of
/// WebAuthn Level 3 §7.1 / §7.2 or of Entra's passkey policy; ``sentence`` says it to a person
/// and never repeats a key, signature or challenge.
enum WebAuthnRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    /// The browser's answer could not be read (JSON, base64url, CBOR, authenticator data).
    case malformedResponse(String)
    /// `clientDataJSON.type` is not the ceremony's (`webauthn.create` / `webauthn.get`).
    case wrongCeremony
    /// The challenge was never issued, was issued for the other ceremony, or was already used.
    case challengeUnknown
    /// The challenge is older than its five minutes.
    case challengeExpired
    /// `clientDataJSON.origin` is not one of the relying party's origins.
    case originNotAllowed
    /// `crossOrigin` true or a `topOrigin`: the call came from a frame of another site.
    case crossOriginRefused
    /// The authenticator data's `rpIdHash` is not SHA-256 of the relying party id.
    case rpIDMismatch
    /// UP not set: nobody touched the authenticator.
    case userNotPresent
    /// UV not set while the policy requires user verification.
    case userNotVerified
    /// The credential's algorithm is not one the policy offers.
    case algorithmNotAllowed
    /// An attestation format the relying party does not accept while attestation is enforced.
    case attestationFormatNotSupported
    /// The attestation statement's signature or certificate does not hold.
    case attestationInvalid
    /// The attestation certificate names another authenticator model than the data does.
    case attestationAAGUIDMismatch
    /// The attestation does not chain to a trusted root, or its certificate is out of date.
    case attestationNotTrusted
    /// Attestation is enforced and the authenticator gave none (or only self attestation).
    case attestationRequired
    /// The authenticator's AAGUID is not allowed by the key restrictions.
    case authenticatorNotAllowed
    /// A synced passkey where the policy wants device-bound ones, or the reverse.
    case passkeyTypeNotAllowed
    /// The credential id is already registered.
    case credentialAlreadyRegistered
    /// The user already has the most passkeys the emulator keeps.
    case tooManyCredentials
    /// No registered credential has this id.
    case credentialUnknown
    /// The credential belongs to another user than the one signing in, or `userHandle` names someone else.
    case credentialNotForUser
    /// The assertion's signature does not verify with the registered key.
    case signatureInvalid
    /// The signature counter did not increase: the authenticator may have been cloned.
    case signCountRollback
    /// The backup eligibility flag differs from the registration's.
    case backupEligibilityChanged

    /// A person's sentence: what was wrong, in the relying party's words.
    var sentence: String {
        switch self {
        case .malformedResponse: "The answer from the browser or security key could not be read."
        case .wrongCeremony: "The answer is for another kind of request than the one that was made."
        case .challengeUnknown: "The request was not made by this server or was already answered."
        case .challengeExpired: "The request timed out. Try again."
        case .originNotAllowed: "The answer was made for another website."
        case .crossOriginRefused: "The answer was made from inside another website's page."
        case .rpIDMismatch: "The security key signed for another website."
        case .userNotPresent: "The security key was not touched."
        case .userNotVerified: "The security key did not verify your PIN or biometric, and this organization requires it."
        case .algorithmNotAllowed: "The security key uses a signature algorithm this organization does not accept."
        case .attestationFormatNotSupported: "The security key's attestation format is not accepted."
        case .attestationInvalid: "The security key's attestation does not verify."
        case .attestationAAGUIDMismatch: "The security key's attestation certificate names another model than the key does."
        case .attestationNotTrusted: "The security key's maker could not be verified."
        case .attestationRequired: "This organization requires a security key that proves its make and model."
        case .authenticatorNotAllowed: "This type of passkey or security key is not allowed by your organization."
        case .passkeyTypeNotAllowed: "This kind of passkey (synced or device-bound) is not allowed by your organization."
        case .credentialAlreadyRegistered: "This passkey is already registered."
        case .tooManyCredentials: "You have registered the most passkeys allowed. Remove one first."
        case .credentialUnknown: "This passkey is not registered for any account here."
        case .credentialNotForUser: "This passkey belongs to another account."
        case .signatureInvalid: "The passkey's signature does not verify."
        case .signCountRollback: "The security key's counter went back: it may have been copied."
        case .backupEligibilityChanged: "The passkey's backup eligibility changed since it was registered."
        }
    }

    /// The AADSTS number Entra's sign-in page script names for the same refusal, where one is
    /// known — observed in the page's constants, not documented: `FidoBlockedByPolicy` 135016,
    /// `UserAccountNotFoundForFidoSignIn` 500344, and 135017 ("Unexpected Signature Counter") seen
    /// by a third party for a counter Entra did not accept.
    var entraErrorCode: Int? {
        switch self {
        case .authenticatorNotAllowed, .passkeyTypeNotAllowed, .attestationRequired, .attestationNotTrusted: 135016
        case .credentialUnknown: 500344
        case .signCountRollback: 135017
        default: nil
        }
    }

    var description: String {
        if case .malformedResponse(let detail) = self { return "\(sentence) (\(detail))" }
        return sentence
    }
}
