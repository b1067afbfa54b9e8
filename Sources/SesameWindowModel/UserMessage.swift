import FoundationEssentials
import SesameCore
import SesameSystem

/// An error of the app's own whose sentence for the user is already made (and translated).
public protocol UserFacingError: Error {
    /// The sentence, in the user's language.
    var userMessage: String { get }
}

/// The text a user reads for an error, made in one place: a sentence in the user's language
/// (gettext, through `L`), followed by the service's code or the HTTP status when there is one.
/// Core's own English descriptions are for logs and the command line; nothing of an error's
/// contents beyond its code reaches the user (they may carry a service's English or a secret).
public enum UserMessage {
    /// What to show for `error`.
    public static func text(for error: any Error) -> String {
        switch error {
        case let error as any UserFacingError: error.userMessage
        case let error as AccountStoreError: text(for: error)
        case let error as GraphError: text(for: error)
        case let error as TaskServiceError: text(for: error)
        case let error as HTTPTransportError: text(for: error)
        case let error as TokenStorageError: storage(error.problem, location: error.location)
        case let error as SettingsError: text(for: error)
        case is CancellationError: L("The request was cancelled.")
        default: String(formatting: L("Something went wrong (%@). Try again."), String(describing: type(of: error)))
        }
    }

    /// What the window and its pages say while the desktop says there is no network.
    public static var offline: String { L("You are offline. Sesame will try again when the network is back.") }

    /// A sign-in or token failure: the sentence for its service code when Sesame has one (the
    /// advice Core gives in English), else the sentence for its kind; then the service's code.
    static func text(for error: AccountStoreError) -> String {
        if let failure = error.transportFailure, error.code == .network {
            return text(for: failure)
        }
        let sentence: String
        switch error.code {
        case .throttled, .cancelled, .passwordResetRequested: sentence = Self.sentence(for: error)
        default:
            sentence =
                error.requiredAuthenticationStrength.map(strengthSentence) ?? serviceSentence(for: error.serviceCode)
                ?? Self.sentence(for: error)
        }
        guard let code = error.serviceCode, isSafeCode(code) else { return sentence }
        return "\(sentence) (\(code))"
    }

    /// What a person can do about the identity service's codes that Sesame knows (Core's
    /// `ServiceErrorAdvice`, translated, and a few more).
    static func serviceSentence(for serviceCode: String?) -> String? {
        switch serviceCode {
        case "AADSTS50194":
            L(
                "This app is registered for one organization only: use your tenant's authority (https://login.microsoftonline.com/<your tenant>), not /common or /organizations, in its settings."
            )
        case "AADSTS90094":
            L(
                "Your organization lets only an administrator approve this app. Ask your IT administrator to grant it consent for everyone, then sign in again."
            )
        case "AADSTS50076", "AADSTS50074":
            L("Your organization asks for another sign-in step (multi-factor authentication): sign in again.")
        case "AADSTS50079":
            L(
                "Your organization requires you to set up a second way to sign in first. Register at https://aka.ms/mfasetup, or when the sign-in page asks, then sign in again."
            )
        case "AADSTS53003":
            L("Your organization's access policy blocks this sign-in. Only your IT help desk can change that: send them the details.")
        case "AADSTS50097":
            L(
                "Your organization allows this only from a computer registered with it. Register this one (sesame device register), then sign in again: registering needs no administrator."
            )
        case "AADSTS530003", "AADSTS53000":
            L(
                "Your organization allows this only from a device it manages, which Sesame cannot show on Linux. Try Continue in your browser (a browser your organization manages may pass), or send your IT help desk the details."
            )
        case "AADSTS65001":
            L("Sesame has not been allowed these permissions yet: sign in again and accept them.")
        case "AADSTS90095":
            L(
                "Your organization lets only an administrator approve this app. Ask for approval on the sign-in page (Request approval), or send your IT administrator the approval link; sign in again once they approved it."
            )
        case "AADSTS50053":
            L(
                "Your account is locked for a while after too many wrong passwords. Wait a few minutes, then try again; if it stays locked, your IT help desk can unlock it."
            )
        case "AADSTS50057":
            L("Your account is disabled. Only your IT help desk can enable it: send them the details.")
        case "AADSTS50055":
            L("Your password has expired. Sign in again: the sign-in page asks for a new one.")
        case "AADSTS700016":
            L(
                "This app is not registered in your organization, or its settings name another tenant. Run sesame doctor: it says what to fix."
            )
        case "AADSTS50020":
            L(
                "You signed in with an account of another organization. Sign in with your account of this organization, or ask its IT help desk to invite you as a guest."
            )
        case "AADSTS50011":
            L("The app registration does not list the redirect address Sesame uses. Run sesame doctor: it says which one to add.")
        case "AADSTS7000218":
            L(
                "The app registration does not allow signing in with a code. Sign in with your browser instead, or ask IT to turn on Allow public client flows."
            )
        case "AADSTS50196":
            L("The identity service saw too many sign-in requests in a row and asks Sesame to slow down; try again in a minute.")
        case "AADB2C90088":
            L("This sign-in belongs to another user flow; sign in again.")
        case "AADSTS65004":
            L("You did not give this app the permissions it asks for. To use it, sign in again and accept them.")
        case "AADSTS700003":
            L("This computer is no longer registered with your organization: sign in again.")
        case "AADSTS135011":
            L("Your organization has disabled this computer: sign in again.")
        case "AADSTS50173", "AADSTS70008", "AADSTS700082", "AADSTS700084":
            L("Your sign-in has expired or was revoked; sign in again.")
        default:
            nil
        }
    }

    /// What meets the authentication strength a refusal asks for (Core's `ServiceErrorAdvice`,
    /// translated): the methods, and for the two the sign-in window cannot meet yet (it has no
    /// passkeys), the browser.
    static func strengthSentence(_ strength: AuthenticationStrength) -> String {
        switch strength {
        case .mfa:
            L(
                "Your organization asks for a second way of proving it is you for this app: the Microsoft Authenticator app, a code from an authenticator app, a text message, or a passkey or security key. Sign in again and choose one when the page asks."
            )
        case .passwordlessMfa:
            L(
                "Your organization asks for a passwordless sign-in for this app: a passkey or a security key (FIDO2), Microsoft Authenticator’s phone sign-in, Windows Hello for Business or a certificate. A password with a code or an approval is not enough. Sesame’s sign-in window cannot use passkeys yet: continue in your browser, or sign in with a code on another device that has one."
            )
        case .phishingResistantMfa:
            L(
                "Your organization asks for a phishing-resistant sign-in for this app: a passkey or a security key (FIDO2), Windows Hello for Business or a certificate. A text message, a code or an Authenticator approval is not enough. Sesame’s sign-in window cannot use passkeys yet: continue in your browser, or sign in with a code on another device that has one."
            )
        }
    }

    /// The sentence for a failure's kind.
    private static func sentence(for error: AccountStoreError) -> String {
        switch error.code {
        case .unknownAccountType: L("This sample has no sign-in configured; check its settings file.")
        case .malformedRedirect: L("The identity service's answer to the sign-in could not be understood. Sign in again.")
        case .passwordResetRequested: L("You asked to reset your password.")
        case .cancelled: L("Sign-in was cancelled.")
        case .authorizationFailed: L("The identity service refused the sign-in.")
        case .tokenRequestFailed:
            L("The identity service refused to give Sesame access for this account. Try again later, or sign in again.")
        case .interactionRequired: L("The identity service needs you to sign in again.")
        case .invalidIDToken: L("The identity service's answer about who signed in could not be verified, so Sesame refused the sign-in.")
        case .invalidResponse: L("The identity service's answer or the stored sign-in data could not be used. Try again.")
        case .providerMetadataUnavailable:
            L("The identity service's signing keys could not be fetched. Check the network connection and try again.")
        case .accountNotFound: L("This account is no longer signed in here. Sign in again.")
        case .network: L("Could not reach the identity service. Check the network connection and try again.")
        case .userAgentUnavailable: L("The sign-in page could not be shown.")
        case .throttled: throttled(retryAfter: error.retryAfter)
        case .storageUnavailable: storage(error.storageProblem ?? .other, location: error.storageLocation ?? "")
        default: L("Signing in failed.")
        }
    }

    /// Why the sign-ins cannot be read or stored, and what to do; each says nothing is lost where
    /// that holds.
    static func storage(_ problem: TokenStorageError.Problem, location: String) -> String {
        switch problem {
        case .keyringLocked:
            L("Your keyring is locked, and your sign-ins are inside it. Unlock it, then try again; nothing is lost.")
        case .keyringUnavailable:
            L(
                "Your sign-ins are in the desktop keyring, which does not answer here (no session bus or keyring daemon). Use Sesame in your desktop session."
            )
        case .diskFull:
            String(
                formatting: L(
                    "There is no room left on the disk for your sign-ins (%@). Free some space, then try again; nothing is lost."), location
            )
        case .readOnly:
            String(formatting: L("Your sign-ins cannot be saved in %@: it is read-only, or not yours to write. Nothing is lost."), location)
        case .other:
            L("The stored sign-in data could not be read or written. Try again.")
        }
    }

    /// The service asked to slow down for longer than Sesame waits: for how long, when it said.
    private static func throttled(retryAfter: Duration?) -> String {
        guard let retryAfter else { return L("The identity service asks Sesame to slow down; try again in a minute.") }
        let seconds = max(1, Int(retryAfter.components.seconds))
        return String(
            formatting: seconds == 1
                ? L("The identity service asks Sesame to wait %d second before asking again; try again then.")
                : L("The identity service asks Sesame to wait %d seconds before asking again; try again then."),
            seconds)
    }

    /// A Graph refusal: a sentence for its status, then the status and Graph's error code.
    static func text(for error: GraphError) -> String {
        let sentence =
            switch error.status {
            // Refused before sending: a next page that is not on Graph.
            case 0: L("Microsoft Graph pointed to a next page elsewhere; Sesame did not send the sign-in there.")
            // A success status whose body could not be read.
            case 200..<300: L("Microsoft Graph sent an answer Sesame could not read; try again later.")
            case 401: L("Microsoft Graph did not accept the sign-in.")
            case 403: L("Microsoft Graph says this account may not do that.")
            case 404: L("Microsoft Graph did not find what was asked for.")
            case 429: L("Microsoft Graph asks Sesame to slow down; try again in a minute.")
            case 500...: L("Microsoft Graph is not available right now; try again later.")
            default: L("Microsoft Graph refused the request.")
            }
        let code = isSafeCode(error.code) && error.code != "HTTP\(error.status)" ? ", \(error.code)" : ""
        return "\(sentence) (HTTP \(error.status)\(code))"
    }

    /// A task API refusal: a sentence for its status, then the status.
    static func text(for error: TaskServiceError) -> String {
        let sentence =
            switch error.status {
            // Refused before sending: the only such refusal is an empty text.
            case 0: L("Type a task description first.")
            case 200..<300: L("The task list could not be read.")
            case 401: L("The task service did not accept the sign-in.")
            case 403: L("The task service says this account may not do that.")
            case 429: L("The task service asks Sesame to slow down; try again in a minute.")
            case 500...: L("The task service is not available right now; try again later.")
            default: L("The task service refused the request.")
            }
        return error.status == 0 ? sentence : "\(sentence) (HTTP \(error.status))"
    }

    /// No answer from a server: what happened, naming its host (never a path or query) when it
    /// is only a host, and the proxy when the failure is the proxy's.
    static func text(for error: HTTPTransportError) -> String {
        func isPlainHost(_ text: String) -> Bool {
            !text.isEmpty && text.count <= 260 && text.allSatisfy({ $0.isLetter || $0.isNumber || ".-:[]".contains($0) })
        }
        let host = error.host
        guard isPlainHost(host) else {
            return L("Could not reach the server. Check the network connection and try again.")
        }
        let proxy = error.proxy.flatMap { isPlainHost($0) ? $0 : nil } ?? L("(unknown)")
        switch error.kind {
        case .unreachable: return String(formatting: L("Could not reach %@. Check the network connection and try again."), host)
        case .connectionRefused:
            return String(formatting: L("%@ refused the connection: nothing answers there. Check the address, or try again later."), host)
        case .noSuchHost:
            return String(formatting: L("There is no server named %@. Check the address and the network connection."), host)
        case .networkUnreachable: return String(formatting: L("You are offline: %@ cannot be reached. Connect to a network."), host)
        case .untrustedCertificate:
            return String(
                formatting: L(
                    "The certificate of %@ is not trusted on this computer, so Sesame did not connect. If your organization inspects its traffic, ask IT to install its certificate authority."
                ), host)
        case .tlsFailed: return String(formatting: L("A secure connection to %@ could not be set up. Try again later."), host)
        case .timedOut: return String(formatting: L("%@ did not answer in time. Try again later."), host)
        case .tooLarge: return String(formatting: L("%@ sent an answer too large to read. Try again later."), host)
        case .brokenAnswer: return String(formatting: L("The connection to %@ broke before its answer was complete. Try again."), host)
        case .proxyUnreachable:
            return String(formatting: L("The proxy at %@ cannot be reached. Check the network proxy settings."), proxy)
        case .proxyRefused:
            return String(formatting: L("The proxy at %1$@ refused to connect to %2$@."), proxy, host)
        case .proxyAuthenticationRequired:
            return String(
                formatting: L("The proxy at %@ asks for a sign-in. Add its user name and password to the network proxy settings."), proxy)
        }
    }

    /// A settings file that cannot be used: the file, and the key to fix.
    static func text(for error: SettingsError) -> String {
        if let key = error.key {
            return String(formatting: L("The settings file %1$@ cannot be used: check its key “%2$@”."), error.file, key)
        }
        return String(formatting: L("The settings file %@ cannot be used."), error.file)
    }

    /// A key a settings file has that its shape does not read (Sesame ignores it), and the key
    /// it probably meant.
    public static func text(for warning: SettingsWarning) -> String {
        let ignored = String(
            formatting: L("The settings file %1$@ has a key Sesame does not use: “%2$@”."), warning.file, warning.printableKey)
        guard let suggestion = warning.suggestion else { return ignored }
        return ignored + " " + String(formatting: L("Did you mean “%@”?"), suggestion)
    }

    /// Whether a code is only a code (`AADSTS50076`, `Request_UnsupportedQuery`), fit to show.
    private static func isSafeCode(_ code: String) -> Bool {
        !code.isEmpty && code.count <= 64 && code.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ".") }
    }
}

/// What a page's action button offers, and says.
public enum SampleAction: Equatable, Sendable {
    /// Nobody is signed in.
    case signIn
    /// The session ended (the service needs an interactive sign-in).
    case signInAgain
    /// The last request failed for another reason.
    case retry

    /// The button's label.
    public var title: String {
        switch self {
        case .signIn: L("Sign in")
        case .signInAgain: L("Sign in again")
        case .retry: L("Retry")
        }
    }

    /// The action a failure offers: signing in again when only that helps, else trying again.
    public static func after(_ error: any Error) -> SampleAction {
        (error as? AccountStoreError)?.code == .interactionRequired ? .signInAgain : .retry
    }
}
