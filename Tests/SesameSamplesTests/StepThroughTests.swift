import Foundation
import SesameCore
import SesameCoreTestSupport
import SesameService
import SesameTestSupport
import SesameWindowModel
import Synchronization
import Testing

/// Step-through, as the presenter meets it: a request waits before it leaves until Next, the
/// step about to happen is explained first, Continue lets everything go, and no wait is endless.
@MainActor
@Suite("Step-through holds the flow for the presenter")
struct StepThroughTests {
    static let tokenURL = URL(string: "https://login.example/contoso/oauth2/v2.0/token")!

    /// A transport that counts what reached the network.
    final class Network: Sendable {
        let sent = Atomic<Int>(0)
        var transport: FakeTransport {
            FakeTransport { _ in
                self.sent.add(1, ordering: .sequentiallyConsistent)
                return HTTPResponse(status: 200, body: Data(#"{"token_type":"Bearer"}"#.utf8))
            }
        }
    }

    static func waitingStep(_ trace: FlowTrace, number: Int = 1) async -> FlowTrace.Event? {
        await Eventually.value {
            trace.events.last { $0.name == "step-waiting" && $0.fields.contains { $0 == ("number", String(number)) } }
        }
    }

    @Test("off: a request goes at once, and the trace has no step-through event")
    func offGoesAtOnce() async throws {
        let trace = try FlowTrace(file: nil)
        let network = Network()
        let transport = TracingTransport(base: network.transport, trace: trace)
        _ = try await transport.send(HTTPRequest(method: "POST", url: Self.tokenURL), progress: nil)
        #expect(network.sent.load(ordering: .sequentiallyConsistent) == 1)
        #expect(!trace.events.contains { $0.name.hasPrefix("step-") })
    }

    @Test("on: the token request waits, explained, until Next lets that very step go; then it is sent once")
    func tokenRequestWaitsForNext() async throws {
        let trace = try FlowTrace(file: nil)
        let network = Network()
        let transport = TracingTransport(base: network.transport, trace: trace)
        trace.stepThrough.turnOn()
        let request = Task.detached { try await transport.send(HTTPRequest(method: "POST", url: Self.tokenURL), progress: nil) }

        let waiting = try #require(await Self.waitingStep(trace))
        #expect(network.sent.load(ordering: .sequentiallyConsistent) == 0, "the request left before Next")
        // The row says what comes, and its explanation says why before it happens.
        let diagram = FlowDiagram(trace.events)
        let row = try #require(diagram.steps.firstIndex { $0.label == "waits for Next: POST …/token" }, "\(diagram.steps.map(\.label))")
        let details = diagram.details(of: row)
        #expect(details.contains("Step-through: this step waits for you. Next (or Space) lets it happen; Continue runs the rest."))
        #expect(details.contains("The token request: the app sends the code with its code_verifier"), "\(details)")
        #expect(details.contains("Source: RFC 6749 §4.1.3"), "\(details)")
        #expect(waiting.fields.contains { $0 == ("url", "https://login.example/contoso/oauth2/v2.0/token") })

        // A Next for a step that is not waiting (a double press) lets nothing go.
        trace.stepThrough.next(2)
        #expect(trace.stepThrough.waitingCount == 1)
        trace.stepThrough.next(1)
        #expect(try await request.value.status == 200)
        #expect(network.sent.load(ordering: .sequentiallyConsistent) == 1)
        #expect(trace.events.contains { $0.name == "step-released" && $0.fields.contains { $0 == ("by", "next") } })
        // Still stepping: the next request waits too.
        #expect(trace.stepThrough.isOn)
    }

    @Test("Continue lets every waiting step go and ends step-through: the next request goes at once")
    func continueRunsTheRest() async throws {
        let trace = try FlowTrace(file: nil)
        let network = Network()
        let transport = TracingTransport(base: network.transport, trace: trace)
        trace.stepThrough.turnOn()
        let graph = URL(string: "https://graph.example/v1.0/me")!
        let first = Task.detached { try await transport.send(HTTPRequest(method: "GET", url: graph), progress: nil) }
        let second = Task.detached { try await transport.send(HTTPRequest(method: "GET", url: graph), progress: nil) }
        #expect(await Eventually.value { trace.stepThrough.waitingCount == 2 ? true : nil } == true)
        trace.stepThrough.continueTheRest()
        _ = try await (first.value, second.value)
        #expect(!trace.stepThrough.isOn)
        _ = try await transport.send(HTTPRequest(method: "GET", url: graph), progress: nil)
        #expect(network.sent.load(ordering: .sequentiallyConsistent) == 3)
    }

    @Test("a step nobody lets go goes ahead by itself after the longest hold, and the diagram says so")
    func boundedWait() async throws {
        let trace = try FlowTrace(file: nil, stepThrough: StepThrough(longestHold: .milliseconds(50)))
        let network = Network()
        let transport = TracingTransport(base: network.transport, trace: trace)
        trace.stepThrough.turnOn()
        #expect(try await transport.send(HTTPRequest(method: "POST", url: Self.tokenURL), progress: nil).status == 200)
        let released = try #require(await Eventually.value { trace.events.last { $0.name == "step-released" } })
        #expect(released.fields.contains { $0 == ("by", "limit") })
        let diagram = FlowDiagram(trace.events)
        let row = try #require(diagram.steps.firstIndex { $0.label == "went ahead by itself: it waited 8 minutes" })
        #expect(diagram.details(of: row).contains("the authorization code it may carry expires about 10 minutes after the redirect"))
    }

    @Test("a waiting request whose caller gives up (sign-out, quit) ends with the caller, and sends nothing")
    func cancelledWhileWaiting() async throws {
        let trace = try FlowTrace(file: nil)
        let network = Network()
        let transport = TracingTransport(base: network.transport, trace: trace)
        trace.stepThrough.turnOn()
        let request = Task.detached { try await transport.send(HTTPRequest(method: "POST", url: Self.tokenURL), progress: nil) }
        _ = try #require(await Self.waitingStep(trace))
        request.cancel()
        await #expect(throws: CancellationError.self) { try await request.value }
        #expect(trace.stepThrough.waitingCount == 0)
        #expect(network.sent.load(ordering: .sequentiallyConsistent) == 0)
    }
}
