import FoundationEssentials
import SesameSystem

/// What a user agent is about to do, as its engine asks (WebKit's `decide-policy`): go
/// somewhere, open a new window, or take a response. The agent asks its ``SignInSession`` what
/// to do with it (``SignInSession/decide(_:)``) and does only that.
public struct Navigation: Sendable, Hashable {
    /// What is asked.
    public enum Kind: Sendable, Hashable {
        /// The page is about to navigate the view (a link, a form, a server's redirect, script).
        case navigation
        /// The page asks for a new window (a pop-up, `target=_blank`).
        case newWindow
        /// A response arrived: shown, or saved to disk (``Navigation/isDownload``).
        case response
    }

    /// What is asked.
    public var kind: Kind
    /// Where the navigation goes (or where the response came from), as the engine reports it.
    public var address: String?
    /// The request's HTTP method (`GET`, or `POST` for a form).
    public var method: String
    /// For a response: it would be saved rather than shown.
    public var isDownload: Bool

    /// A navigation; see each property.
    public init(kind: Kind, address: String?, method: String = "GET", isDownload: Bool = false) {
        self.kind = kind
        self.address = address
        self.method = method
        self.isDownload = isDownload
    }
}

/// What a user agent does with a ``Navigation``: the whole policy of an interactive sign-in's
/// browser, decided in the Core.
public enum NavigationDecision: Sendable, Hashable {
    /// The session's redirect: do not load it; the session has its answer.
    case intercept
    /// A redirect to the session's URI with another request's `state` (or none): a page of the
    /// flow navigated there itself, or an old answer. Do not load it; the sign-in goes on.
    case ignoreForeignAnswer
    /// Do not go there (nothing of it is loaded or saved).
    case refuse(NavigationRefusal)
    /// Let it load: a page of the sign-in (its kind, for showing the flow).
    case show(NavigationClassifier.Kind)
}

/// Why a sign-in's browser does not go somewhere.
public enum NavigationRefusal: String, Sendable, Hashable {
    /// An address that does not parse.
    case unparseableAddress = "unparseable address"
    /// Plain `http` to another computer: sign-in pages load only over HTTPS (plain `http` only
    /// on this computer, the local emulator's).
    case unencrypted
    /// A scheme no sign-in page uses: `file:`, `data:`, `javascript:`, a custom scheme that is
    /// not the redirect, `about:` other than `about:blank`.
    case scheme
    /// A new window: it would replace the sign-in page under the user's hand.
    case popup
    /// A download: nothing is saved to the user's disk from a sign-in page.
    case download
}

extension NavigationDecision {
    /// The policy for a navigation of no sign-in (or of one that ended): the same rules, and
    /// nothing is a redirect to intercept.
    public static func forNavigation(_ navigation: Navigation, classifier: NavigationClassifier?) -> NavigationDecision {
        switch navigation.kind {
        case .response:
            return navigation.isDownload ? .refuse(.download) : .show(.other)
        case .navigation, .newWindow:
            guard let address = navigation.address, let url = URL(string: address), url.scheme != nil else {
                return .refuse(.unparseableAddress)
            }
            if let refusal = refusal(of: url) { return .refuse(refusal) }
            if navigation.kind == .newWindow { return .refuse(.popup) }
            return .show(classifier?.classify(url) ?? .other)
        }
    }

    /// Why a sign-in's browser does not go to `url`, if it does not: only `https:` pages load,
    /// `http:` only on this computer, and `about:blank`.
    static func refusal(of url: URL) -> NavigationRefusal? {
        switch url.scheme?.lowercased() {
        case "https": nil
        case "http": url.isLoopback ? nil : .unencrypted
        case "about": url.absoluteString == "about:blank" ? nil : .scheme
        default: .scheme
        }
    }
}
