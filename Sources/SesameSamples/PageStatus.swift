import FoundationEssentials
import SesameWindowModel

/// What a sample's page says when it has nothing to show — nobody signed in, nothing yet, or a
/// failure — in place of its list (GNOME's status page: a title, a sentence, and at most one
/// action, the one that helps).
public struct PageStatus: Equatable, Sendable {
    /// Why the page has nothing to show.
    public enum Kind: Equatable, Sendable {
        /// Nobody is signed in for the sample.
        case signedOut
        /// Signed in, and there is nothing (yet): no one matches, no tasks, no call made.
        case nothingYet
        /// Reading failed; the action retries or signs in again.
        case failed
        /// A sign-in is under way and step-through holds its next step until the presenter's
        /// Next: the whole page says so, and offers no sign-in (one is under way).
        case signingIn
        /// The stored sign-ins cannot be read (a locked keyring…): the whole page, as signed out,
        /// and no sign-in offered.
        case signInsUnreadable
    }

    /// What the page's one button does.
    public enum Action: Equatable, Sendable {
        /// Signs in (again), or retries (``SampleAction``).
        case sample(SampleAction)
        /// Shows everyone again (the directory's search emptied).
        case showEveryone
        /// Calls the API (the console's button).
        case call(String)
        /// Reads the stored sign-ins again, after the keyring's unlock prompt when `unlock`.
        case readSignIns(unlock: Bool)

        /// The button's label.
        public var title: String {
            switch self {
            case .sample(let action): action.title
            case .showEveryone: L("Show everyone")
            case .call(let title): title
            case .readSignIns(let unlock): unlock ? L("Unlock…") : L("Try Again")
            }
        }
    }

    /// Why there is nothing to show.
    public var kind: Kind
    /// The heading, a few words.
    public var title: String
    /// One or two sentences: what the page is for, or what went wrong and what to do.
    public var description: String
    /// The one action, if the page offers one here (typing is the action of "no tasks yet").
    public var action: Action?
    /// For a failure the page reads again by itself: the whole seconds before it does.
    public var retryingIn: Int?

    /// A status; see each property.
    public init(_ kind: Kind, title: String, description: String, action: Action?, retryingIn: Int? = nil) {
        self.kind = kind
        self.title = title
        self.description = description
        self.action = action
        self.retryingIn = retryingIn
    }

    /// Whether it takes the whole page (nobody signed in, or nobody can tell), not the list's place.
    public var coversPage: Bool { kind == .signedOut || kind == .signingIn || kind == .signInsUnreadable }

    /// What the page says of its retry: "Trying again in 8 s", or nil.
    public var retryText: String? {
        retryingIn.map { String(formatting: L("Trying again in %d s"), $0) }
    }
}
