import Foundation
import SesameCoreTestSupport
import Synchronization
import Testing

@testable import SesameCore

/// The device code flow (RFC 8628) from the store's side: what the user is told, how it polls,
/// and how each end is reported.
@Suite("Device code sign-in")
struct DeviceCodeSignInTests {
    /// The waits the store asked for, instead of sleeping.
    final class Waits: Sendable {
        let recorded = Mutex<[Duration]>([])
        var all: [Duration] { recorded.withLock { $0 } }
    }

    func fixture() async -> (StoreFixture, Waits) {
        let fixture = StoreFixture()
        await fixture.configure()
        let waits = Waits()
        await fixture.store.setPollingSleep { duration in waits.recorded.withLock { $0.append(duration) } }
        return (fixture, waits)
    }

    @Test("the user is told where to go; pending keeps polling, slow_down adds five seconds, then the account is stored")
    func signsIn() async throws {
        let (fixture, waits) = await fixture()
        defer { fixture.remove() }
        fixture.provider.deviceAnswers = ["authorization_pending", "slow_down", "authorization_pending", "ok"]
        let shown = Mutex<[String]>([])
        let account = try await fixture.store.signInWithDeviceCode(accountType: fixture.accountType) { authorization in
            shown.withLock { $0.append(authorization.instructions) }
        }
        #expect(account.username == "alex@contoso.onmicrosoft.com")
        #expect(shown.withLock { $0 } == [fixture.provider.deviceAuthorization["message"] as? String])
        #expect(waits.all == [.seconds(1), .seconds(1), .seconds(6), .seconds(6)])
        #expect(fixture.provider.devicePolls == 4)
        let stored = try await fixture.store.accounts(ofType: fixture.accountType)
        #expect(stored.map(\.username) == ["alex@contoso.onmicrosoft.com"])
        let token = try await fixture.store.accessToken(for: account)
        #expect(!token.secret.revealed.isEmpty)
    }

    @Test("declined and expired codes are told apart, and nothing is stored")
    func declinedAndExpired() async throws {
        for (answer, code) in [
            ("authorization_declined", AccountStoreError.Code.deviceCodeDeclined), ("expired_token", .deviceCodeExpired),
        ] {
            let (fixture, _) = await fixture()
            defer { fixture.remove() }
            fixture.provider.deviceAnswers = ["authorization_pending", answer]
            do {
                _ = try await fixture.store.signInWithDeviceCode(accountType: fixture.accountType) { _ in }
                Issue.record("\(answer) signed in")
            } catch {
                #expect(error.code == code, "\(answer)")
            }
            #expect(try await fixture.store.accounts(ofType: fixture.accountType).isEmpty)
        }
    }

    @Test("past expires_in the store stops polling by itself")
    func stopsAtExpiry() async throws {
        let (fixture, _) = await fixture()
        defer { fixture.remove() }
        var answer = fixture.provider.deviceAuthorization
        answer["expires_in"] = 3
        fixture.provider.deviceAuthorization = answer
        fixture.provider.deviceAnswers = Array(repeating: "authorization_pending", count: 50)
        await fixture.store.setPollingSleep { duration in fixture.clock.advance(by: Double(duration.components.seconds)) }
        do {
            _ = try await fixture.store.signInWithDeviceCode(accountType: fixture.accountType) { _ in }
            Issue.record("a code past its lifetime signed in")
        } catch {
            #expect(error.code == .deviceCodeExpired)
        }
        #expect(fixture.provider.devicePolls == 3)
    }

    @Test("cancelling the task stops polling: cancelled, nothing stored")
    func cancels() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        await fixture.configure()
        fixture.provider.deviceAnswers = Array(repeating: "authorization_pending", count: 1000)
        let shown = AsyncStream<Void>.makeStream()
        let task = Task {
            try await fixture.store.signInWithDeviceCode(accountType: fixture.accountType) { _ in shown.continuation.yield() }
        }
        for await _ in shown.stream { break }
        task.cancel()
        do {
            _ = try await task.value
            Issue.record("a cancelled sign-in signed in")
        } catch let error as AccountStoreError {
            #expect(error.code == .cancelled)
        }
        #expect(try await fixture.store.accounts(ofType: fixture.accountType).isEmpty)
    }

    @Test("a hostile device authorization answer: control characters never reach the terminal, bad pages and sizes are refused")
    func hostileAnswer() async throws {
        let (fixture, _) = await fixture()
        defer { fixture.remove() }
        var answer = fixture.provider.deviceAuthorization
        answer["message"] = "Open \u{1B}]8;;https://evil.example\u{7}the page\u{1B}[2J and type FJQ8HWMS6"
        answer["interval"] = 100_000
        fixture.provider.deviceAuthorization = answer
        let shown = Mutex<String>("")
        let waits = Waits()
        await fixture.store.setPollingSleep { duration in waits.recorded.withLock { $0.append(duration) } }
        _ = try await fixture.store.signInWithDeviceCode(accountType: fixture.accountType) { authorization in
            shown.withLock { $0 = authorization.instructions }
        }
        #expect(!shown.withLock { $0 }.unicodeScalars.contains { CharacterSet.controlCharacters.contains($0) })
        #expect(waits.all == [.seconds(60)], "the interval is clamped to a minute")

        for (field, value) in [("verification_uri", "javascript:alert(1)"), ("user_code", String(repeating: "A", count: 65))] {
            var bad = fixture.provider.deviceAuthorization
            bad[field] = value
            fixture.provider.deviceAuthorization = bad
            do {
                _ = try await fixture.store.signInWithDeviceCode(accountType: fixture.accountType) { _ in }
                Issue.record("\(field) = \(value) was accepted")
            } catch {
                #expect(error.code == .invalidResponse, "\(field)")
                #expect(!error.message.contains("device-code-secret"))
            }
        }
    }

    @Test("a refusal answered with HTTP 200 (as Entra answers /devicecode) is the service's error, with its code")
    func refusalWithStatus200() async throws {
        let (fixture, _) = await fixture()
        defer { fixture.remove() }
        fixture.provider.deviceAuthorization = [
            "error": "invalid_request", "error_codes": [90086],
            "error_description": "AADB2C90086: The supplied grant_type is not supported.",
        ]
        do {
            _ = try await fixture.store.signInWithDeviceCode(accountType: fixture.accountType) { _ in
                Issue.record("the user was told to go somewhere")
            }
        } catch {
            #expect(error.code == .tokenRequestFailed)
            #expect(error.serviceCode == "AADB2C90086")
        }
        #expect(fixture.provider.devicePolls == 0)
    }

    @Test("a poll's device_code never appears in the request's description")
    func redacted() {
        let request = DeviceCodeTokenRequest(clientID: "client", deviceCode: Secret("device-code-secret"), requestsClientInfo: true)
        #expect(!request.description.contains("device-code-secret"))
        #expect(request.formFields.contains { $0 == ("device_code", "device-code-secret") })
    }
}
