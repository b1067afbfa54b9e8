import Foundation
import SesameCore
import SesameCoreTestSupport
import SesameService
import SesameTestSupport
import Testing

/// The window's sign-in for the broker, held open until the test (or a cancel) ends it.
@MainActor
final class HeldBrokerSignIn: BrokerSignIn {
    let store: AccountStore
    let agent: any SignInUserAgent
    private(set) var shown: [ProgramIdentity] = []
    private(set) var cancelled = 0
    private var released = false

    init(store: AccountStore, agent: any SignInUserAgent) {
        self.store = store
        self.agent = agent
    }

    func brokerSignIn(
        accountType: String, program: ProgramIdentity, parameters: [String: String]
    ) async throws(AccountStoreError)
        -> Account
    {
        shown.append(program)
        // The page stays until the user finishes it (`release`) or it is cancelled.
        while !released, cancelled == 0 { await Task.yield() }
        if cancelled > 0 { throw AccountStoreError(.cancelled, "Sign-in was cancelled.") }
        return try await store.signIn(accountType: accountType, parameters: parameters, using: agent)
    }

    func release() { released = true }

    func cancelBrokerSignIn() { cancelled += 1 }
}

/// What a program the user never allowed can do to another's broker requests, and learn from
/// the broker: nothing.
@MainActor
@Suite("The broker and a program that was never allowed")
struct BrokerForeignCallerTests {
    static let app = ProgramIdentity.executable("/usr/bin/python3.11")!
    static let stranger = ProgramIdentity.executable("/opt/x/stranger")!

    /// `request` answered by `broker` in a task of its own: its reply, parsed once the task ends.
    static func started(_ broker: BrokerService, _ json: String, as program: ProgramIdentity) -> Task<String, any Error> {
        Task {
            let request = try BrokerRequest.parse(
                method: BrokerMethod.acquireTokenInteractively.rawValue, protocolVersion: "0.0", correlationID: "c", request: json)
            return await broker.answer(request, from: program)
        }
    }

    static func parsed(_ reply: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any])
    }

    @Test("cancelInteractiveFlow from another program is refused and the sign-in goes on; the program's own ends it")
    func foreignCancel() async throws {
        let fixture = try await SamplesFixture()
        defer { fixture.remove() }
        let service = AccountService(
            store: fixture.model.store, accountTypes: fixture.model.samples.map(\.accountType), trace: fixture.trace,
            access: ProgramAccess(file: nil), trusted: [])
        let questions = ScriptedQuestions([.allowOnce, .allowOnce])
        service.questioner = questions
        let broker = BrokerService(service: service, store: fixture.model.store, trace: fixture.trace, version: "0.3.0", extraHosts: [])
        let signer = HeldBrokerSignIn(store: fixture.model.store, agent: fixture.agent)
        broker.signer = signer
        let request = BrokerServiceTests.parameters(fixture, type: 6)

        let first = Self.started(broker, request, as: Self.app)
        #expect(await Eventually.holds { signer.shown.count == 1 })
        let foreign = try await BrokerServiceTests.ask(broker, .cancelInteractiveFlow, "{}", as: Self.stranger)
        #expect(BrokerServiceTests.status(foreign) != nil, "another program's cancel was answered as done: \(foreign)")
        #expect(signer.cancelled == 0, "another program ended the sign-in on screen")
        signer.release()
        let token = BrokerServiceTests.tokenResponse(try Self.parsed(try await first.value))
        #expect((token["accessToken"] as? String)?.isEmpty == false, "the sign-in did not go on: \(token)")

        // The program's own cancel ends its own sign-in.
        let held = HeldBrokerSignIn(store: fixture.model.store, agent: fixture.agent)
        broker.signer = held
        let second = Self.started(broker, request, as: Self.stranger)
        #expect(await Eventually.holds { held.shown.count == 1 })
        #expect(try await BrokerServiceTests.ask(broker, .cancelInteractiveFlow, "{}", as: Self.stranger).isEmpty)
        #expect(held.cancelled == 1)
        #expect(BrokerServiceTests.status(try Self.parsed(try await second.value)) == BrokerStatus.userCanceled.rawValue)
        withExtendedLifetime(questions) {}
    }

    @Test("generateSignedHttpRequest answers a program never allowed the same whether or not the computer is registered")
    func signedRequestTellsNothing() async throws {
        // Not registered: the samples' store, no device.
        let fixture = try await SamplesFixture()
        defer { fixture.remove() }
        let plain = AccountService(
            store: fixture.model.store, accountTypes: [], trace: fixture.trace, access: ProgramAccess(file: nil), trusted: [])
        let unregistered = BrokerService(
            service: plain, store: fixture.model.store, trace: fixture.trace, version: "0.3.0", extraHosts: [])
        // Registered, through the emulator's pages.
        let computer = try await UndecidedProgramTests.computer()
        defer { try? FileManager.default.removeItem(at: computer.folder) }
        let registered = BrokerService(
            service: computer.service, store: computer.store, trace: computer.trace, version: "0.3.0", extraHosts: [])
        let questions = ScriptedQuestions([])
        computer.service.questioner = questions

        let before = try await BrokerServiceTests.ask(unregistered, .generateSignedHttpRequest, "{}", as: Self.stranger)
        let after = try await BrokerServiceTests.ask(registered, .generateSignedHttpRequest, "{}", as: Self.stranger)
        let error = { (reply: [String: Any]) in (BrokerServiceTests.tokenResponse(reply)["error"] as? [String: Any]) ?? [:] }
        #expect(error(before)["status"] as? Int != nil)
        #expect(
            NSDictionary(dictionary: error(before)) == NSDictionary(dictionary: error(after)),
            "the answer tells whether the computer is registered: \(error(before)) / \(error(after))")
        #expect(questions.asked.isEmpty)
    }
}
