import Foundation
import SesameCore
import SesameCoreTestSupport
import SesameSamples
import SesameTestSupport
import SesameWindowModel
import Synchronization
import Testing

@MainActor
@Suite("The Directory page's model")
struct DirectorySearchTests {
    @Test("appearing signs nobody in: the page says what it is for and offers Sign in")
    func appearingAsksNobody() async throws {
        let fixture = try await SamplesFixture()
        defer { fixture.remove() }
        let search = DirectorySearch(session: fixture.session(.directory))
        await search.appear()
        #expect(fixture.agent.presented.isEmpty, "a page that appears opened a sign-in by itself")
        #expect(search.pageStatus?.kind == .signedOut)
        #expect(search.pageStatus?.title == "Sign in to search your organisation")
        #expect(search.pageStatus?.action == .sample(.signIn))
        await search.perform(try #require(search.pageStatus?.action))
        try await until { search.status != .searching }
        #expect(fixture.agent.presented.count == 1)
        #expect(search.pageStatus == nil)
    }

    @Test("signing in lists the first page; scrolling to the end appends the next")
    func appearAndPage() async throws {
        let fixture = try await SamplesFixture()
        defer { fixture.remove() }
        let search = DirectorySearch(session: fixture.session(.directory))
        var changes: [DirectorySearch.Change] = []
        search.onChange = { changes.append($0) }
        await search.signIn()
        try await until { search.status != .searching }
        #expect(fixture.agent.presented.count == 1)
        #expect(search.users.count == 50)
        #expect(search.status == .found(count: 50, more: true))
        #expect(search.statusText == "People found: 50 — scroll for more")
        search.loadMore()
        try await until { search.users.count == 100 }
        #expect(changes.contains(.appended(50..<100)))
        #expect(Set(search.users.map(\.id)).count == 100, "the second page repeats people")
        #expect(fixture.events("token-acquired").count == 1)
    }

    @Test("a slow answer to an older search never replaces a newer one")
    func staleAnswersAreDropped() async throws {
        let fixture = try await SamplesFixture()
        defer { fixture.remove() }
        let search = DirectorySearch(session: fixture.session(.directory))
        await search.signIn()
        try await until { search.status != .searching }
        fixture.apis.hold("Person")
        search.search("Person")
        try await until { fixture.apis.isHolding("Person") }
        search.search("meg")
        try await until { search.status != .searching }
        #expect(search.users.map(\.displayName) == ["Megan Bowen", "Megan Carter", "Meg Ryan"])
        // The older answer arrives now, and is dropped.
        fixture.apis.release("Person")
        try await until { fixture.transportRequests().filter { $0.url.host == "graph.microsoft.com" }.count == 3 }
        for _ in 0..<20 { await Task.yield() }
        #expect(search.users.map(\.displayName) == ["Megan Bowen", "Megan Carter", "Meg Ryan"])
        #expect(search.status == .found(count: 3, more: false))
    }

    @Test("a failed search says why and Retry searches again; no one found says so")
    func failureAndRetry() async throws {
        let fixture = try await SamplesFixture()
        defer { fixture.remove() }
        let search = DirectorySearch(session: fixture.session(.directory))
        await search.signIn()
        try await until { search.status != .searching }
        #expect(!search.users.isEmpty, "everyone was listed first")
        fixture.apis.failNext(with: 503)
        search.search("meg")
        try await until { search.status != .searching }
        #expect(search.users.isEmpty, "the rows of the earlier search stayed under the failed one's error")
        #expect(search.pageStatus?.kind == .failed)
        #expect(search.pageStatus?.action == .sample(.retry))
        guard case .failed(let message, _) = search.status else {
            Issue.record("not failed: \(search.status)")
            return
        }
        // The user's sentence with Graph's status and code, not Graph's own English.
        #expect(message == L("Microsoft Graph is not available right now; try again later.") + " (HTTP 503, ServiceUnavailable)")
        search.retry()
        try await until { search.status != .searching }
        #expect(search.users.count == 3)
        search.search("zzzq")
        try await until { search.status != .searching }
        #expect(search.status == .noMatches)
        #expect(search.statusText == "No one matches.")
        #expect(search.pageStatus?.kind == .nothingYet)
        #expect(search.pageStatus?.action == .showEveryone)
        await search.perform(.showEveryone)
        try await until { search.status != .searching }
        #expect(search.users.count == 50, "Show everyone lists everyone again")
    }

    @Test("a search the service refused runs again by itself, backed off, and recovers with no press")
    func recoversByItself() async throws {
        let fixture = try await SamplesFixture()
        defer { fixture.remove() }
        let search = DirectorySearch(session: fixture.session(.directory))
        search.retrying.delays = [.milliseconds(20), .milliseconds(40)]
        await search.signIn()
        try await until { search.status != .searching }
        let before = fixture.transportRequests().filter { $0.url.host == "graph.microsoft.com" }.count
        fixture.apis.failNext(3, with: 503)
        search.search("meg")
        try await until { search.users.count == 3 }
        #expect(search.status == .found(count: 3, more: false))
        #expect(
            fixture.transportRequests().filter { $0.url.host == "graph.microsoft.com" }.count - before == 4, "3 refusals, then the answer")
        search.close()
    }

    @Test("the failure says when the page tries again, counting down each second the clock moves, then tries")
    func countsDown() async throws {
        let fixture = try await SamplesFixture()
        defer { fixture.remove() }
        let search = DirectorySearch(session: fixture.session(.directory))
        let clock = SteppedSleep()
        search.retrying.delays = [.seconds(3)]
        search.retrying.sleep = clock.sleep
        await search.signIn()
        try await until { search.status != .searching }
        fixture.apis.failNext(1, with: 503)
        search.search("meg")
        try await until { search.pageStatus?.kind == .failed }
        #expect(search.pageStatus?.retryingIn == 3)
        #expect(search.pageStatus?.retryText == String(formatting: L("Trying again in %d s"), 3))
        clock.pass()
        try await until { search.pageStatus?.retryingIn == 2 }
        clock.pass()
        try await until { search.pageStatus?.retryingIn == 1 }
        #expect(search.status != .searching, "it tried before its time")
        clock.pass()
        try await until { search.users.count == 3 }
        #expect(search.pageStatus == nil)
        search.close()
    }

    @Test("signing out empties the list, offers Sign in, and the next sign-in asks who signs in")
    func signOut() async throws {
        let fixture = try await SamplesFixture()
        defer { fixture.remove() }
        let session = fixture.session(.directory)
        let search = DirectorySearch(session: session)
        await search.signIn()
        try await until { search.status != .searching }
        await search.signOut()
        #expect(search.users.isEmpty)
        #expect(search.status == .signedOutByUser)
        #expect(!search.isSignedIn)
        #expect(fixture.events("signed-out").count == 1)
        #expect(try await fixture.model.store.accounts(ofType: "myGraphService").isEmpty)
        await search.signIn()
        try await until { search.status != .searching }
        let second = try #require(fixture.agent.presented.last)
        #expect(
            URLComponents(url: second.authorizationURL, resolvingAgainstBaseURL: false)?.queryItems?.contains {
                $0.name == "prompt" && $0.value == "login"
            } == true)
        #expect(search.users.count == 50)
    }

    @Test("closing the sign-in leaves the page signed out, offering Sign in; nothing is searched")
    func closedSignIn() async throws {
        let fixture = try await SamplesFixture()
        defer { fixture.remove() }
        let search = DirectorySearch(session: fixture.session(.directory, agent: FakeUserAgent { _, _ in [.close] }))
        await search.signIn()
        #expect(search.status == .signedOut)
        #expect(!search.isSignedIn)
        #expect(fixture.transportRequests().allSatisfy { $0.url.host != "graph.microsoft.com" })
        try await until { fixture.events("sign-in-cancelled").count == 1 }
    }

    @Test("Sign in pressed the moment sign-in is closed (its task still ending) opens sign-in again")
    func signInRightAfterClosing() async throws {
        @MainActor final class Page { var search: DirectorySearch? }
        let fixture = try await SamplesFixture()
        defer { fixture.remove() }
        let page = Page()
        let provider = fixture.provider
        let agent = FakeUserAgent { session, shown in
            guard shown == 0 else { return [.navigate(provider.redirect(for: session.authorizationURL))] }
            // The user closes sign-in and presses the page's "Sign in" at once.
            Task { @MainActor in await page.search?.signIn() }
            return [.close]
        }
        let search = DirectorySearch(session: fixture.session(.directory, agent: agent))
        page.search = search
        await search.signIn()
        try await until { search.users.count == 50 }
        #expect(agent.presented.count == 2)
        #expect(search.isSignedIn)
    }
}

@MainActor
@Suite("The sample session")
struct SampleSessionTests {
    @Test("an error from the service is shown with Retry; Retry signs in, Cancel gives up")
    func retryAfterAnError() async throws {
        let fixture = try await SamplesFixture()
        defer { fixture.remove() }
        let provider = fixture.provider
        let declineFirst = FakeUserAgent { session, shown in
            shown == 0
                ? [
                    .navigate(
                        provider.errorRedirect(
                            for: session.authorizationURL, error: "access_denied",
                            description: "AADSTS65004: User declined to consent to access the app."))
                ]
                : [.navigate(provider.redirect(for: session.authorizationURL))]
        }
        let failures = ScriptedFailures(retries: 1)
        let session = fixture.session(.directory, agent: declineFirst, failures: failures)
        let account = await session.signIn()
        #expect(account != nil)
        #expect(failures.shown.map(\.serviceCode) == ["AADSTS65004"])
        // The store's failures reach the trace through its event stream.
        try await until { !fixture.events("sign-in-failed").isEmpty }
        #expect(fixture.events("sign-in-failed").map { $0.fields.first { $0.0 == "error" }?.1 } == ["AADSTS65004"])

        let giveUp = ScriptedFailures(retries: 0)
        let declineAlways = FakeUserAgent { session, _ in
            [.navigate(provider.errorRedirect(for: session.authorizationURL, error: "access_denied", description: "AADSTS65004: declined"))]
        }
        let other = SampleSession(sample: fixture.model.sample(.me)!, model: fixture.model, userAgent: declineAlways, failures: giveUp)
        #expect(await other.signIn() == nil)
        #expect(giveUp.shown.count == 1)
    }

    @Test("a sign-in begun before the page was built is joined by it: one sign-in page; closed, the page is signed out")
    func aBegunSignInIsJoined() async throws {
        let fixture = try await SamplesFixture()
        defer { fixture.remove() }
        let signsIn = FakeUserAgent(provider: fixture.provider)
        let session = fixture.session(.directory, agent: signsIn)
        session.beginSignIn()
        #expect(session.isSigningIn)
        #expect(await session.signedInAccount() != nil)
        #expect(signsIn.presented.count == 1)

        let closes = FakeUserAgent { _, _ in [.close] }
        let closed = fixture.session(.tasks, agent: closes)
        closed.beginSignIn()
        #expect(await closed.signedInAccount() == nil)
        #expect(closes.presented.count == 1)
        #expect(!closed.isSigningIn)
    }
}

@MainActor
@Suite("The Tasks page's model")
struct TaskListTests {
    @Test("sam's tasks: listed, added (the caller keeps the text until the service has it), gone after switching user")
    func tasks() async throws {
        let fixture = try await SamplesFixture()
        defer { fixture.remove() }
        let list = TaskList(session: fixture.session(.tasks))
        await list.appear()
        #expect(fixture.agent.presented.isEmpty, "a page that appears opened a sign-in by itself")
        #expect(list.pageStatus?.kind == .signedOut)
        await list.perform(try #require(list.pageStatus?.action))
        #expect(list.tasks.isEmpty)
        #expect(list.pageStatus?.kind == .nothingYet)
        #expect(list.pageStatus?.title == "No tasks yet")
        #expect(list.statusText == "No tasks yet.")
        #expect(list.signedInText == "Signed in as Alex Wilber")
        #expect(await list.add("Water the plants"))
        #expect(list.tasks.map(\.text) == ["Water the plants"])
        #expect(list.statusText == "1 task")
        fixture.apis.failNext(with: 503)
        #expect(await !list.add("Call the bank"), "a refused task must not report success")
        #expect(fixture.apis.tasks == ["Water the plants"])
        #expect(list.statusText.contains("503") || list.statusText.contains("down"), "\(list.statusText)")
        await list.switchUser()
        #expect(fixture.agent.presented.count == 2)
        #expect(fixture.events("signed-out").count == 1)
    }

    @Test("Enter twice adds once; Add again after a failure sends the same idempotency key, a new task a new one")
    func exactlyOnce() async throws {
        let fixture = try await SamplesFixture()
        defer { fixture.remove() }
        let list = TaskList(session: fixture.session(.tasks))
        await list.appear()
        await list.performAction()
        async let first = list.add("Water the plants")
        async let second = list.add("Water the plants")
        let added = await [first, second]
        #expect(added.filter { $0 }.count == 1)
        #expect(fixture.apis.tasks == ["Water the plants"])
        #expect(fixture.apis.postedKeys.count == 1)

        fixture.apis.failNext(with: 503)
        #expect(await !list.add("Call the bank"))
        #expect(await list.add(" Call the bank "))
        #expect(await list.add("Buy milk"))
        let keys = fixture.apis.postedKeys
        #expect(keys.count == 4)
        #expect(keys[1] == keys[2], "Add again after a failure must send the same key")
        #expect(keys[3] != keys[2] && keys[0] != keys[1])
    }
}

extension TaskListTests {
    @Test("a list the service refused loses its stale rows, is read again by itself, backed off, and recovers with no press")
    func recoversByItself() async throws {
        let fixture = try await SamplesFixture()
        defer { fixture.remove() }
        let list = TaskList(session: fixture.session(.tasks))
        list.retrying.delays = [.milliseconds(20), .milliseconds(40)]
        await list.appear()
        await list.performAction()
        #expect(await list.add("Water the plants"))
        fixture.apis.failNext(3, with: 503)
        await list.reload()
        #expect(list.tasks.isEmpty, "the tasks read before stayed under the failure")
        #expect(list.pageStatus?.kind == .failed)
        #expect(list.pageStatus?.action == .sample(.retry))
        try await until { list.tasks.map(\.text) == ["Water the plants"] }
        #expect(list.pageStatus == nil)
        list.close()
    }
}

@MainActor
@Suite("The Me page's model")
struct MeConsoleTests {
    @Test("the first call signs in interactively, the second is silent, a refused refresh signs in again")
    func interactiveThenSilent() async throws {
        let fixture = try await SamplesFixture()
        defer { fixture.remove() }
        let console = MeConsole(session: fixture.session(.me))
        await console.appear()
        #expect(!console.canSignOut)
        #expect(console.pageStatus?.kind == .signedOut)
        #expect(console.pageStatus?.action == .call("Call Microsoft Graph"))
        await console.callGraph()
        #expect(fixture.agent.presented.count == 1)
        #expect(console.lines.first == "acquireToken (interactive)")
        #expect(console.canSignOut)
        let afterFirst = console.lines.count
        await console.callGraph()
        #expect(fixture.agent.presented.count == 1, "the second call was not silent")
        #expect(console.lines[afterFirst].hasPrefix("acquireTokenSilent: "))

        fixture.provider.clock.advance(by: 7200)
        fixture.provider.refreshError = [
            "error": "invalid_grant", "error_description": "AADSTS50173: The provided grant has expired due to it being revoked.",
            "error_codes": [50173],
        ]
        await console.callGraph()
        #expect(fixture.agent.presented.count == 2)
        let signInAgain = L("Your sign-in has expired or was revoked; sign in again.") + " (AADSTS50173)"
        #expect(console.lines.contains(String(format: L("interaction required: %@"), signInAgain)), "\(console.lines)")
        for line in console.lines { #expect(!line.contains("at-"), "a token reached the log unmasked: \(line)") }
    }
}

/// Waits until `condition` holds (``Eventually``); records a failure here after 10 s.
@MainActor
func until(_ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    if await !Eventually.holds(every: .milliseconds(5), condition) {
        Issue.record("the condition never held", sourceLocation: sourceLocation)
    }
}

/// A clock a test moves by hand: each `sleep` waits until ``pass()`` lets one go.
final class SteppedSleep: Sendable {
    private struct State {
        var waiting: [CheckedContinuation<Void, Never>] = []
        var passed = 0
    }
    private let state = Mutex(State())

    /// The sleep to hand to the code under test.
    var sleep: @Sendable (Duration) async throws -> Void {
        { [self] _ in await self.wait() }
    }

    private func wait() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                guard state.passed == 0 else {
                    state.passed -= 1
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Lets the oldest sleep end (or the next one, when none waits yet).
    func pass() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.passed += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
