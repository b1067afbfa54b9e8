import FoundationEssentials

/// The sign-in view's state, one value: whether a sign-in is under way and what its pages did —
/// the load in progress failed, a cancelled load was already tried again, a page could not be
/// reached, the redirect came, the last navigation let through, Sesame's own page in place of one
/// that never loaded. Each event of the web view (WebKit's `load-changed`, `load-failed`, the
/// navigation policy) or of the window returns what the view must do; the view only does it.
/// Tested without GTK, every event in every state.
public struct SignInViewState: Sendable, Equatable {
    /// A failed load, as WebKit reported it.
    public enum LoadFailure: Sendable, Equatable {
        /// Not a failure the user should see: the view's own `ignore` of the redirect, or a page
        /// replaced by a newer navigation.
        case interrupted
        /// Cancelled though nobody cancelled it (GIO's "Operation was cancelled"): WebKit's
        /// network process does that on a refused TLS handshake; a second load says why.
        case cancelled
        /// Anything else: the page cannot be reached.
        case unreachable
    }

    /// What the view does.
    public enum Action: Sendable, Equatable {
        /// Loads the session's authorization page.
        case loadAuthorizationPage
        /// Loads Sesame's own page that says the sign-in waits for Next (``SignInWaitText``), at
        /// `about:blank`, in place of whatever page the view showed.
        case showWaitingPage
        /// Loads `url` again (a cancelled load, once).
        case retry(URL)
        /// A page is on screen (not a failed load's end): record it, read its troubleshooting details.
        case pageShown(URL)
        /// Shows "Can't reach" for `url` in its place, and says the sign-in is in trouble.
        case showUnreachable(URL?)
        /// The host bar names the page's host — with its encryption, or none for Sesame's own page.
        case updateHostBar(ownPage: Bool)
        /// The network is back: loads `url` (the unreachable page, or the authorization page when a
        /// form was being sent to it: a browser would send it again).
        case reload(URL)
        /// A load ended (a page shown, or a failure's).
        case loadFinished
    }

    /// One sign-in's progress.
    public struct SignIn: Sendable, Equatable {
        /// The authorization page it began at (where the sign-in starts over).
        public var authorizationURL: URL
        /// The redirect to the app came (and was intercepted).
        public var redirectCame = false
        /// A cancelled load was already tried again (once per sign-in).
        public var retriedAfterCancellation = false
        /// The page that could not be reached, until another loads: what to load when the network is back.
        public var unreachablePage: URL?
        /// The last navigation the view let through, and its method (``lastMethod``).
        public var lastNavigation: URL?
        public var lastMethod = "GET"

        /// A sign-in that began at `authorizationURL`, nothing done yet.
        public init(authorizationURL: URL) { self.authorizationURL = authorizationURL }
    }

    /// The sign-in under way, if any.
    public private(set) var signIn: SignIn?
    /// The load in progress failed or was interrupted (its end is no page shown).
    public private(set) var currentLoadFailed = false
    /// Sesame's own page was asked for in place of a failed load, and is not committed yet.
    public private(set) var ownPagePending = false
    /// The page on screen is Sesame's own, in place of one that never loaded.
    public private(set) var showingOwnPage = false

    /// Sesame's waiting page, in step-through: asked for, then committed (the view shows it);
    /// once it has loaded, the authorization page is asked for (and waits for Next).
    public enum WaitingPage: Sendable, Equatable {
        case asked
        case committed
    }

    /// Sesame's waiting page, until the authorization page is asked for after it.
    public private(set) var waitingPage: WaitingPage?

    /// The address Sesame's waiting page loads at.
    public static let waitingPageAddress = URL(string: "about:blank")!

    public init() {}

    /// A sign-in begins: its authorization page loads — or, when the presenter steps through
    /// the flow (`stepping`), Sesame's waiting page first: the authorization request will wait
    /// for Next, and the page the view showed (a cancelled sign-in's form) must not stay live
    /// meanwhile, or what the presenter types would be sent from it.
    public mutating func begin(at authorizationURL: URL, stepping: Bool = false) -> [Action] {
        signIn = SignIn(authorizationURL: authorizationURL)
        guard stepping else {
            waitingPage = nil
            return [.loadAuthorizationPage]
        }
        waitingPage = .asked
        return [.showWaitingPage]
    }

    /// The sign-in ended (the view stops loading; it may stay on screen).
    public mutating func end() {
        signIn = nil
        waitingPage = nil
    }

    /// Whether a navigation to `url` is Sesame's waiting page being loaded (the view lets it
    /// through at once: it is no step of the flow).
    public func isWaitingPageLoad(_ url: URL?) -> Bool {
        waitingPage == .asked && url == Self.waitingPageAddress
    }

    /// The policy let a navigation through (`navigation` true; a response is not one).
    public mutating func shown(_ url: URL?, method: String, navigation: Bool) {
        guard var signIn else { return }
        if url != signIn.unreachablePage { signIn.unreachablePage = nil }
        if navigation, let url {
            signIn.lastNavigation = url
            signIn.lastMethod = method
        }
        self.signIn = signIn
    }

    /// The policy intercepted this sign-in's redirect.
    public mutating func redirectIntercepted() {
        signIn?.redirectCame = true
    }

    /// A load started.
    public mutating func loadStarted() {
        currentLoadFailed = false
    }

    /// A load committed: the page on screen now is Sesame's own when one was just asked for.
    public mutating func loadCommitted() -> [Action] {
        if waitingPage == .asked, !currentLoadFailed { waitingPage = .committed }
        showingOwnPage = ownPagePending
        ownPagePending = false
        return [.updateHostBar(ownPage: showingOwnPage)]
    }

    /// A load finished, at `url` (WebKit ends a failed or interrupted load so too: no page shown).
    public mutating func loadFinished(at url: URL?) -> [Action] {
        guard !currentLoadFailed, let url else { return [.loadFinished] }
        if waitingPage == .committed, url == Self.waitingPageAddress {
            // The waiting page is on screen: the authorization request may go and wait now.
            waitingPage = nil
            return signIn == nil ? [.loadFinished] : [.loadAuthorizationPage, .loadFinished]
        }
        return [.pageShown(url), .loadFinished]
    }

    /// A load of `url` failed.
    public mutating func loadFailed(_ url: URL?, _ failure: LoadFailure) -> [Action] {
        currentLoadFailed = true
        if waitingPage != nil, url == Self.waitingPageAddress {
            // Sesame's waiting page did not load (nothing of the network's): the sign-in goes on
            // without it rather than not at all.
            waitingPage = nil
            return signIn == nil ? [] : [.loadAuthorizationPage]
        }
        switch failure {
        case .interrupted:
            return []
        case .cancelled where signIn?.retriedAfterCancellation == false:
            signIn?.retriedAfterCancellation = true
            if let url { return [.retry(url)] }
        case .cancelled, .unreachable:
            break
        }
        signIn?.unreachablePage = url
        ownPagePending = true
        return [.showUnreachable(url)]
    }

    /// A page's certificate was refused: Sesame's own page says why, in its place.
    public mutating func certificateRefused() {
        currentLoadFailed = true
        ownPagePending = true
    }

    /// Sesame's own page is asked for in place of a page the policy refused (not encrypted).
    public mutating func ownPageAsked() {
        ownPagePending = true
    }

    /// The network is back: the unreachable page loads again — or, when a form was being sent
    /// to it (a browser would send it again), the sign-in starts over at its first page.
    public mutating func networkReturned() -> [Action] {
        guard var signIn, let page = signIn.unreachablePage else { return [] }
        signIn.unreachablePage = nil
        self.signIn = signIn
        let resend = signIn.lastNavigation == page && signIn.lastMethod.uppercased() != "GET"
        return [.reload(resend ? signIn.authorizationURL : page)]
    }
}
