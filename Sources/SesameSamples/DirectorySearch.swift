import FoundationEssentials
import SesameCore
import SesameService
import SesameSystem
import SesameWindowModel

/// The v2.0 sample without its widgets: search the organisation's people as the user types,
/// page on as they scroll, and read one person's details.
///
/// Each search gets a generation; starting a new one cancels the previous request, and an answer
/// that arrives for an older generation is dropped, so a slow answer never replaces a newer one.
@MainActor
public final class DirectorySearch {
    /// What the list area says.
    public enum Status: Equatable, Sendable {
        /// Nobody is signed in: the page offers "Sign in".
        case signedOut
        /// Signed out on purpose.
        case signedOutByUser
        /// A search is on its way.
        case searching
        /// The people found so far; `more` when scrolling loads another page.
        case found(count: Int, more: Bool)
        /// The search found no one.
        case noMatches
        /// The search failed; the action button retries, or signs in again when only that helps.
        case failed(String, action: SampleAction)
        /// Signing out failed (the account stays signed in).
        case signOutFailed(String)
    }

    /// What changed, so that a view redraws only that.
    public enum Change: Equatable, Sendable {
        /// The list was replaced (a new search, a sign-out).
        case replaced
        /// Rows were added at the end (the next page).
        case appended(Range<Int>)
        /// The status line (and whether the sign-in button shows).
        case status
        /// The selected person.
        case selection
    }

    /// The people in the list, in order.
    public private(set) var users: [GraphUser] = []
    /// What the status line says.
    public private(set) var status: Status = .signedOut
    /// The person whose details show.
    public private(set) var selected: GraphUser?
    /// Called after each change.
    public var onChange: ((Change) -> Void)?

    /// Who is signed in for the sample.
    public let session: SampleSession
    private let baseURL: URL
    private var text = ""
    private var nextPage: GraphUserPage?
    private var generation = 0
    private var searchTask: Task<Void, Never>?
    private var pageTask: Task<Void, Never>?
    /// When a search that failed for a reason Retry can mend runs again by itself.
    public let retrying = RetrySchedule()

    /// A search over the sample's Graph (`graphBaseURL` of its settings).
    public init(session: SampleSession) {
        self.session = session
        if case .graph(let graph) = session.sample.settings {
            baseURL = graph.graphBaseURL
        } else {
            baseURL = URL(string: "https://graph.microsoft.com/v1.0/")!
        }
        // Each second of the countdown is news for the status page.
        retrying.onTick = { [weak self] in if case .failed = self?.status { self?.onChange?(.status) } }
    }

    /// Whether an account is signed in.
    public var isSignedIn: Bool { session.account != nil }

    /// The text of the status line, for the user.
    public var statusText: String {
        switch status {
        case .signedOut: L("Sign in to search your organisation’s people.")
        case .signedOutByUser: L("Signed out.")
        case .searching: L("Searching…")
        case .found(let count, let more): String(formatting: more ? L("People found: %d — scroll for more") : L("People found: %d"), count)
        case .noMatches: L("No one matches.")
        case .failed(let message, _): message
        case .signOutFailed(let message): String(formatting: L("Could not sign out: %@"), message)
        }
    }

    /// What the page's action button offers now, if anything.
    public var action: SampleAction? {
        switch status {
        case .signedOut, .signedOutByUser: .signIn
        case .failed(_, let action): action
        default: nil
        }
    }

    /// Does what ``action`` offers: signs in (again), or searches again.
    public func performAction() async {
        switch action {
        case .signIn?, .signInAgain?:
            await signIn()
        case .retry?:
            retry()
        case nil:
            break
        }
    }

    /// Whether a search or a page is on its way.
    public var isLoading: Bool { status == .searching || pageTask != nil }

    /// What the page shows in place of its list, if anything: nobody signed in (the whole page),
    /// no one matching or a failure (the list's place; the old rows are gone).
    public var pageStatus: PageStatus? {
        if let blocked = session.storageStatus { return blocked }
        if session.account == nil, session.waitText.waitsForNext {
            return PageStatus(.signingIn, title: SignInWaitText.title, description: SignInWaitText.pageDescription, action: nil)
        }
        return switch status {
        case .signedOut:
            PageStatus(
                .signedOut, title: L("Sign in to search your organisation"),
                description: L("Find anyone in your organisation by name, e-mail address or user name, and see how to reach them."),
                action: .sample(.signIn))
        case .signedOutByUser:
            PageStatus(
                .signedOut, title: L("Signed out"), description: L("Sign in to search your organisation’s people."),
                action: .sample(.signIn))
        case .noMatches:
            PageStatus(
                .nothingYet, title: String(formatting: L("No one matches “%@”"), DisplayText.isolated(text)),
                description: L("Check the spelling, or search by e-mail address or user name."), action: .showEveryone)
        case .failed(let message, let action):
            PageStatus(
                .failed, title: L("Can’t search the directory"), description: message, action: .sample(action),
                retryingIn: retrying.secondsLeft)
        case .searching, .found, .signOutFailed:
            nil
        }
    }

    /// The text of the latest search.
    public var searchText: String { text }

    /// Does what the status page offers.
    public func perform(_ action: PageStatus.Action) async {
        switch action {
        case .sample: await performAction()
        case .showEveryone: search("")
        case .call: break
        case .readSignIns(let unlock):
            await session.readSignIns(unlock: unlock)
            await appear()
        }
    }

    /// The page came into view: list everyone when someone is signed in (or a sign-in under way
    /// brings someone); never a sign-in of its own.
    public func appear() async {
        guard await session.accountWithoutAsking() != nil else {
            setStatus(.signedOut)
            return
        }
        if users.isEmpty, status != .searching { search(text) }
    }

    /// Signs in (the "Sign in" button), then lists everyone.
    public func signIn() async {
        guard await session.signInOnRequest() != nil else { return }
        search(text)
    }

    /// A new search for `text`: the previous one is cancelled, and its answer, if it still
    /// comes, is dropped.
    public func search(_ text: String) {
        search(text, again: false)
    }

    private func search(_ text: String, again: Bool) {
        self.text = text
        generation += 1
        let current = generation
        if again { retrying.cancel() } else { retrying.reset() }
        searchTask?.cancel()
        pageTask?.cancel()
        pageTask = nil
        guard let directory = directory() else {
            setStatus(.signedOut)
            return
        }
        setStatus(.searching)
        searchTask = Task { [weak self] in
            do {
                let page = try await directory.search(text)
                guard let self, current == self.generation, !Task.isCancelled else { return }
                self.replace(with: page)
            } catch {
                guard let self, current == self.generation, !Task.isCancelled else { return }
                // The rows on screen answered another search: gone, not shown under this one's error.
                self.clearRows()
                self.setStatus(.failed(self.session.message(for: error), action: SampleAction.after(error)))
                self.retryLater()
            }
        }
    }

    /// After a failure Retry can mend, the same search again after the next delay, unless the
    /// user searched meanwhile (or the network's return already did).
    private func retryLater() {
        guard case .failed(_, action: .retry) = status else { return }
        let current = generation
        retrying.schedule { [weak self] in
            guard let self, current == self.generation, case .failed(_, action: .retry) = self.status else { return }
            self.search(self.text, again: true)
        }
    }

    private func clearRows() {
        guard !users.isEmpty || selected != nil else { return }
        users = []
        nextPage = nil
        selected = nil
        onChange?(.replaced)
        onChange?(.selection)
    }

    /// Searches the same text again (Retry).
    public func retry() { search(text, again: true) }

    /// The network is back: a search that failed for a reason Retry can mend runs again.
    public func networkReturned() {
        if case .failed(_, action: .retry) = status { retry() }
    }

    /// The next page, when the user scrolled to the end and there is one.
    public func loadMore() {
        guard let directory = directory(), let page = nextPage, page.nextLink != nil, pageTask == nil, status != .searching else { return }
        let current = generation
        pageTask = Task { [weak self] in
            let next: GraphUserPage?
            do {
                next = try await directory.nextPage(after: page)
            } catch {
                guard let self, current == self.generation else { return }
                self.pageTask = nil
                self.setStatus(.failed(self.session.message(for: error), action: SampleAction.after(error)))
                return
            }
            guard let self, current == self.generation else { return }
            self.pageTask = nil
            if let next { self.append(next) }
        }
        onChange?(.status)
    }

    /// Shows one person's details (`nil` clears them).
    public func select(_ index: Int?) {
        selected = index.flatMap { users.indices.contains($0) ? users[$0] : nil }
        onChange?(.selection)
    }

    /// Signs out: the list empties and the page offers "Sign in".
    public func signOut() async {
        do {
            try await session.signOut()
        } catch {
            setStatus(.signOutFailed(UserMessage.text(for: error)))
            return
        }
        generation += 1
        searchTask?.cancel()
        pageTask?.cancel()
        pageTask = nil
        users = []
        nextPage = nil
        selected = nil
        onChange?(.replaced)
        onChange?(.selection)
        setStatus(.signedOutByUser)
    }

    /// Stops every request (the window is closing).
    public func close() {
        generation += 1
        retrying.cancel()
        searchTask?.cancel()
        pageTask?.cancel()
        onChange = nil
    }

    private func directory() -> GraphUserDirectory? {
        guard let account = session.account else { return nil }
        return GraphUserDirectory(client: session.httpClient, account: account, baseURL: baseURL)
    }

    private func replace(with page: GraphUserPage) {
        retrying.reset()
        users = page.users
        nextPage = page
        selected = nil
        onChange?(.replaced)
        setStatus(users.isEmpty ? .noMatches : .found(count: users.count, more: page.nextLink != nil))
    }

    private func append(_ page: GraphUserPage) {
        let start = users.count
        users += page.users
        nextPage = page
        onChange?(.appended(start..<users.count))
        setStatus(.found(count: users.count, more: page.nextLink != nil))
    }

    private func setStatus(_ status: Status) {
        self.status = status
        onChange?(.status)
    }
}
