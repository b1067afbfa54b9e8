import Foundation
import SesameWindowModel
import Testing

/// The sign-in view's state machine, without GTK: every event in every state, and what the view
/// must do — what a user sees (a page, "Can't reach", the page again when the network returns).
@Suite("The sign-in view's state: every event in every state")
struct SignInViewStateTests {
    static let authorize = URL(string: "https://login.example/contoso/oauth2/v2.0/authorize?client_id=app")!
    static let login = URL(string: "https://login.example/contoso/login")!
    static let mfa = URL(string: "https://login.example/contoso/mfa")!

    /// The states the view can be in, each reached by the events that lead there.
    static func states() -> [(name: String, state: SignInViewState)] {
        var idle = SignInViewState()
        idle.loadStarted()

        var fresh = SignInViewState()
        _ = fresh.begin(at: authorize)

        var onAPage = fresh
        onAPage.shown(authorize, method: "GET", navigation: true)
        onAPage.loadStarted()
        _ = onAPage.loadCommitted()
        _ = onAPage.loadFinished(at: authorize)

        // The password form was sent to a host that did not answer: "Can't reach" in its place.
        var unreachableAfterAForm = onAPage
        unreachableAfterAForm.shown(login, method: "POST", navigation: true)
        unreachableAfterAForm.loadStarted()
        _ = unreachableAfterAForm.loadFailed(login, .unreachable)

        // A page (fetched with GET) did not answer.
        var unreachablePage = onAPage
        unreachablePage.shown(mfa, method: "GET", navigation: true)
        unreachablePage.loadStarted()
        _ = unreachablePage.loadFailed(mfa, .unreachable)

        var retriedOnce = onAPage
        retriedOnce.loadStarted()
        _ = retriedOnce.loadFailed(mfa, .cancelled)

        var answered = onAPage
        answered.redirectIntercepted()
        return [
            ("idle", idle), ("fresh", fresh), ("on a page", onAPage), ("unreachable after a form", unreachableAfterAForm),
            ("unreachable page", unreachablePage), ("retried once", retriedOnce), ("answered", answered),
        ]
    }

    @Test("begin: in every state, a new sign-in at its authorization page, nothing of the last one kept")
    func begin() {
        for (name, start) in Self.states() {
            var state = start
            #expect(state.begin(at: Self.authorize) == [.loadAuthorizationPage], "\(name)")
            #expect(state.signIn == SignInViewState.SignIn(authorizationURL: Self.authorize), "\(name)")
        }
    }

    @Test(
        "begin in step-through: in every state, Sesame's waiting page first (it loads untraced), the authorization page once it shows"
    )
    func beginStepping() {
        let blank = SignInViewState.waitingPageAddress
        for (name, start) in Self.states() {
            var state = start
            #expect(state.begin(at: Self.authorize, stepping: true) == [.showWaitingPage], "\(name)")
            #expect(state.isWaitingPageLoad(blank), "\(name)")
            #expect(!state.isWaitingPageLoad(Self.login), "\(name)")
            // The page it replaces was still loading: its end is no reason to go on.
            state.loadStarted()
            #expect(state.loadFailed(Self.login, .interrupted) == [], "\(name)")
            #expect(state.loadFinished(at: Self.login) == [.loadFinished], "\(name)")
            state.loadStarted()
            _ = state.loadCommitted()
            #expect(!state.isWaitingPageLoad(blank), "\(name): committed")
            #expect(state.loadFinished(at: blank) == [.loadAuthorizationPage, .loadFinished], "\(name)")
            #expect(state.waitingPage == nil, "\(name)")
            // The authorization page is a page like any other.
            state.loadStarted()
            _ = state.loadCommitted()
            #expect(state.loadFinished(at: Self.authorize) == [.pageShown(Self.authorize), .loadFinished], "\(name)")
        }
    }

    @Test("the waiting page: a sign-in that ends meanwhile asks for nothing; a waiting page that fails to load gives way")
    func waitingPageEndsOrFails() {
        let blank = SignInViewState.waitingPageAddress
        var ended = SignInViewState()
        _ = ended.begin(at: Self.authorize, stepping: true)
        ended.loadStarted()
        _ = ended.loadCommitted()
        ended.end()
        #expect(ended.loadFinished(at: blank) == [.pageShown(blank), .loadFinished])
        #expect(!ended.isWaitingPageLoad(blank))

        var failed = SignInViewState()
        _ = failed.begin(at: Self.authorize, stepping: true)
        failed.loadStarted()
        #expect(failed.loadFailed(blank, .unreachable) == [.loadAuthorizationPage])
        #expect(failed.waitingPage == nil)
    }

    @Test("end: in every state, no sign-in; the network's return then loads nothing")
    func end() {
        for (name, start) in Self.states() {
            var state = start
            state.end()
            #expect(state.signIn == nil, "\(name)")
            #expect(state.networkReturned() == [], "\(name)")
            #expect(!state.signIn.map(\.redirectCame).isTrue, "\(name)")
        }
    }

    @Test("the network returns: the unreachable page loads again, or the sign-in starts over after a form; else nothing")
    func networkReturned() {
        let expected: [String: [SignInViewState.Action]] = [
            "unreachable after a form": [.reload(Self.authorize)],  // the form is not sent twice
            "unreachable page": [.reload(Self.mfa)],
        ]
        for (name, start) in Self.states() {
            var state = start
            #expect(state.networkReturned() == expected[name, default: []], "\(name)")
            // Once: the page is no longer unreachable until it fails again.
            #expect(state.networkReturned() == [], "\(name)")
        }
    }

    @Test("a navigation shown: another page leaves the unreachable one behind; a response changes nothing")
    func shown() {
        for (name, start) in Self.states() {
            var state = start
            state.shown(Self.mfa, method: "GET", navigation: false)
            // A response is no navigation: the last navigation stays what it was.
            #expect(state.signIn?.lastNavigation == start.signIn?.lastNavigation, "\(name)")
            var moved = start
            moved.shown(Self.login, method: "GET", navigation: true)
            #expect(moved.signIn?.unreachablePage == (start.signIn?.unreachablePage == Self.login ? Self.login : nil), "\(name)")
            #expect(moved.signIn.map { $0.lastNavigation == Self.login && $0.lastMethod == "GET" } ?? true, "\(name)")
            #expect(moved.networkReturned() == (start.signIn?.unreachablePage == Self.login ? [.reload(Self.login)] : []), "\(name)")
        }
    }

    @Test("the redirect intercepted: the sign-in was answered (no sign-in: nothing)")
    func redirectIntercepted() {
        for (name, start) in Self.states() {
            var state = start
            state.redirectIntercepted()
            #expect(state.signIn?.redirectCame == (start.signIn != nil ? true : nil), "\(name)")
        }
    }

    @Test("a load finishing: a page shown unless it failed; the view always hears the load ended")
    func loadFinished() {
        for (name, start) in Self.states() {
            var state = start
            let failed = start.currentLoadFailed
            #expect(state.loadFinished(at: Self.mfa) == (failed ? [.loadFinished] : [.pageShown(Self.mfa), .loadFinished]), "\(name)")
            #expect(state.loadFinished(at: nil) == [.loadFinished], "\(name)")
            // A new load starts clean: its end is a page.
            state.loadStarted()
            #expect(state.loadFinished(at: Self.mfa) == [.pageShown(Self.mfa), .loadFinished], "\(name)")
        }
    }

    @Test("a load failing: interrupted is nothing; cancelled is retried once per sign-in; else Can't reach, then Sesame's page")
    func loadFailed() {
        for (name, start) in Self.states() {
            var interrupted = start
            #expect(interrupted.loadFailed(Self.mfa, .interrupted) == [], "\(name)")
            #expect(interrupted.loadFinished(at: Self.mfa) == [.loadFinished], "\(name): an interrupted load showed a page")

            var cancelled = start
            let retries = start.signIn.map { !$0.retriedAfterCancellation } ?? false
            #expect(cancelled.loadFailed(Self.mfa, .cancelled) == (retries ? [.retry(Self.mfa)] : [.showUnreachable(Self.mfa)]), "\(name)")
            #expect(cancelled.loadFailed(Self.mfa, .cancelled) == [.showUnreachable(Self.mfa)], "\(name): retried twice")

            var unreachable = start
            #expect(unreachable.loadFailed(Self.login, .unreachable) == [.showUnreachable(Self.login)], "\(name)")
            #expect(unreachable.ownPagePending, "\(name)")
            #expect(unreachable.loadCommitted() == [.updateHostBar(ownPage: true)], "\(name)")
            #expect(unreachable.loadCommitted() == [.updateHostBar(ownPage: false)], "\(name): the next page is the service's")
            #expect(unreachable.signIn?.unreachablePage == (start.signIn != nil ? Self.login : nil), "\(name)")
        }
    }

    @Test("a refused certificate and a refused unencrypted page: Sesame's page, the host bar without encryption")
    func ownPages() {
        for (name, start) in Self.states() {
            var certificate = start
            certificate.certificateRefused()
            #expect(certificate.loadFinished(at: Self.mfa) == [.loadFinished], "\(name): a refused certificate showed a page")
            #expect(certificate.loadCommitted() == [.updateHostBar(ownPage: true)], "\(name)")
            var unencrypted = start
            unencrypted.ownPageAsked()
            #expect(unencrypted.loadCommitted() == [.updateHostBar(ownPage: true)], "\(name)")
            #expect(unencrypted.signIn == start.signIn, "\(name): the sign-in changed")
        }
    }

    @Test("a load starting and committing: the failure of the last load forgotten; the service's own page named")
    func loadStartedAndCommitted() {
        for (name, start) in Self.states() {
            var state = start
            state.loadStarted()
            #expect(!state.currentLoadFailed, "\(name)")
            #expect(state.loadCommitted() == [.updateHostBar(ownPage: start.ownPagePending)], "\(name)")
            #expect(!state.ownPagePending, "\(name)")
        }
    }
}

extension Bool? {
    fileprivate var isTrue: Bool { self == true }
}
