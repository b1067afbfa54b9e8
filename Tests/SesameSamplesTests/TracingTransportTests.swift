import Dispatch
import Foundation
import SesameCore
import SesameCoreTestSupport
import SesameSamples
import SesameService
import SesameTestSupport
import SesameWindowModel
import Testing

@Suite("The traced transport")
struct TracingTransportTests {
    /// While the window is busy (laying out, painting: the main actor taken), an answer from the
    /// network goes on to the store at once; the trace gets its event when the window is free,
    /// with the time the answer came.
    @Test("an answer does not wait for a busy window, and its event keeps the answer's time")
    func answerDoesNotWaitForTheMainActor() async throws {
        let trace = try await MainActor.run { try FlowTrace(file: nil) }
        let transport = TracingTransport(base: FakeTransport { _ in HTTPResponse(status: 200) }, trace: trace)
        let request = HTTPRequest(method: "POST", url: try #require(URL(string: "https://127.0.0.1:8443/contoso/oauth2/v2.0/token")))

        // The main actor is held until the answer has reached its caller; it records when it
        // lets go. Were the answer to wait for the main actor, neither would go on: the bound is
        // a hang guard for that (a busy machine can take any time short of it), not a budget.
        let answered = DispatchSemaphore(value: 0)
        let mainHeld = DispatchSemaphore(value: 0)
        let busyWindow = Task { @MainActor in
            mainHeld.signal()
            let waited = answered.wait(timeout: .now() + 300)
            trace.record("window-free")
            return waited
        }
        // Waited for on a thread of its own: a task thread blocked here starves the others.
        try await OwnThread.run { mainHeld.wait() }
        let response = try await Task.detached { try await transport.send(request, progress: nil) }.value
        answered.signal()

        #expect(response.status == 200)
        #expect(await busyWindow.value == .success, "the answer waited for the main actor")
        let events = try #require(
            await Eventually.value {
                await MainActor.run { () -> [FlowTrace.Event]? in
                    trace.events.contains { $0.name == "token-request" } ? trace.events : nil
                }
            })
        let exchange = try #require(events.first { $0.name == "token-request" })
        let free = try #require(events.first { $0.name == "window-free" })
        #expect(exchange.fields.contains { $0 == ("status", "200") })
        // Recorded after the window was free, timed when the answer came, before that.
        #expect(events.firstIndex { $0.name == "window-free" }! < events.firstIndex { $0.name == "token-request" }!)
        #expect(exchange.time < free.time)
    }
}
