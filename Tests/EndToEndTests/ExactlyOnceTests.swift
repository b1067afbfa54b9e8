import Foundation
import IdentityEmulator
import SesameCore
import SesameTestSupport
import Synchronization
import Testing

/// Adding a task is exactly-once against the real emulator over real sockets, while a fifth of
/// the exchanges fail: lost before they reach the API, or — the hard case — done by the API with
/// the answer lost on the way back.
@Suite("Exactly-once task adds")
struct ExactlyOnceTests {
    /// The real transport, with seeded faults on the task API's POSTs: 10 % never sent, 10 %
    /// sent and done with the answer dropped.
    final class LossyTransport: HTTPTransport {
        private let base = AsyncHTTPClientTransport()
        private let state = Mutex((random: SeededGenerator(seed: 11), lostBefore: 0, lostAfter: 0))

        var lost: (before: Int, after: Int) { state.withLock { ($0.lostBefore, $0.lostAfter) } }

        func send(_ request: HTTPRequest, progress: (@Sendable (TransferProgress) -> Void)?) async throws -> HTTPResponse {
            guard request.method == "POST", request.url.path.hasSuffix("/api/tasks") else {
                return try await base.send(request, progress: progress)
            }
            let roll = state.withLock { $0.random.next() % 10 }
            if roll == 0 {
                state.withLock { $0.lostBefore += 1 }
                throw HTTPTransportError(url: request.url, reason: "the connection was reset before the request was sent")
            }
            let response = try await base.send(request, progress: progress)
            if roll == 1 {
                state.withLock { $0.lostAfter += 1 }
                throw HTTPTransportError(url: request.url, reason: "the connection was reset before the answer came")
            }
            return response
        }
    }

    @Test("500 tasks added under 20 % failures and dropped answers are there exactly once each")
    func fiveHundredTasks() async throws {
        let emulator = try await RunningEmulator(users: 10)
        let settings = try SampleSettings.load(contentsOf: Repository.settings("tasks.plist")).pointed(at: emulator.base)
        guard case .b2c(let b2c) = settings else {
            Issue.record("not the B2C sample")
            return
        }
        let lossy = LossyTransport()
        let store = AccountStore(storage: FileTokenStorage(directory: Repository.temporaryDirectory("sesame-once")), transport: lossy)
        await store.setConfiguration(settings.accountConfiguration, forAccountType: settings.accountType)
        let sam = try await store.signIn(
            accountType: settings.accountType, using: HeadlessUserAgent.b2c("sam@example.com", emulator: emulator))
        let tasks = TaskService(client: AuthorizedHTTPClient(store: store, transport: lossy), account: sam, baseURL: b2c.taskAPI)

        let texts = (1...500).map { "Task \($0)" }
        for text in texts {
            // What the Tasks page does: one key per task the user means to add, kept until the
            // service has it; "Add" again after a failure sends the same key.
            let key = UUID().uuidString
            var attempts = 0
            while true {
                attempts += 1
                do {
                    try await tasks.add(text, idempotencyKey: key)
                    break
                } catch is HTTPTransportError where attempts < 20 {
                    continue
                }
            }
        }
        let listed = try await tasks.tasks().map(\.text)
        #expect(lossy.lost.before > 20 && lossy.lost.after > 20, "too few faults to mean anything: \(lossy.lost)")
        #expect(listed.count == 500, "\(listed.count) tasks for 500 adds (\(lossy.lost.after) answers were lost)")
        #expect(listed.sorted() == texts.sorted())
    }
}
