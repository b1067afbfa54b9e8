import FoundationEssentials
import SesameCore

/// What a person reads when the tenant refused a sign-in or a token: Sesame's sentence (in their
/// language), the one action that helps, and the details for their IT help desk. The window shows
/// it in its error; the command line prints it; the latest is kept in
/// `$XDG_STATE_HOME/sesame/last-refusal.txt` (the details only, never a token) for `sesame doctor`.
public struct RefusalNotice: Sendable, Equatable {
    /// The one thing to do.
    public enum Action: Sendable, Equatable {
        /// Send an administrator this link to approve the app for everyone.
        case approvalLink(URL)
        /// Sign in in the system browser (a managed browser may pass a device rule; a browser
        /// can use a passkey or security key, which the sign-in window cannot yet).
        case continueInBrowser
        /// Register this computer with the organization, then sign in again.
        case registerDevice
        /// Register a second factor here, then sign in again.
        case register(URL)
        /// Sign in again (the page asks what is needed).
        case signInAgain
        /// Wait, then try again.
        case tryAgainLater
        /// Run `sesame doctor`: the settings or the app registration need fixing.
        case runDoctor
        /// Only the help desk can help: send them the details.
        case contactHelpDesk
    }

    /// The refusal.
    public let refusal: TenantRefusal
    /// Sesame's sentence, translated, with the service's code.
    public let sentence: String
    /// The action.
    public let action: Action
    /// What the help desk needs.
    public let details: HelpDeskDetails

    /// The notice for `error`, when it is a tenant's refusal; `configuration` gives the app and
    /// tenant, and the approval link (for `scopes`, the account type's own when empty).
    public init?(_ error: AccountStoreError, configuration: AccountConfiguration?, scopes: [String] = []) {
        guard let refusal = TenantRefusal(error) else { return nil }
        self.init(
            refusal, sentence: UserMessage.text(for: error), details: HelpDeskDetails(error, configuration: configuration),
            configuration: configuration, scopes: scopes)
    }

    /// The notice for a refusal read off a sign-in page's "Troubleshooting details", for the
    /// sign-in that asked `authorizationURL`.
    public init?(page details: HelpDeskDetails, authorizationURL: URL?) {
        guard let refusal = TenantRefusal(serviceCode: details.errorCode, strength: details.authenticationStrength) else { return nil }
        var details = details
        details.tenant = authorizationURL.flatMap(HelpDeskDetails.tenant(of:))
        let sentence =
            refusal == .authenticationStrengthRequired
            ? details.authenticationStrength.map(UserMessage.strengthSentence) ?? ""
            : UserMessage.serviceSentence(for: details.errorCode) ?? ""
        self.init(refusal, sentence: "\(sentence) (\(details.errorCode ?? ""))", details: details, configuration: nil, scopes: [])
    }

    private init(
        _ refusal: TenantRefusal, sentence: String, details: HelpDeskDetails, configuration: AccountConfiguration?, scopes: [String]
    ) {
        self.refusal = refusal
        self.sentence = sentence
        self.details = details
        let link = configuration?.adminConsentURL(scopes: (configuration?.scopes ?? []) + scopes)
        action =
            switch refusal {
            case .consentMissing, .adminApprovalRequired, .adminApprovalRequestable: link.map(Action.approvalLink) ?? .contactHelpDesk
            case .deviceNotManaged: .continueInBrowser
            case .deviceNotRegistered: .registerDevice
            case .multiFactorRegistration: .register(TenantRefusal.multiFactorRegistrationURL)
            case .multiFactorRequired, .passwordExpired: .signInAgain
            // The sign-in window meets the MFA strength; a passkey needs the system browser for now.
            case .authenticationStrengthRequired where details.authenticationStrength?.embeddedViewCanMeet == true: .signInAgain
            case .authenticationStrengthRequired: .continueInBrowser
            case .accountLocked: .tryAgainLater
            case .appNotInTenant, .redirectURINotRegistered: .runDoctor
            case .userFromOtherTenant: .signInAgain
            case .publicClientFlowsDisabled: .signInAgain
            case .blockedByPolicy, .accountDisabled: .contactHelpDesk
            }
    }

    /// The notice as the command line prints it (after `sesame: `).
    public var commandLineText: String {
        var lines = [sentence]
        switch action {
        case .approvalLink(let url):
            lines.append("Send your IT administrator this link to approve the app for everyone: \(url.absoluteString)")
        case .continueInBrowser where refusal == .authenticationStrengthRequired:
            lines.append(
                "Sign in with your browser: `sesame login` without --device-code, or Continue in your browser in the window; "
                    + "or on another device with your passkey: `sesame login --device-code`.")
        case .continueInBrowser:
            lines.append("Sign in with your browser: `sesame login` without --device-code, or Continue in your browser in the window.")
        case .register(let url): lines.append("Register a second way to sign in: \(url.absoluteString)")
        case .registerDevice: lines.append("Register this computer with your organization: `sesame device register`.")
        case .runDoctor: lines.append("Run `sesame doctor` for what to fix.")
        case .signInAgain, .tryAgainLater, .contactHelpDesk: break
        }
        if !details.isEmpty {
            lines.append("Details for your IT help desk:")
            lines += details.text.split(separator: "\n").map { "  \($0)" }
        }
        return lines.joined(separator: "\n")
    }

    // MARK: The latest, for `sesame doctor`

    /// Where the latest refusal's details are kept.
    public static func file(environment: [String: String]) -> URL {
        WindowState.defaultFile(environment: environment).deletingLastPathComponent().appending(path: "last-refusal.txt")
    }

    /// Keeps this refusal's details (and when) as the latest; failures to write are ignored.
    public func record(environment: [String: String], now: Date = Date()) {
        let file = Self.file(environment: environment)
        try? FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        let text = "Recorded: \(now.formatted(.iso8601))\n\(details.text)\n"
        try? Data(text.utf8).write(to: file, options: .atomic)
    }

    /// The latest refusal's details, as kept (bounded; nil when none).
    public static func latest(environment: [String: String]) -> String? {
        guard let data = FileManager.default.contents(atPath: file(environment: environment).path), data.count <= 4096 else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        let details = HelpDeskDetails(troubleshooting: text)
        guard !details.isEmpty else { return nil }
        let recorded = text.split(separator: "\n").first { $0.hasPrefix("Recorded: ") }.map(String.init)
        return ([recorded].compactMap { $0 } + [details.text]).joined(separator: "\n")
    }
}
