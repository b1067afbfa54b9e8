import Foundation
import SesameCore
import SesameCoreTestSupport
import Testing

/// A recorder for the client's waits, so throttling tests take no time.
final class SleepRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var durations: [Duration] = []
    var recorded: [Duration] { lock.withLock { durations } }
    func sleep(_ duration: Duration) async throws { lock.withLock { durations.append(duration) } }
}

/// A signed-in fixture plus a resource server behind the same fake transport.
struct ResourceFixture {
    let fixture = StoreFixture()
    let sleeps = SleepRecorder()
    let account: Account
    let client: AuthorizedHTTPClient

    init(resource: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) async throws {
        account = try await fixture.signIn()
        let identity = fixture.provider.transport
        let handler = FakeTransport()
        let provider = fixture.provider
        handler.setHandler { request in
            request.url.host == "login.microsoftonline.com" ? try await provider.transport.send(request) : try await resource(request)
        }
        _ = identity
        let sleeps = sleeps
        client = AuthorizedHTTPClient(store: fixture.store, transport: handler, sleep: { try await sleeps.sleep($0) })
        resourceTransport = handler
    }

    let resourceTransport: FakeTransport
    var resourceRequests: [HTTPRequest] { resourceTransport.requests.filter { $0.url.host != "login.microsoftonline.com" } }
}

@Suite("Authorized requests")
struct AuthorizedRequestTests {
    @Test("GET parameters go in the query, escaped, and the bearer token is attached")
    func getQuery() async throws {
        let resource = try await ResourceFixture { _ in json(["ok": true]) }
        defer { resource.fixture.remove() }
        let request = ResourceRequest(
            url: URL(string: "https://graph.microsoft.com/v1.0/users")!,
            parameters: [.init("$filter", "startswith(givenName,'O''Brien')"), .init("$top", "5")])
        let response = try await resource.client.perform(request, as: resource.account)
        #expect(response.status == 200)
        let sent = try #require(resource.resourceRequests.first)
        #expect(
            sent.url.absoluteString
                == "https://graph.microsoft.com/v1.0/users?$filter=startswith%28givenName%2C%27O%27%27Brien%27%29&$top=5")
        #expect(sent.query["$filter"] == "startswith(givenName,'O''Brien')")
        let token = try await resource.fixture.store.accessToken(for: resource.account)
        #expect(sent.headers["Authorization"] == "Bearer \(token.secret.revealed)")
        #expect(sent.body == nil)
    }

    @Test("POST parameters become a form body, or JSON when asked")
    func postBodies() async throws {
        let resource = try await ResourceFixture { _ in HTTPResponse(status: 204) }
        defer { resource.fixture.remove() }
        let url = URL(string: "https://tasks.example/api/tasks")!
        _ = try await resource.client.perform(
            ResourceRequest(method: "POST", url: url, parameters: [.init("Text", "a & b")]), as: resource.account)
        _ = try await resource.client.perform(
            ResourceRequest(method: "POST", url: url, parameters: [.init("Text", "a & b")], parameterEncoding: .json), as: resource.account)
        let (form, jsonRequest) = (resource.resourceRequests[0], resource.resourceRequests[1])
        #expect(form.headers["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(String(decoding: form.body!, as: UTF8.self) == "Text=a%20%26%20b")
        #expect(jsonRequest.headers["Content-Type"] == "application/json")
        #expect(String(decoding: jsonRequest.body!, as: UTF8.self) == #"{"Text":"a & b"}"#)
    }

    @Test("a 401 refreshes the token once and retries with the new one")
    func refreshOn401() async throws {
        let calls = Counter()
        let resource = try await ResourceFixture { request in
            calls.increment() == 1 ? HTTPResponse(status: 401) : json(["ok": true])
        }
        defer { resource.fixture.remove() }
        let response = try await resource.client.perform(
            ResourceRequest(url: URL(string: "https://graph.microsoft.com/v1.0/me")!), as: resource.account)
        #expect(response.status == 200)
        #expect(resource.fixture.provider.refreshCount == 1)
        let sent = resource.resourceRequests
        #expect(sent.count == 2)
        #expect(sent[0].headers["Authorization"] != sent[1].headers["Authorization"])
    }

    @Test("a second 401 is returned to the caller, not retried forever")
    func persistent401() async throws {
        let resource = try await ResourceFixture { _ in HTTPResponse(status: 401) }
        defer { resource.fixture.remove() }
        let response = try await resource.client.perform(
            ResourceRequest(url: URL(string: "https://graph.microsoft.com/v1.0/me")!), as: resource.account)
        #expect(response.status == 401)
        #expect(resource.resourceRequests.count == 2)
        #expect(resource.fixture.provider.refreshCount == 1)
    }

    @Test("429 and 503 wait as long as Retry-After says, then retry")
    func retryAfter() async throws {
        let calls = Counter()
        let resource = try await ResourceFixture { _ in
            switch calls.increment() {
            case 1: HTTPResponse(status: 429, headers: ["Retry-After": "7"])
            case 2: HTTPResponse(status: 503, headers: ["Retry-After": "2"])
            default: json(["ok": true])
            }
        }
        defer { resource.fixture.remove() }
        let response = try await resource.client.perform(
            ResourceRequest(url: URL(string: "https://graph.microsoft.com/v1.0/users")!), as: resource.account)
        #expect(response.status == 200)
        #expect(resource.sleeps.recorded == [.seconds(7), .seconds(2)])
    }

    @Test("a throttle beyond the limits is handed back instead of waited out")
    func throttleLimits() async throws {
        let resource = try await ResourceFixture { _ in HTTPResponse(status: 429, headers: ["Retry-After": "3600"]) }
        defer { resource.fixture.remove() }
        let response = try await resource.client.perform(
            ResourceRequest(url: URL(string: "https://graph.microsoft.com/v1.0/users")!), as: resource.account)
        #expect(response.status == 429)
        #expect(resource.sleeps.recorded.isEmpty)

        let always = try await ResourceFixture { _ in HTTPResponse(status: 503, headers: ["Retry-After": "1"]) }
        defer { always.fixture.remove() }
        _ = try await always.client.perform(
            ResourceRequest(url: URL(string: "https://graph.microsoft.com/v1.0/users")!), as: always.account)
        #expect(always.sleeps.recorded.count == 3)
        #expect(always.resourceRequests.count == 4)
    }

    @Test("a throttled POST is sent again only with an Idempotency-Key; without one the 429 goes back to the caller")
    func throttledPOST() async throws {
        let resource = try await ResourceFixture { _ in HTTPResponse(status: 429, headers: ["Retry-After": "1"]) }
        defer { resource.fixture.remove() }
        let url = URL(string: "https://tasks.example/api/tasks")!
        let plain = ResourceRequest(method: "POST", url: url, parameters: [.init("Text", "Water the plants")], parameterEncoding: .json)
        #expect(try await resource.client.perform(plain, as: resource.account).status == 429)
        #expect(resource.resourceRequests.count == 1, "a POST without a key was sent twice")

        var keyed = plain
        keyed.headers["Idempotency-Key"] = "k-1"
        _ = try await resource.client.perform(keyed, as: resource.account)
        #expect(resource.resourceRequests.count == 1 + 4)
        #expect(resource.resourceRequests.dropFirst().allSatisfy { $0.headers["Idempotency-Key"] == "k-1" })
    }

    @Test("Retry-After as an HTTP date is read")
    func httpDate() {
        let now = Date(timeIntervalSince1970: 1_445_412_480)  // Wed, 21 Oct 2015 07:28:00 GMT
        #expect(AuthorizedHTTPClient.retryAfter("Wed, 21 Oct 2015 07:28:30 GMT", now: now) == .seconds(30))
        #expect(AuthorizedHTTPClient.retryAfter("soon", now: now) == nil)
    }

    @Test("progress is reported for a large body")
    func progress() async throws {
        let resource = try await ResourceFixture { _ in HTTPResponse(status: 201, body: Data(count: 1000)) }
        defer { resource.fixture.remove() }
        let reports = ProgressLog()
        let body = Data(count: 300_000)
        _ = try await resource.client.perform(
            ResourceRequest(method: "PUT", url: URL(string: "https://graph.microsoft.com/v1.0/me/photo/$value")!, body: body),
            as: resource.account, progress: { reports.append($0) })
        #expect(reports.all.contains { $0.direction == .upload && $0.completedBytes == 300_000 && $0.fractionCompleted == 1 })
        #expect(reports.all.contains { $0.direction == .download && $0.completedBytes == 1000 })
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func increment() -> Int {
        lock.withLock {
            value += 1
            return value
        }
    }
}

final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var reports: [TransferProgress] = []
    func append(_ report: TransferProgress) { lock.withLock { reports.append(report) } }
    var all: [TransferProgress] { lock.withLock { reports } }
}
