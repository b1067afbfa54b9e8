import FoundationEssentials
import SesameCore
import SesameWindowModel

/// One of the seeds' samples, by its settings' shape.
public struct Sample: Sendable {
    /// Which tutorial a sample is.
    public enum Kind: String, Sendable, CaseIterable {
        /// The v2.0 sample: the organisation's directory.
        case directory
        /// The B2C sample: a per-user task list.
        case tasks
        /// The MSAL sample: a Graph `/me` console.
        case me
        /// Any OpenID Connect provider: the same console over the provider's userinfo endpoint.
        case openID = "openid"

        /// Whether showing the sample with nobody signed in starts a sign-in (the directory
        /// and the task list do; the console waits for "Call Microsoft Graph").
        public var signsInWhenShown: Bool { self != .me && self != .openID }
    }

    /// Which tutorial.
    public let kind: Kind
    /// Its settings.
    public let settings: SampleSettings

    /// The account type it signs in with.
    public var accountType: String { settings.accountType }
    /// Which user agent the sample's sign-in uses first (`signInWith`).
    public var signInWith: SignInMethod { settings.signInWith }

    /// The sample's name in the window.
    public var title: String {
        switch kind {
        case .directory: L("Directory")
        case .tasks: L("Tasks")
        case .me: L("Me")
        case .openID: L("OpenID")
        }
    }

    /// The sample a settings file describes.
    public init(settings: SampleSettings) {
        self.settings = settings
        switch settings {
        case .graph: kind = .directory
        case .b2c: kind = .tasks
        case .msal: kind = .me
        case .openID: kind = .openID
        }
    }
}
