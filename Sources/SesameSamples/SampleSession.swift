import FoundationEssentials
import SesameCore
import SesameWindowModel

/// Shows a failed sign-in to the user and asks whether to try again: the seeds' alert with
/// Retry and Cancel. The window's error bar is one.
@MainActor
public protocol SignInFailurePresenter: AnyObject {
    /// Shows `error`; answers `true` when the user chose Retry.
    func retryAfter(_ error: AccountStoreError) async -> Bool
}

/// One sample's signed-in user: finds the stored account, signs in interactively when there is
/// none (Retry after an error, as the seeds' alert offers), and signs out. Every sample page
/// works through one of these; none of them talks to the store's sign-in itself.
@MainActor
public final class SampleSession {
    /// The sample.
    public let sample: Sample
    /// The signed-in account, once known.
    public private(set) var account: Account? {
        didSet { if oldValue != account { onAccountChange?() } }
    }
    /// Called when the account changes (signed in, out, or found in the store), or what is said
    /// of it (``waitText``: a step of its sign-in waits for Next, or went ahead).
    public var onAccountChange: (() -> Void)?
    private let model: AppModel
    private let userAgent: any SignInUserAgent
    private let browser: (any SignInUserAgent)?
    private weak var failures: (any SignInFailurePresenter)?

    /// A session for `sample` whose interactive sign-ins show in `userAgent` — or in `browser`
    /// (the system browser) when the sample's settings prefer it or the user moves there — and
    /// whose failures `failures` shows (without one, a failure ends the sign-in).
    public init(
        sample: Sample, model: AppModel, userAgent: any SignInUserAgent, browser: (any SignInUserAgent)? = nil,
        failures: (any SignInFailurePresenter)?
    ) {
        self.sample = sample
        self.model = model
        self.userAgent = userAgent
        self.browser = browser
        self.failures = failures
        model.trace.observe { [weak self] event in
            guard event.name == "step-waiting" || event.name == "step-released", let self, self.isSigningIn else { return }
            self.onAccountChange?()
        }
    }

    /// The store and the traced transport the session's sample calls its API with.
    public var httpClient: AuthorizedHTTPClient { model.httpClient }

    /// Whether the computer is on a network.
    public var network: NetworkStatus { model.network }

    /// What a page says for a failed request: "you are offline" when the desktop says so and
    /// the request got no answer, else the failure's own sentence.
    public func message(for error: any Error) -> String {
        !network.isOnline && NetworkStatus.isNoAnswer(error) ? UserMessage.offline : UserMessage.text(for: error)
    }

    /// Why the stored accounts cannot be read, while they cannot (a locked keyring, no keyring,
    /// a full disk): the pages say so and offer what helps, and no sign-in starts meanwhile —
    /// behind a locked keyring, a new sign-in would make a second copy of one that is there.
    public private(set) var storageProblem: AccountStoreError? {
        didSet { if oldValue?.storageProblem != storageProblem?.storageProblem { onAccountChange?() } }
    }

    /// The stored account, without any interaction.
    ///
    /// The read can be overtaken: a sign-in that ends while it is on its way sets the account
    /// first, and the read (made before the sign-in stored it) must not take it back.
    @discardableResult
    public func restore() async -> Account? {
        guard account == nil else { return account }
        do {
            let stored = try await model.store.accounts(ofType: sample.accountType).first
            if account == nil { account = stored }
            storageProblem = nil
        } catch let error as AccountStoreError where error.code == .storageUnavailable {
            storageProblem = error
        } catch {
            // Any other failure reads as nobody signed in: a sign-in mends it.
        }
        return account
    }

    /// What the page shows while the stored accounts cannot be read: the problem, and Unlock
    /// (a locked keyring: the keyring's own prompt) or Try Again.
    public var storageStatus: PageStatus? {
        guard let storageProblem else { return nil }
        let locked = storageProblem.storageProblem == .keyringLocked
        return PageStatus(
            .signInsUnreadable, title: locked ? L("Your keyring is locked") : L("Can’t read your sign-ins"),
            description: UserMessage.text(for: storageProblem),
            action: .readSignIns(unlock: locked && model.unlockKeyring != nil))
    }

    /// The page's Unlock or Try Again: the keyring's own unlock prompt first when it is locked,
    /// then the stored account read again.
    public func readSignIns(unlock: Bool) async {
        if unlock, let unlockKeyring = model.unlockKeyring {
            model.trace.record("keyring-unlock-requested")
            let unlocked = await unlockKeyring()
            model.trace.record("keyring-unlock-answered", [("unlocked", unlocked ? "yes" : "no")])
        }
        await restore()
    }

    /// The stored account, or an interactive sign-in when there is none: one under way (see
    /// ``beginSignIn()``) is joined — and when it ends without an account, so does this.
    public func signedInAccount() async -> Account? {
        if let account = await restore() { return account }
        if storageProblem != nil { return nil }
        if let current { return await current.value }
        return await signIn()
    }

    /// The stored account, or the one a sign-in under way brings (the one the window's start
    /// began); never a sign-in of its own: a page that appears asks nobody to sign in.
    public func accountWithoutAsking() async -> Account? {
        if let account = await restore() { return account }
        if let current { return await current.value }
        return nil
    }

    /// Signs in interactively (someone else may sign in: the store asks who, after a sign-out).
    /// An error from the identity service is shown with Retry and Cancel; Retry starts over.
    /// A call while a sign-in is under way returns `nil` at once (see ``signInOnRequest()``).
    /// - Returns: the account, or `nil` when the user closed sign-in or cancelled after an error.
    @discardableResult
    public func signIn(parameters: [String: String] = [:]) async -> Account? {
        guard current == nil, storageProblem == nil else { return nil }
        return await startSignIn(parameters: parameters).value
    }

    /// Starts an interactive sign-in without waiting for it (unless one is under way): the
    /// window's start asks for the sign-in page before it builds the sample's page, whose
    /// ``signedInAccount()`` then joins it.
    public func beginSignIn() {
        guard current == nil, storageProblem == nil else { return }
        startSignIn(parameters: [:])
    }

    @discardableResult
    private func startSignIn(parameters: [String: String]) -> Task<Account?, Never> {
        let task = Task { await self.runSignIn(parameters: parameters) }
        current = task
        return task
    }

    /// What the user's own "Sign in" does: it joins a sign-in under way — also one the user closed
    /// a moment ago, whose task is still ending — and starts a new one when that gave no account.
    public func signInOnRequest() async -> Account? {
        if let current, let account = await current.value { return account }
        return await signIn()
    }

    /// Whether an interactive sign-in is under way.
    public var isSigningIn: Bool { current != nil }

    /// What the page and the header say of the sign-in while step-through holds one of its
    /// steps (the token request, after the redirect, waits with the samples on screen).
    public var waitText: SignInWaitText {
        SignInWaitText(signingIn: isSigningIn, stepWaits: model.trace.stepThrough.waitingCount > 0)
    }
    private var current: Task<Account?, Never>?

    private func runSignIn(parameters: [String: String]) async -> Account? {
        // Cleared before the task's value reaches anyone who waits for it.
        defer { current = nil }
        var agent: any SignInUserAgent = sample.signInWith == .browser ? browser ?? userAgent : userAgent
        // Which sample signs in: the inspector names the steps of its tutorial.
        model.trace.record("sign-in-started", [("accountType", sample.accountType), ("sample", sample.kind.rawValue)])
        while true {
            do {
                let signedIn = try await model.store.signIn(accountType: sample.accountType, parameters: parameters, using: agent)
                account = signedIn
                model.trace.record("token-acquired", [("accountType", signedIn.accountType)])
                return signedIn
            } catch  where error.code == .handedOffToBrowser {
                // "Continue in your browser": the same sign-in starts over in the system browser.
                guard let browser else { return nil }
                model.trace.record("sign-in-moved-to-browser", [("accountType", sample.accountType)])
                agent = browser
            } catch  where error.code == .cancelled {
                return nil
            } catch {
                guard let failures, await failures.retryAfter(error) else { return nil }
            }
        }
    }

    /// Signs the account out: its tokens are deleted and the next sign-in asks who signs in.
    /// - Throws: ``AccountStoreError`` when the storage refused (the account stays signed in).
    public func signOut() async throws {
        if let account {
            try await model.store.remove(account)
        }
        account = nil
        model.trace.record("signed-out", [("accountType", sample.accountType)])
    }

    /// Signs the account out and someone in (the service asks who).
    /// - Returns: the new account, or `nil` when sign-out failed or sign-in was closed.
    public func switchAccount() async throws -> Account? {
        try await signOut()
        return await signIn()
    }

    /// Forgets the account this session knew (another sign-in replaced it), without signing out.
    public func forget() {
        account = nil
    }

    /// A session that already knows its account (after a silent token named a newer one).
    func use(_ account: Account) {
        self.account = account
    }

    /// Records that a token came without interaction (from the cache, or refreshed).
    func recordSilentToken() {
        model.trace.record("token-silent", [("accountType", sample.accountType), ("sample", sample.kind.rawValue)])
    }
}
