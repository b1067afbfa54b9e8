import FoundationEssentials

/// Which way of proving who you are the sign-in page on screen asks for, as the page says it in
/// its form: the hidden field `step` (`otc`, `sas`, `tap`, `fido`, `verify-identity`,
/// `proofup-…`) and, on the code page, the hidden field `mfaMethod` (`sms`, `softwareOath`). The
/// sign-in view reads them once a page has loaded (``script``) and records them in the trace as
/// the event `sign-in-page`, which the flow inspector explains. The page is outside text: only
/// the names below are kept, never anything else the page holds (a code typed, a number shown).
public struct SignInPageStep: Sendable, Equatable {
    /// The page's step (wire field `step`).
    public enum Step: Sendable, Equatable {
        /// A one-time code to type (`otc`): from a text message or an authenticator app.
        case oneTimeCode
        /// Microsoft Authenticator's push with number matching (`sas`, and `sas-retry` after one
        /// was denied or went unanswered).
        case authenticatorPush
        /// A Temporary Access Pass (`tap`).
        case temporaryAccessPass
        /// A passkey or security key (`fido`).
        case passkey
        /// "Verify your identity": the registered methods to choose from (`verify-identity`).
        case verifyIdentity
        /// Registering a method ("Keep your account secure"): `proofup` or `proofup-<what>`.
        case registration(String)
    }

    /// The code page's method (wire field `mfaMethod`), as Microsoft Graph names methods
    /// (authenticationMethodModes).
    public enum CodeMethod: String, Sendable, Equatable {
        case sms
        case softwareOath
        case hardwareOath
        case voice
    }

    public let step: Step
    /// The method of a code page; nil for another page, or an unknown method.
    public let codeMethod: CodeMethod?

    public init(step: Step, codeMethod: CodeMethod? = nil) {
        self.step = step
        self.codeMethod = step == .oneTimeCode ? codeMethod : nil
    }

    /// The script the sign-in view runs in a loaded page: the hidden fields `step` and
    /// `mfaMethod` of its form, on two lines, each cut to 64 characters.
    public static let script = """
        (function () {
          function hidden(name) {
            var field = document.querySelector('form input[type="hidden"][name="' + name + '"]');
            return field ? String(field.value).slice(0, 64) : '';
          }
          return hidden('step') + '\\n' + hidden('mfaMethod');
        })()
        """

    /// The step a page's answer to ``script`` names; nil for a page that asks for no method (the
    /// password, consent) or names something Sesame does not know.
    public init?(scriptResult text: String) {
        guard text.utf8.count <= 200 else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        self.init(fields: [("step", lines.first ?? ""), ("mfaMethod", lines.count > 1 ? lines[1] : "")])
    }

    /// The step the trace event's fields (`step`, `mfaMethod`) name; nil when they name none.
    public init?(fields: [(String, String)]) {
        func field(_ name: String) -> String { fields.first { $0.0 == name }?.1 ?? "" }
        let step: Step
        switch field("step") {
        case "otc": step = .oneTimeCode
        // `sas-retry`: the push was denied or went unanswered, and the page offers another.
        case "sas", "sas-retry": step = .authenticatorPush
        case "tap": step = .temporaryAccessPass
        case "fido": step = .passkey
        case "verify-identity": step = .verifyIdentity
        case let name where Self.isRegistration(name): step = .registration(name)
        default: return nil
        }
        self.init(step: step, codeMethod: CodeMethod(rawValue: field("mfaMethod")))
    }

    /// `proofup` or `proofup-` and a few lowercase letters, digits or dashes.
    private static func isRegistration(_ name: String) -> Bool {
        guard name == "proofup" || name.hasPrefix("proofup-") else { return false }
        return name.count <= 40 && name.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }
    }

    /// Whether the sign-in window cannot answer this page, so that the system browser is the way
    /// on: a passkey or security key (WebKitGTK has no WebAuthn yet).
    public var needsSystemBrowser: Bool { step == .passkey }

    /// The wire name of the step.
    public var stepName: String {
        switch step {
        case .oneTimeCode: "otc"
        case .authenticatorPush: "sas"
        case .temporaryAccessPass: "tap"
        case .passkey: "fido"
        case .verifyIdentity: "verify-identity"
        case .registration(let name): name
        }
    }

    /// The trace event's fields: the step, and the code page's method.
    public var fields: [(String, String)] {
        [("step", stepName)] + (codeMethod.map { [("mfaMethod", $0.rawValue)] } ?? [])
    }

    /// The trace event's name.
    public static let eventName = "sign-in-page"
}

extension SignInPageStep {
    /// The flow diagram's row for the page: what it asks for, in a few words.
    public var label: String {
        switch step {
        case .oneTimeCode:
            switch codeMethod {
            case .sms: L("page: a code from a text message")
            case .softwareOath, .hardwareOath: L("page: a code from an authenticator app")
            case .voice, nil: L("page: a one-time code")
            }
        case .authenticatorPush: L("page: approve in Authenticator, number matching")
        case .temporaryAccessPass: L("page: a Temporary Access Pass")
        case .passkey: L("page: a passkey or security key")
        case .verifyIdentity: L("page: verify your identity, choose a method")
        case .registration: L("page: set up a way to sign in")
        }
    }
}
