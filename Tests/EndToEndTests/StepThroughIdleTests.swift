import Foundation
import IdentityEmulator
import SesameCore
import SesameService
import SesameTestSupport
import Testing

/// A presenter in step-through stops before the token request and talks for five minutes: the
/// sign-in still completes when they press Next. What could end it is the authorization code,
/// which the identity service honours for 10 minutes after the redirect (Entra's limit, and the
/// emulator's); the wait is real, on both clocks, because a moved clock would prove nothing about
/// the store's and the emulator's own.
@Suite("Step-through: five minutes idle before the token request")
struct StepThroughIdleTests {
    @Test("5 minutes waiting before the token request, then Next: alex is signed in")
    func fiveMinutesIdle() async throws {
        let emulator = try await RunningEmulator()
        let settings = try SampleSettings.load(contentsOf: Repository.settings("directory.plist")).pointed(at: emulator.base)
        let trace = try await MainActor.run { try FlowTrace(file: nil) }
        let store = AccountStore(
            storage: FileTokenStorage(directory: Repository.temporaryDirectory("sesame-step-through")),
            transport: TracingTransport(base: AsyncHTTPClientTransport(), trace: trace))
        await store.setConfiguration(settings.accountConfiguration, forAccountType: settings.accountType)
        trace.stepThrough.turnOn()
        let signIn = Task {
            try await store.signIn(
                accountType: settings.accountType, using: HeadlessUserAgent.entra("alex@contoso.onmicrosoft.com", emulator: emulator))
        }

        // The presenter lets the steps before it go (discovery, keys) and stops at the token request.
        let token = await Eventually.value { @MainActor () -> Int? in
            for event in trace.events where event.name == "step-waiting" {
                let number = event.fields.first { $0.0 == "number" }.flatMap { Int($0.1) } ?? 0
                guard event.fields.contains(where: { $0 == ("step", "token-request") }) else {
                    trace.stepThrough.next(number)
                    continue
                }
                return number
            }
            return nil
        }
        let number = try #require(token, "the token request never waited")
        // Waits for the real clock: the five minutes a presenter talks, on the emulator's clock
        // (the code's age) and the store's alike; this is the wait the test is about.
        try await Task.sleep(for: .seconds(300))
        #expect(await MainActor.run { !trace.events.contains { $0.name == "token-request" } }, "the token request left before Next")
        trace.stepThrough.next(number)
        // The token request has gone; Continue runs the rest (the ID token's keys, say).
        #expect(await Eventually.value { @MainActor in trace.events.contains { $0.name == "token-request" } ? true : nil } == true)
        trace.stepThrough.continueTheRest()
        let account = try await signIn.value
        #expect(account.username == "alex@contoso.onmicrosoft.com")
        let answered = await MainActor.run { trace.events.last { $0.name == "token-request" } }
        #expect(answered?.fields.contains { $0 == ("status", "200") } == true)
    }
}
