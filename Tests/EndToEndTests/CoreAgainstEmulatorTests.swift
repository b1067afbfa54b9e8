import Foundation
import IdentityEmulator
import SesameCore
import SesameTestSupport
import Testing

/// The tests' headless browser as the Core's sign-in user agent: it loads the session's
/// authorization page, fills the identity service's pages by their field names, and hands the
/// redirect it ends on to the session, as the app's web view does.
final class HeadlessUserAgent: SignInUserAgent {
    private let browser: HeadlessBrowser
    private let walk: @Sendable (HeadlessBrowser, String) async throws -> HeadlessBrowser.Page

    /// Signs `user` in on Microsoft's pages (the SMS step answered with the code the emulator sent).
    static func entra(_ user: String, emulator: RunningEmulator) -> HeadlessUserAgent {
        HeadlessUserAgent(emulator: emulator) { browser, authorize in try await browser.signIn(user, authorize: authorize) }
    }

    /// Signs `user` in on Microsoft's pages through `browser` (one on an emulator process's sockets).
    static func entra(_ user: String, browser: HeadlessBrowser) -> HeadlessUserAgent {
        HeadlessUserAgent(browser: browser) { browser, authorize in try await browser.signIn(user, authorize: authorize) }
    }

    /// Signs `email` in on B2C's combined page.
    static func b2c(_ email: String, emulator: RunningEmulator) -> HeadlessUserAgent {
        HeadlessUserAgent(emulator: emulator) { browser, authorize in try await browser.b2cSignIn(email, authorize: authorize) }
    }

    /// Picks "Forgot your password?" and, in the password-reset user flow that follows, sets a new one.
    static func b2cForgotPassword(_ email: String, newPassword: String, emulator: RunningEmulator) -> HeadlessUserAgent {
        HeadlessUserAgent(emulator: emulator) { browser, authorize in
            authorize.contains("B2C_1_PasswordReset")
                ? try await browser.b2cResetPassword(email, to: newPassword, authorize: authorize)
                : try await browser.b2cForgotPassword(authorize: authorize)
        }
    }

    private convenience init(
        emulator: RunningEmulator, walk: @escaping @Sendable (HeadlessBrowser, String) async throws -> HeadlessBrowser.Page
    ) {
        self.init(browser: HeadlessBrowser.sockets(base: emulator.base, codes: emulator.codes), walk: walk)
    }

    private init(browser: HeadlessBrowser, walk: @escaping @Sendable (HeadlessBrowser, String) async throws -> HeadlessBrowser.Page) {
        self.browser = browser
        self.walk = walk
    }

    func present(_ session: SignInSession) async throws {
        let page = try await walk(browser, session.authorizationURL.absoluteString)
        guard let location = page.location, let redirect = URL(string: location), session.resume(with: redirect) else {
            Issue.record("the sign-in pages never redirected to the app: \(page.status) \(page.text.prefix(300))")
            session.cancel()
            return
        }
    }

    func dismiss(_ session: SignInSession) async {}
}

/// SesameCore against the identity emulator over real sockets: two independent implementations
/// of the wire, each catching the other's mistakes. The bundled sample settings are pointed at the
/// emulator exactly as `sesame --emulator URL` does.
@Suite("SesameCore ↔ identity emulator", .serialized)
struct CoreAgainstEmulatorTests {
    static func settings(_ name: String, at base: URL) throws -> SampleSettings {
        try SampleSettings.load(contentsOf: Repository.settings(name)).pointed(at: base)
    }

    static func store() -> AccountStore {
        AccountStore(
            storage: FileTokenStorage(directory: Repository.temporaryDirectory("sesame-e2e")), transport: AsyncHTTPClientTransport())
    }

    @Test("Directory: alex signs in, the account is named, Graph search finds megan and pages on, a refresh works")
    func directorySample() async throws {
        let emulator = try await RunningEmulator(users: 300)
        let settings = try Self.settings("directory.plist", at: emulator.base)
        guard case .graph(let graph) = settings else {
            Issue.record("not the Graph sample")
            return
        }
        let store = Self.store()
        await store.setConfiguration(settings.accountConfiguration, forAccountType: settings.accountType)

        let account = try await store.signIn(
            accountType: settings.accountType, using: HeadlessUserAgent.entra("alex@contoso.onmicrosoft.com", emulator: emulator))
        #expect(account.username == "alex@contoso.onmicrosoft.com")
        #expect(account.homeAccountID == "4c1b9a54-7f4e-4f2b-9a5f-2a0c6c1d7e01.\(Tenant.contoso.id)")

        let directory = GraphUserDirectory(client: AuthorizedHTTPClient(store: store), account: account, baseURL: graph.graphBaseURL)
        let megan = try await directory.search("meg")
        #expect(megan.users.contains { $0.displayName == "Megan Bowen" })
        let obrien = try await directory.search("O'Brien")
        #expect(obrien.users.contains { $0.displayName == "Seán O'Brien" })
        let first = try await directory.search("", pageSize: 100)
        let second = try #require(try await directory.nextPage(after: first))
        #expect(!second.users.isEmpty)
        #expect(Set(first.users.map(\.id)).isDisjoint(with: second.users.map(\.id)))
        #expect(try await directory.me().userPrincipalName == "alex@contoso.onmicrosoft.com")

        let cached = try await store.accessToken(for: account)
        let refreshed = try await store.accessToken(for: account, forceRefresh: true)
        #expect(refreshed.secret.revealed != cached.secret.revealed)
    }

    @Test("Tasks: sam signs in through the B2C policy, adds a task and reads it back; kim sees none")
    func tasksSample() async throws {
        let emulator = try await RunningEmulator(users: 10)
        let settings = try Self.settings("tasks.plist", at: emulator.base)
        guard case .b2c(let b2c) = settings else {
            Issue.record("not the B2C sample")
            return
        }
        let store = Self.store()
        await store.setConfiguration(settings.accountConfiguration, forAccountType: settings.accountType)

        func signIn(_ email: String) async throws -> Account {
            try await store.signIn(accountType: settings.accountType, using: HeadlessUserAgent.b2c(email, emulator: emulator))
        }
        let sam = try await signIn("sam@example.com")
        #expect(sam.username == "sam@example.com")
        let samTasks = TaskService(client: AuthorizedHTTPClient(store: store), account: sam, baseURL: b2c.taskAPI)
        try await samTasks.add("Water the plants")
        #expect(try await samTasks.tasks().map(\.text) == ["Water the plants"])

        let kim = try await signIn("kim@example.com")
        #expect(try await TaskService(client: AuthorizedHTTPClient(store: store), account: kim, baseURL: b2c.taskAPI).tasks().isEmpty)
    }

    @Test("Tasks: after \"Forgot your password?\" the account refreshes where its tokens were issued, and reads its tasks")
    func refreshAfterPasswordReset() async throws {
        let emulator = try await RunningEmulator(users: 10) { $0.accessTokenLifetime = 120 }
        let settings = try Self.settings("tasks.plist", at: emulator.base)
        guard case .b2c(let b2c) = settings else {
            Issue.record("not the B2C sample")
            return
        }
        let directory = Repository.temporaryDirectory("sesame-e2e")
        let store = AccountStore(storage: FileTokenStorage(directory: directory), transport: AsyncHTTPClientTransport())
        await store.setConfiguration(settings.accountConfiguration, forAccountType: settings.accountType)
        let kim = try await store.signIn(
            accountType: settings.accountType,
            using: HeadlessUserAgent.b2cForgotPassword("kim@example.com", newPassword: "N3w-Passw0rd!", emulator: emulator))
        #expect(kim.homeAccountID.contains("-b2c_1_passwordreset."), "\(kim.homeAccountID)")

        // The app starts again later: the account is read back, refreshed, and reads its tasks.
        let restarted = AccountStore(storage: FileTokenStorage(directory: directory), transport: AsyncHTTPClientTransport())
        await restarted.setConfiguration(settings.accountConfiguration, forAccountType: settings.accountType)
        let stored = try #require(try await restarted.accounts(ofType: settings.accountType).first)
        let refreshed = try await restarted.accessToken(for: stored, forceRefresh: true)
        #expect(!refreshed.secret.revealed.isEmpty)
        let tasks = TaskService(client: AuthorizedHTTPClient(store: restarted), account: stored, baseURL: b2c.taskAPI)
        #expect(try await tasks.tasks().isEmpty)
    }

    @Test("after the emulator rolls its signing key over, a refresh's id_token (new kid) verifies: the client fetched the new keys")
    func keyRollover() async throws {
        let emulator = try await RunningEmulator(users: 10)
        let settings = try Self.settings("directory.plist", at: emulator.base)
        let store = Self.store()
        await store.setConfiguration(settings.accountConfiguration, forAccountType: settings.accountType)
        let alex = try await store.signIn(
            accountType: settings.accountType, using: HeadlessUserAgent.entra("alex@contoso.onmicrosoft.com", emulator: emulator))
        let browser = HeadlessBrowser.sockets(base: emulator.base, codes: emulator.codes)
        let rotated = try await browser.post("/.emulator/keys/rotate", form: [])
        #expect(rotated.status == .ok)
        let refreshed = try await store.accessToken(for: alex, forceRefresh: true)
        #expect(refreshed.account.homeAccountID == alex.homeAccountID)
        // The next sign-in's id_token is signed by the new key too, and is accepted.
        _ = try await store.signIn(
            accountType: settings.accountType, using: HeadlessUserAgent.entra("alex@contoso.onmicrosoft.com", emulator: emulator))
    }

    @Test("Me: the MSAL sample's scopes sign megan in through the SMS step and read /me")
    func meSample() async throws {
        // The emulator "texts" the SMS code through its announcements; the browser reads it there.
        let emulator = try await RunningEmulator(users: 10)
        let settings = try Self.settings("me.plist", at: emulator.base)
        guard case .msal(let msal) = settings else {
            Issue.record("not the MSAL sample")
            return
        }
        let store = Self.store()
        await store.setConfiguration(settings.accountConfiguration, forAccountType: settings.accountType)
        let account = try await store.signIn(
            accountType: settings.accountType, using: HeadlessUserAgent.entra("megan@contoso.onmicrosoft.com", emulator: emulator))
        #expect(account.username == "megan@contoso.onmicrosoft.com")

        let client = AuthorizedHTTPClient(store: store)
        let response = try await client.perform(ResourceRequest(method: "GET", url: msal.graphURI), as: account)
        #expect(response.status == 200)
        let me = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        #expect(me?["displayName"] as? String == "Megan Bowen")
    }
}
