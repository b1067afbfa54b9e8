import FoundationEssentials

/// What the window says while step-through holds a sign-in (the presenter has not pressed Next
/// yet): the sign-in view's own waiting page, and — while a step of a sign-in waits, such as the
/// token request after the redirect — the sample's page and the header, which would otherwise
/// say nobody is signed in and offer a sign-in that is already under way.
public struct SignInWaitText: Sendable, Equatable {
    /// A sample's sign-in is under way.
    public var signingIn: Bool
    /// A step of the flow waits for the presenter's Next.
    public var stepWaits: Bool

    /// The sign-in's state as the window knows it; see each property.
    public init(signingIn: Bool, stepWaits: Bool) {
        self.signingIn = signingIn
        self.stepWaits = stepWaits
    }

    /// Whether the sign-in waits for Next (the page and the header say so).
    public var waitsForNext: Bool { signingIn && stepWaits }

    /// What the header's account button says when nobody is signed in yet.
    public var header: String { waitsForNext ? Self.title : L("Not signed in") }

    /// The heading of the sample's page, of the header and of the sign-in view's waiting page.
    public static var title: String { L("Signing in — waiting for Next") }

    /// The sentence under the sample page's heading.
    public static var pageDescription: String {
        L("Step-through holds the sign-in’s next step until you press Next in the flow inspector.")
    }

    /// The sentence of the sign-in view's waiting page, while the authorization request waits.
    public static var authorizationWaits: String {
        L("The request for the sign-in page waits until you press Next in the flow inspector; the page comes then.")
    }
}
