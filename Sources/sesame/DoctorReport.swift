import FoundationEssentials
import SesameCommandLine
import SesameCore
import SesameService
import SesameWindowModel

/// `sesame doctor`'s text: one section per account type, then storage; each line `OK`, `FIX`
/// (a sentence saying what to fix) or `--` (not checked, and why). Failures to reach a server are
/// told in the window's words (``UserMessage``), so the administrator and the user read the same
/// sentence; the doctor's own lines are English, as the command line's are.
struct DoctorReport {
    private(set) var text = ""
    private var problems = 0

    /// Whether nothing needs fixing.
    var isHealthy: Bool { problems == 0 }

    mutating func add(_ diagnosis: Diagnosis) {
        let file = diagnosis.settingsFile.map { ": \(DisplayText.escaped($0))" } ?? ""
        text += "\(diagnosis.accountType) (\(diagnosis.shape.settingsFileName)\(file))\n"
        for finding in diagnosis.findings { add(finding) }
        text += "\n"
    }

    /// A settings file that cannot be used: the one thing to fix for its account type.
    mutating func add(_ error: SettingsError) {
        text += "\(DisplayText.escaped(error.file)) (cannot be used)\n"
        problem("settings", error.description)
        text += "\n"
    }

    mutating func addStorage(_ findings: [Diagnosis.Finding]) {
        text += "Keyring and token storage\n"
        for finding in findings { add(finding) }
        text += "\n"
    }

    /// The latest refusal's details, as kept: what to send an IT help desk.
    mutating func addLastRefusal(_ details: String) {
        text += "The last refusal (send these details to your IT help desk)\n"
        for line in details.split(separator: "\n") { text += "  \(line)\n" }
        text += "\n"
    }

    /// The identity broker's section: who serves it, Sesame's latest broker calls.
    mutating func addBroker(_ lines: [DoctorBroker.Line]) {
        text += "Identity broker (com.microsoft.identity.broker1)\n"
        for line in lines { self.line(line.mark, line.subject, line.text) }
        text += "\n"
    }

    /// This computer's identity in an organization (``DoctorDevice``).
    mutating func addDevice(_ lines: [DoctorBroker.Line]) {
        text += "This computer (device identity)\n"
        for line in lines { self.line(line.mark, line.subject, line.text) }
        text += "\n"
    }

    /// `--mail`'s section.
    mutating func addMail(_ lines: [DoctorMail.Line]) {
        text += "Mail\n"
        for line in lines {
            if line.mark == .fix { problems += 1 }
            self.line(line.mark.rawValue, line.subject, line.text)
        }
        text += "\n"
    }

    /// The last line: all OK, or how many lines to fix.
    mutating func finish() {
        text += problems == 0 ? "Everything Sesame checked is OK.\n" : "\(problems) to fix: see the lines marked FIX.\n"
    }

    private mutating func add(_ finding: Diagnosis.Finding) {
        let subject = Self.subject(finding.subject)
        switch finding.outcome {
        case .ok(let detail):
            line("OK ", subject, Self.text(detail))
        case .notChecked(let reason):
            line("-- ", subject, "not checked (\(Self.text(reason)))")
        case .problem(.settingsWarnings(let warnings)):
            for warning in warnings.prefix(CommonOptions.warningsPrintedPerFile) { problem(subject, warning.sentence) }
            if warnings.count > CommonOptions.warningsPrintedPerFile {
                problem(subject, "and \(warnings.count - CommonOptions.warningsPrintedPerFile) more keys Sesame ignores")
            }
        case .problem(let problem):
            self.problem(subject, Self.text(problem, of: finding.subject))
        }
    }

    private mutating func problem(_ subject: String, _ sentence: String) {
        problems += 1
        line("FIX", subject, sentence)
    }

    private mutating func line(_ mark: String, _ subject: String, _ text: String) {
        self.text += "  \(mark)  \(subject): \(text)\n"
    }

    // MARK: Words

    private static func subject(_ subject: Diagnosis.Subject) -> String {
        switch subject {
        case .settings: "settings"
        case .proxy(let host): "proxy for \(host)"
        case .discovery: "discovery"
        case .signingKeys: "signing keys"
        case .certificate(let host): "certificate of \(host)"
        case .endpoint(.authorization): "authorization endpoint"
        case .endpoint(.token): "token endpoint"
        case .endpoint(let role): "\(role.rawValue) endpoint"
        case .clientAuthentication: "client authentication"
        case .clock: "clock"
        case .appRegistration: "app registration"
        case .keyring: "keyring"
        case .tokenStorage: "sign-ins kept in"
        }
    }

    private static func role(_ role: Diagnosis.EndpointRole) -> String {
        switch role {
        case .authorization: "authorization"
        case .token: "token"
        case .discovery: "discovery"
        case .signingKeys: "signing keys"
        case .resource: "API"
        }
    }

    private static func text(_ detail: Diagnosis.Detail) -> String {
        switch detail {
        case .settingsRead: "every key is one Sesame reads"
        case .route(let route, let roles):
            // ProxyRoute prints a proxy's credentials as •••.
            "\(route) (\(roles.map(role).joined(separator: ", ")))"
        case .fetched(let url, let elapsed, let summary): "\(url.redactingQuery) answered in \(milliseconds(elapsed)) ms (\(summary))"
        case .trustedCertificate(let issuer): "trusted, issued by \(issuer)"
        case .plainHTTPOnThisComputer: "none (plain http on this computer)"
        case .endpoint(let url, .settingsFile): "\(url.redactingQuery) (from the settings file)"
        case .endpoint(let url, .discovery): "\(url.redactingQuery) (from discovery)"
        case .clientAuthentication(.none): "none (a public client: PKCE protects the code)"
        case .clientAuthentication(.clientSecretPost): "client_secret_post (the client secret in the token request's form)"
        case .clientAuthentication(.clientSecretBasic): "client_secret_basic (the client secret in HTTP Basic authentication)"
        case .signInPageOpens(let clientID, let redirectURI):
            "the sign-in page opens for client \(clientID) with redirect URI \(redirectURI.redactingQuery)"
        case .clockAgrees(let offset) where abs(offset) <= 2: "agrees with the service's"
        case .clockAgrees(let offset): "\(abs(offset)) s \(offset > 0 ? "behind" : "ahead of") the service's (tokens allow 5 minutes)"
        case .keyring(answers: true): "a Secret Service answers on the session bus"
        case .keyring(answers: false): "no Secret Service answers here (no session bus or keyring daemon)"
        case .storage(.files(let directory)): "files under \(directory), readable by you only"
        case .storage(.secretService(let collection?)): "the Secret Service, collection “\(collection)”"
        case .storage(.secretService(nil)): "the Secret Service's default collection (created at the first sign-in)"
        }
    }

    private static func text(_ reason: Diagnosis.NotChecked) -> String {
        switch reason {
        case .discoveryFailed: "it needs the discovery document, which could not be fetched"
        case .unreachable: "no connection could be made to it: see the lines below"
        case .noDateHeader: "the service's answer has no Date header to compare with"
        case .socksProxy: "Sesame reads certificates through HTTP proxies only; this host's requests go through a SOCKS proxy"
        }
    }

    private static func text(_ problem: Diagnosis.Problem, of subject: Diagnosis.Subject) -> String {
        switch problem {
        case .settingsWarnings(let warnings): warnings.map(\.sentence).joined(separator: " ")
        case .transport(let failure): UserMessage.text(for: failure)
        case .untrustedCertificate(let failure, let issuer?): "issued by \(issuer). " + UserMessage.text(for: failure)
        case .untrustedCertificate(let failure, nil): UserMessage.text(for: failure)
        case .httpStatus(let status, let url): "\(url.redactingQuery) answered HTTP \(status). " + fix(for: subject)
        case .unreadableDocument(let url, let expected): "\(url.redactingQuery) did not answer with \(expected). " + fix(for: subject)
        case .configuration(let error): error.message
        case .clockSkew(let offset): clockSentence(offset)
        case .storage(let reason): reason.prefix(1).uppercased() + reason.dropFirst() + "."
        case .appRegistration(let code, let clientID, let redirectURI):
            registrationSentence(code, clientID: clientID, redirectURI: redirectURI)
        }
    }

    /// What to fix when the sign-in page refuses the app registration.
    static func registrationSentence(_ code: String, clientID: String, redirectURI: URL) -> String {
        switch code {
        case "AADSTS50011":
            "The app registration (client \(clientID)) does not list the redirect URI \(redirectURI.redactingQuery) (\(code)): add it "
                + "in the Microsoft Entra admin center (App registrations → Authentication → Mobile and desktop applications), or "
                + "correct redirectUri in the settings file."
        case "AADSTS700016":
            "No app with client id \(clientID) is registered in this tenant (\(code)): check clientId and the authority's tenant in "
                + "the settings file (an app of another organization needs that tenant's authority, or to be multi-tenant)."
        case "AADSTS50194":
            "This app is registered for one organization only (\(code)): use your tenant's authority "
                + "(https://login.microsoftonline.com/<your tenant>), not /common or /organizations, in the settings file."
        case "AADSTS90002":
            "The authority names a tenant that does not exist (\(code)): check the authority in the settings file."
        default:
            "The sign-in page refuses this app registration (\(code)): see the sentence for \(code) in docs/USER-GUIDE.md."
        }
    }

    /// What to change when a document is not where the settings say.
    private static func fix(for subject: Diagnosis.Subject) -> String {
        switch subject {
        case .discovery: "Check the authority (or discoveryURL) in the settings file."
        default: "The identity service's discovery document names this address; ask its administrator."
        }
    }

    /// The sentence for a clock that is off: by how many minutes, which way, and how to fix it.
    static func clockSentence(_ offsetSeconds: Int) -> String {
        let minutes = max(1, Int((Double(abs(offsetSeconds)) / 60).rounded()))
        let amount = minutes == 1 ? "1 minute" : "\(minutes) minutes"
        let way = offsetSeconds > 0 ? "behind" : "ahead of"
        return "This computer's clock is \(amount) \(way) the service's; tokens will look expired or not yet valid. "
            + "Set the time automatically in Settings → Date & Time."
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }
}
