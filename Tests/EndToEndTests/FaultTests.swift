import Foundation
import IdentityEmulator
import SesameCore
import SesameTestSupport
import Synchronization
import Testing

/// SesameCore against the emulator's injected faults, over real sockets: each fault ends in a
/// typed error with a sentence (never a trap, never a wait without end), retries happen only
/// where they are safe and as long as Retry-After says, and everything works again once the
/// fault is gone.
@Suite("The client under injected faults")
struct FaultTests {
    /// alex, signed in to the Directory sample on a fault-free emulator, and his Graph directory.
    struct Signed {
        let emulator: RunningEmulator
        let store: AccountStore
        let alex: Account
        let directory: GraphUserDirectory

        /// `transportTimeout`: the deadline of each Graph exchange. `sleep`: how the API client
        /// waits out `Retry-After` (the real clock, unless a test records it).
        init(
            transportTimeout: Duration = .seconds(60),
            // Retry-After waited out on the real clock, unless the test records it.
            sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
        ) async throws {
            emulator = try await RunningEmulator(users: 20)
            let settings = try SampleSettings.load(contentsOf: Repository.settings("directory.plist")).pointed(at: emulator.base)
            guard case .graph(let graph) = settings else { throw Failure(description: "not the Directory sample") }
            // The sign-in on the default deadline (a loaded machine can take seconds for it);
            // `transportTimeout` is Graph's, whose faults the tests inject.
            let transport = AsyncHTTPClientTransport(timeout: transportTimeout)
            store = AccountStore(
                storage: FileTokenStorage(directory: Repository.temporaryDirectory("sesame-faults")), transport: AsyncHTTPClientTransport())
            await store.setConfiguration(settings.accountConfiguration, forAccountType: settings.accountType)
            alex = try await store.signIn(
                accountType: settings.accountType, using: HeadlessUserAgent.entra("alex@contoso.onmicrosoft.com", emulator: emulator))
            directory = GraphUserDirectory(
                client: AuthorizedHTTPClient(store: store, transport: transport, sleep: sleep), account: alex, baseURL: graph.graphBaseURL)
        }

        /// `POST /.emulator/faults`: what a test harness (or a person) does while the emulator runs.
        func faults(_ spec: String) async throws {
            let response = try await AsyncHTTPClientTransport().send(
                HTTPRequest(method: "POST", url: emulator.base.appending(path: ".emulator/faults"), body: Data(spec.utf8)), progress: nil)
            #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        }
    }

    struct Failure: Error, CustomStringConvertible { let description: String }

    @Test("the emulator counts a request the moment it arrives, while a latency fault still holds its answer back")
    func requestsAreCountedWhileHeld() async throws {
        let signed = try await Signed()
        defer { signed.emulator.stop() }
        func graphRequests() async throws -> Int {
            let response = try await AsyncHTTPClientTransport().send(
                HTTPRequest(method: "GET", url: signed.emulator.base.appending(path: ".emulator/requests")), progress: nil)
            let counts = try JSONSerialization.jsonObject(with: response.body) as? [String: Int]
            return try #require(counts?["graph"], "\(String(decoding: response.body, as: UTF8.self))")
        }
        let before = try await graphRequests()
        try await signed.faults("graph:latency=3s")
        let search = Task { try await signed.directory.search("meg") }
        let counted = try await Eventually.value { () async throws -> Int? in
            let now = try await graphRequests()
            return now == before ? nil : now
        }
        #expect(counted == before + 1, "the held-back search was not counted while under way")
        try await signed.faults("")
        let found = try await search.value
        #expect(!found.users.isEmpty)
    }

    @Test(
        "a Graph fault is a typed error naming what happened, and the next search works once it is gone",
        arguments: [
            ("graph:status=500", "500"), ("graph:drop", "cut off"), ("graph:truncate", "could not be read"),
            ("graph:non-json", "could not be read"), ("graph:html", "502"), ("graph:oversized", "larger than"),
        ])
    func graphFaults(spec: String, evidence: String) async throws {
        let signed = try await Signed()
        defer { signed.emulator.stop() }
        try await signed.faults(spec)
        do {
            _ = try await signed.directory.search("meg")
            Issue.record("\(spec): the search succeeded")
        } catch let error as GraphError {
            #expect("\(error.status) \(error.code) \(error.message)".contains(evidence), "\(spec): \(error)")
        } catch let error as HTTPTransportError {
            #expect(error.description.contains(evidence), "\(spec): \(error)")
        }
        try await signed.faults("")
        #expect(try await !signed.directory.search("meg").users.isEmpty, "\(spec): no recovery after the fault went away")
    }

    @Test("added latency slows the answer and nothing else")
    func latency() async throws {
        let signed = try await Signed()
        defer { signed.emulator.stop() }
        try await signed.faults("graph:latency=300ms")
        let started = ContinuousClock.now
        #expect(try await !signed.directory.search("meg").users.isEmpty)
        #expect(started.duration(to: .now) >= .milliseconds(300))
    }

    @Test("a body that trickles ends at the transport's deadline with a sentence")
    func trickle() async throws {
        let signed = try await Signed(transportTimeout: .seconds(2))
        defer { signed.emulator.stop() }
        try await signed.faults("graph:trickle")
        // Ended by the exchange's own deadline, not by the trickle's end: the error says so.
        await #expect { _ = try await signed.directory.search("meg") } throws: { error in
            (error as? HTTPTransportError)?.kind == .timedOut
        }
    }

    @Test("503 with Retry-After is waited out as told, three times, then handed back")
    func retryAfter() async throws {
        let waits = Mutex<[Duration]>([])
        let signed = try await Signed { duration in waits.withLock { $0.append(duration) } }
        defer { signed.emulator.stop() }
        try await signed.faults("graph:status=503/1")
        await #expect(throws: GraphError.self) { _ = try await signed.directory.search("meg") }
        #expect(waits.withLock { $0 } == [.seconds(1), .seconds(1), .seconds(1)], "not waited as the service said")
    }

    @Test("a revoked refresh token means 'sign in again' with the service's code; the account is kept")
    func revokedRefreshToken() async throws {
        let signed = try await Signed()
        defer { signed.emulator.stop() }
        try await signed.faults("token:revoke-refresh")
        do {
            _ = try await signed.store.accessToken(for: signed.alex, forceRefresh: true)
            Issue.record("the refresh succeeded")
        } catch let error as AccountStoreError {
            #expect(error.code == .interactionRequired)
            #expect(error.serviceCode == "AADSTS50173")
        }
        #expect(try await signed.store.accounts(ofType: signed.alex.accountType).count == 1)
        try await signed.faults("")
    }

    @Test("a clock ten minutes ahead makes a refresh's id_token fail validation (typed); two minutes is tolerated")
    func clockSkew() async throws {
        let signed = try await Signed()
        defer { signed.emulator.stop() }
        try await signed.faults("skew=120")
        _ = try await signed.store.accessToken(for: signed.alex, forceRefresh: true)
        try await signed.faults("skew=600")
        await #expect(throws: AccountStoreError.self) { _ = try await signed.store.accessToken(for: signed.alex, forceRefresh: true) }
        try await signed.faults("")
        _ = try await signed.store.accessToken(for: signed.alex, forceRefresh: true)
    }

    @Test("faults drawn at a rate repeat with the same seed")
    func seeded() async throws {
        func pattern() async throws -> [Bool] {
            let signed = try await Signed()
            defer { signed.emulator.stop() }
            try await signed.faults("graph:status=500@0.5")
            var outcomes: [Bool] = []
            for _ in 0..<12 {
                do {
                    _ = try await signed.directory.search("a")
                    outcomes.append(true)
                } catch {
                    outcomes.append(false)
                }
            }
            return outcomes
        }
        let first = try await pattern()
        #expect(first.contains(true) && first.contains(false), "\(first)")
        #expect(try await pattern() == first)
    }
}

@Suite("Hostile search text")
struct HostileSearchTests {
    @Test("quotes, scripts, control characters and 10,000 characters: answers or typed errors, never a trap")
    func searches() async throws {
        let signed = try await FaultTests.Signed()
        defer { signed.emulator.stop() }
        #expect(
            try await signed.directory.search("O'Brien", mode: .peoplePicker).users.contains { ($0.displayName ?? "").contains("O'Brien") })
        #expect(try await !signed.directory.search("王", mode: .peoplePicker).users.isEmpty)
        for text in ["'", "''", "a') or (1 eq 1", "%00", "\u{0}", "Ωμέγα", "🙂", "a&$top=999", String(repeating: "a", count: 10_000)] {
            do {
                // Nobody's name starts with these: a filter that leaked the text into the query would list people.
                let page = try await signed.directory.search(text, mode: .peoplePicker)
                #expect(page.users.isEmpty || text == "Ωμέγα", "\(text.prefix(20)): \(page.users.count) people")
            } catch let error as GraphError {
                #expect(error.status >= 400, "\(text.prefix(20)): \(error)")
            }
        }
    }
}
