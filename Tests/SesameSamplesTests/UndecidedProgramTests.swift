import Foundation
import SesameCore
import SesameService
import SesameTestSupport
import Testing

/// A program the user has not decided about, on a computer whose Primary Refresh Token could sign
/// its account in with no page: it is asked about first, and a refused one causes no sign-in
/// and learns nothing. Against the emulator, the computer registered through its pages.
@MainActor
@Suite("A program not yet allowed, on a registered computer")
struct UndecidedProgramTests {
    static let user = "alex@contoso.onmicrosoft.com"
    static let clientID = "66855f8a-60cd-445e-a9bb-8cd8eadbd3fa"
    static let accountType = "work"
    static let tool = ProgramIdentity.executable("/opt/a/tool")!
    static let other = ProgramIdentity.executable("/opt/b/other")!

    /// A registered computer's store (nobody signed in) with one account type of an app the
    /// organization consented to, its account service and what it recorded.
    struct Computer {
        let emulator: RunningEmulator
        let folder: URL
        let store: AccountStore
        let service: AccountService
        let trace: FlowTrace
        let events: Events
    }

    final class Events: @unchecked Sendable {
        private let lock = NSLock()
        private var names: [String] = []
        func add(_ name: String) { lock.withLock { names.append(name) } }
        var all: [String] { lock.withLock { names } }
    }

    static func computer() async throws -> Computer {
        let emulator = try await RunningEmulator(users: 20)
        let pages = HeadlessBrowser.sockets(base: emulator.base, codes: emulator.codes)
        let identity = DeviceIdentity(storage: MemoryDeviceIdentityStorage(), transport: AsyncHTTPClientTransport())
        _ = try await identity.register(
            authority: emulator.base.appending(path: "organizations"), tenant: "contoso.onmicrosoft.com", displayName: "alex-laptop",
            osVersion: "Debian 13", using: HeadlessSignInPages(pages, user: Self.user))
        _ = try await pages.post("/.emulator/clients/\(clientID)/adminConsent", form: [])
        let folder = FileManager.default.temporaryDirectory.appending(path: "sesame-undecided-\(UUID().uuidString)")
        let store = AccountStore(storage: FileTokenStorage(directory: folder), transport: AsyncHTTPClientTransport(), device: identity)
        let authority = emulator.base.appending(path: "contoso.onmicrosoft.com")
        await store.setConfiguration(
            AccountConfiguration(
                clientID: clientID, scopes: ["openid", "profile", "offline_access", "https://graph.microsoft.com/user.read"],
                authorizationURL: authority.appending(path: "oauth2/v2.0/authorize"),
                tokenURL: authority.appending(path: "oauth2/v2.0/token"),
                redirectURL: URL(string: "https://login.microsoftonline.com/common/oauth2/nativeclient")!, storageGroup: "work"),
            forAccountType: accountType)
        let trace = try FlowTrace(file: nil)
        let events = Events()
        trace.observe { events.add($0.name) }
        _ = await trace.follow(store)
        let service = AccountService(
            store: store, accountTypes: [accountType], trace: trace, access: ProgramAccess(file: nil), trusted: [])
        return Computer(emulator: emulator, folder: folder, store: store, service: service, trace: trace, events: events)
    }

    @Test("a program denied before anything was signed in: no sign-in by the PRT, no account stored, its user name never told")
    func deniedProgramCausesNoSignIn() async throws {
        let computer = try await Self.computer()
        defer { try? FileManager.default.removeItem(at: computer.folder) }
        let questions = ScriptedQuestions([.deny, .allowOnce])
        computer.service.questioner = questions
        var told: [String] = []
        do {
            _ = try await computer.service.accessToken(
                for: Self.tool, accountType: Self.accountType, username: "", scopes: []
            ) { request in told.append(request.username) }
            Issue.record("a denied program got a token")
        } catch {
            #expect(error.kind == .accessDenied, "\(error)")
        }
        #expect(questions.asked.count == 1, "the program was not asked")
        #expect(questions.asked.first?.username == Self.user, "the question does not name the registration's user")
        #expect(told.allSatisfy { !$0.localizedCaseInsensitiveContains("alex") }, "the waiting program heard who the user is: \(told)")
        #expect(try await computer.store.accounts(ofType: Self.accountType).isEmpty, "`sesame accounts` lists an account nobody allowed")
        #expect(!computer.events.all.contains("device-sign-in"), "the PRT signed in for a refused program: \(computer.events.all)")
        #expect(!computer.emulator.codes.all.contains { $0.hasPrefix("prt-token") }, "a token was minted for a refused program")
        // Denied is kept: asked again, it is refused with no question and still nothing signed in.
        await #expect(throws: AccountServiceError.self) {
            _ = try await computer.service.accessToken(for: Self.tool, accountType: Self.accountType, username: "", scopes: [])
        }
        #expect(questions.asked.count == 1)
        #expect(try await computer.store.accounts(ofType: Self.accountType).isEmpty)

        // Another program allowed once: asked once, before the sign-in, and then it has its token.
        let token = try await computer.service.accessToken(for: Self.other, accountType: Self.accountType, username: "", scopes: [])
        #expect(!token.secret.revealed.isEmpty)
        #expect(questions.asked.count == 2, "allowed once before the sign-in, the program was asked again after it")
        #expect(try await computer.store.accounts(ofType: Self.accountType).map(\.username) == [Self.user])
        #expect(computer.events.all.contains("device-sign-in"))
    }

    @Test("SignIn by a denied program: nothing signed in")
    func deniedSignIn() async throws {
        let computer = try await Self.computer()
        defer { try? FileManager.default.removeItem(at: computer.folder) }
        let questions = ScriptedQuestions([.deny])
        computer.service.questioner = questions
        await #expect(throws: AccountServiceError.self) {
            _ = try await computer.service.signIn(for: Self.tool, accountType: Self.accountType)
        }
        #expect(questions.asked.count == 1)
        #expect(try await computer.store.accounts(ofType: Self.accountType).isEmpty, "`sesame accounts` lists an account nobody allowed")
        #expect(!computer.events.all.contains("device-sign-in"))
    }
}
