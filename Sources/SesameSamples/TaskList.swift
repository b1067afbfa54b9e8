import FoundationEssentials
import SesameCore
import SesameSystem
import SesameWindowModel

/// The B2C sample without its widgets: the signed-in user's tasks, adding one, and signing in
/// as someone else. The text being added stays with the caller until the service has it.
@MainActor
public final class TaskList {
    /// The tasks, as the service lists them.
    public private(set) var tasks: [TaskItem] = []
    /// The status line: a count, or what went wrong.
    public private(set) var statusText = ""
    /// Who is signed in, for the user.
    public var signedInText: String {
        session.account.map { String(formatting: L("Signed in as %@"), $0.displayName) } ?? L("Not signed in")
    }
    /// What the page's action button offers now, if anything.
    public private(set) var action: SampleAction?
    /// Called after each change.
    public var onChange: (() -> Void)?

    /// Who is signed in for the sample.
    public let session: SampleSession
    private let baseURL: URL
    private var loading: Task<Void, Never>?

    /// The task list of the sample's API (`taskAPI` of its settings).
    public init(session: SampleSession) {
        self.session = session
        if case .b2c(let b2c) = session.sample.settings {
            baseURL = b2c.taskAPI
        } else {
            baseURL = URL(string: "https://aadb2cplayground.azurewebsites.net")!
        }
        // Each second of the countdown is news for the status page.
        retrying.onTick = { [weak self] in if self?.failed == true { self?.changed() } }
    }

    /// Whether an account is signed in.
    public var isSignedIn: Bool { session.account != nil }

    /// Whether the user signed out (the status page says so).
    private var signedOutByUser = false
    /// Whether the last read failed.
    private var failed = false

    /// What the page shows in place of its list, if anything: nobody signed in (the whole page),
    /// no tasks yet, or a failure to read them.
    public var pageStatus: PageStatus? {
        if let blocked = session.storageStatus { return blocked }
        if !isSignedIn {
            return signedOutByUser
                ? PageStatus(.signedOut, title: L("Signed out"), description: L("Sign in to see your tasks."), action: .sample(.signIn))
                : PageStatus(
                    .signedOut, title: L("Sign in to see your tasks"),
                    description: L("Your task list is kept by the task service; each person sees only their own."), action: .sample(.signIn)
                )
        }
        if failed, let action {
            return PageStatus(
                .failed, title: L("Can’t read your tasks"), description: statusText, action: .sample(action),
                retryingIn: retrying.secondsLeft)
        }
        if tasks.isEmpty, action == nil, hasRead {
            return PageStatus(.nothingYet, title: L("No tasks yet"), description: L("Type a task above and press Enter."), action: nil)
        }
        return nil
    }

    /// Whether the list was read at least once since the sign-in.
    private var hasRead = false

    /// Does what the status page offers.
    public func perform(_ action: PageStatus.Action) async {
        switch action {
        case .sample: await performAction()
        case .readSignIns(let unlock):
            await session.readSignIns(unlock: unlock)
            await appear()
        case .showEveryone, .call: break
        }
    }

    /// The page came into view: list the tasks when someone is signed in (or a sign-in under way
    /// brings someone); never a sign-in of its own.
    public func appear() async {
        guard await session.accountWithoutAsking() != nil else {
            action = .signIn
            statusText = L("Sign in to see your tasks.")
            changed()
            return
        }
        await reload()
    }

    /// Does what ``action`` offers: signs in (again), or lists again.
    public func performAction() async {
        switch action {
        case .signIn?:
            guard await session.signInOnRequest() != nil else { return }
            signedOutByUser = false
            await reload()
        case .signInAgain?:
            guard await session.signInOnRequest() != nil else { return }
            await reload()
        case .retry?:
            await reload()
        case nil:
            break
        }
    }

    /// When a read that failed for a reason Retry can mend runs again by itself.
    public let retrying = RetrySchedule()

    /// After a failed read Retry can mend, the same read after the next delay, unless something
    /// read the list meanwhile (the user, the network's return).
    private func retryLater() {
        guard failed, action == .retry else { return }
        retrying.schedule { [weak self] in
            guard let self, self.failed, self.action == .retry else { return }
            Task { await self.reload() }
        }
    }

    /// Lists the tasks again.
    public func reload() async {
        guard let service = service() else {
            tasks = []
            action = .signIn
            changed()
            return
        }
        do {
            tasks = try await service.tasks()
            failed = false
            hasRead = true
            retrying.reset()
            statusText =
                tasks.isEmpty ? L("No tasks yet.") : String(formatting: tasks.count == 1 ? L("%d task") : L("%d tasks"), tasks.count)
            action = nil
        } catch {
            // The tasks on screen may be stale: gone, with the failure in their place.
            tasks = []
            failed = true
            statusText = session.message(for: error)
            action = SampleAction.after(error)
            changed()
            retryLater()
            return
        }
        changed()
    }

    /// The network is back: a list that failed for a reason Retry can mend is read again (the
    /// text of a task being added stays in its field until the user adds it again).
    public func networkReturned() async {
        guard action == .retry else { return }
        await reload()
    }

    /// Whether an add is on its way (a second Enter meanwhile adds nothing).
    public private(set) var isAdding = false
    /// The task the user is adding and its idempotency key, kept until the service has it: when
    /// an answer is lost and the user presses Add again with the same text, the service sees the
    /// same key and adds the task once.
    private var pendingAdd: (text: String, key: String)?

    /// Adds a task, exactly once however often it is sent; `true` once the service has it (the
    /// caller clears the text then), `false` when it failed or an add is already on its way.
    public func add(_ text: String) async -> Bool {
        guard !isAdding, let service = service() else { return false }
        let trimmed = text.trimmingWhitespace()
        let key = pendingAdd.flatMap { $0.text == trimmed ? $0.key : nil } ?? UUID().uuidString
        pendingAdd = (trimmed, key)
        isAdding = true
        defer { isAdding = false }
        do {
            try await service.add(trimmed, idempotencyKey: key)
        } catch {
            statusText = session.message(for: error)
            action = SampleAction.after(error)
            changed()
            return false
        }
        pendingAdd = nil
        await reload()
        return true
    }

    /// Signs out, then in as someone else (the service asks who).
    public func switchUser() async {
        guard await signOut() else { return }
        await performAction()
    }

    /// Signs out: the list empties.
    /// - Returns: whether the account was signed out.
    @discardableResult
    public func signOut() async -> Bool {
        do {
            try await session.signOut()
        } catch {
            statusText = String(formatting: L("Could not sign out: %@"), UserMessage.text(for: error))
            changed()
            return false
        }
        tasks = []
        hasRead = false
        failed = false
        retrying.reset()
        signedOutByUser = true
        statusText = L("Signed out.")
        action = .signIn
        changed()
        return true
    }

    /// Stops updating (the window is closing).
    public func close() {
        retrying.cancel()
        onChange = nil
    }

    private func service() -> TaskService? {
        session.account.map { TaskService(client: session.httpClient, account: $0, baseURL: baseURL) }
    }

    private func changed() { onChange?() }
}
