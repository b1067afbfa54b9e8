import Foundation
import SesameCore
import SesameCoreTestSupport
import SesameSamples
import SesameService
import SesameWindowModel
import Synchronization

/// The samples' view models over the fake identity provider plus a fake Graph users API and
/// task API, with real file storage: what each page does, with no widget and no network.
@MainActor
final class SamplesFixture {
    let provider = FakeIdentityProvider()
    let directory = temporaryDirectory()
    let trace: FlowTrace
    let model: AppModel
    let apis: FakeAPIs
    /// The user agent: the user signs in at once (each session gets the provider's redirect).
    let agent: FakeUserAgent

    init() async throws {
        let provider = provider
        let apis = FakeAPIs()
        self.apis = apis
        let transport = FakeTransport { request in
            if request.url.host == "graph.microsoft.com" || request.url.host == "tasks.example" {
                return try await apis.handle(request)
            }
            return try await provider.handle(request)
        }
        self.transportRequests = { transport.requests }
        trace = try FlowTrace(file: nil)
        let clock = provider.clock
        let store = AccountStore(storage: FileTokenStorage(directory: directory), transport: transport, now: { clock.now })
        model = await AppModel(store: store, settings: try Self.settings(clientID: provider.clientID), trace: trace, transport: transport)
        agent = FakeUserAgent(provider: provider)
    }

    let transportRequests: @Sendable () -> [HTTPRequest]

    /// The bundled samples' settings, with the fake provider's client id (its tokens name it)
    /// and the task API on a host the fake APIs answer.
    static func settings(clientID: String) throws -> [SampleSettings] {
        let root = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../Resources/settings").standardized
        return try ["directory", "tasks", "me"].map { name in
            switch try SampleSettings.load(contentsOf: root.appending(path: "\(name).plist")) {
            case .graph(var graph):
                graph.clientID = clientID
                return .graph(graph)
            case .b2c(var b2c):
                b2c.clientID = clientID
                b2c.scopes = ["openid", "offline_access", clientID]
                b2c.taskAPI = URL(string: "https://tasks.example")!
                return .b2c(b2c)
            case .msal(var msal):
                msal.clientID = clientID
                return .msal(msal)
            case .openID(var openID):
                openID.clientID = clientID
                return .openID(openID)
            }
        }
    }

    /// A session of a sample, signing in through `agent` (the fixture's own by default).
    func session(_ kind: Sample.Kind, agent: (any SignInUserAgent)? = nil, failures: (any SignInFailurePresenter)? = nil) -> SampleSession {
        SampleSession(sample: model.sample(kind)!, model: model, userAgent: agent ?? self.agent, failures: failures)
    }

    func events(_ name: String) -> [FlowTrace.Event] { trace.events.filter { $0.name == name } }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}

/// Microsoft Graph's users API and the B2C sample's task API, as far as the samples use them;
/// a test can hold back an answer until it says so, fail the next request, or count them.
final class FakeAPIs: Sendable {
    private struct State {
        var users: [[String: Any]] = FakeAPIs.people
        var tasks: [String] = []
        var postedKeys: [String] = []
        var held: [String: CheckedContinuation<Void, Never>] = [:]
        var holding: Set<String> = []
        var failNext: Int?
        var failuresLeft = 0
    }

    private let state = Mutex(State())

    nonisolated(unsafe) static let people: [[String: Any]] = (0..<120).map { index in
        let name = index < 3 ? ["Megan Bowen", "Megan Carter", "Meg Ryan"][index] : String(format: "Person %03d", index)
        return [
            "id": "id-\(index)", "displayName": name, "userPrincipalName": "user\(index)@contoso.onmicrosoft.com",
            "mail": "user\(index)@contoso.com", "businessPhones": [String](),
        ]
    }

    /// Holds the answer to searches whose filter contains `text` until ``release(_:)``.
    func hold(_ text: String) { state.withLock { _ = $0.holding.insert(text) } }

    /// Lets a held answer go.
    func release(_ text: String) {
        let waiter = state.withLock { state in
            state.holding.remove(text)
            return state.held.removeValue(forKey: text)
        }
        waiter?.resume()
    }

    /// Whether an answer for `text` is being held.
    func isHolding(_ text: String) -> Bool { state.withLock { $0.held[text] != nil } }

    /// The next `count` API requests answer `status`.
    func failNext(_ count: Int = 1, with status: Int) {
        state.withLock {
            $0.failNext = status
            $0.failuresLeft = count
        }
    }

    var tasks: [String] { state.withLock { $0.tasks } }
    /// The `Idempotency-Key` of each task POST that reached the API, in order.
    var postedKeys: [String] { state.withLock { $0.postedKeys } }

    func handle(_ request: HTTPRequest) async throws -> HTTPResponse {
        if request.method == "POST", let key = request.headers["Idempotency-Key"] { state.withLock { $0.postedKeys.append(key) } }
        if let status = state.withLock({ state -> Int? in
            guard let status = state.failNext else { return nil }
            state.failuresLeft -= 1
            if state.failuresLeft <= 0 { state.failNext = nil }
            return status
        }) {
            return json(["error": ["code": "ServiceUnavailable", "message": "The service is down for the test."]], status: status)
        }
        if request.url.host == "tasks.example" { return tasks(request) }
        let filter = request.query["$filter"] ?? ""
        let needle = filter.firstMatch(of: /startswith\(displayName,'([^']*)'\)/).map { String($0.1) } ?? ""
        if state.withLock({ $0.holding.contains(needle) }) {
            await withCheckedContinuation { continuation in state.withLock { $0.held[needle] = continuation } }
        }
        let top = Int(request.query["$top"] ?? "") ?? 50
        let skip = Int(request.query["$skiptoken"] ?? "") ?? 0
        let matching = state.withLock { $0.users }.filter { user in
            needle.isEmpty || (user["displayName"] as? String ?? "").lowercased().hasPrefix(needle.lowercased())
        }
        let page = Array(matching.dropFirst(skip).prefix(top))
        var body: [String: Any] = ["value": page]
        if skip + top < matching.count {
            var next = URLComponents(url: request.url, resolvingAgainstBaseURL: false)!
            next.queryItems =
                (next.queryItems ?? []).filter { $0.name != "$skiptoken" } + [URLQueryItem(name: "$skiptoken", value: String(skip + top))]
            body["@odata.nextLink"] = next.url!.absoluteString
        }
        return json(body)
    }

    private func tasks(_ request: HTTPRequest) -> HTTPResponse {
        if request.method == "POST" {
            let object = (try? JSONSerialization.jsonObject(with: request.body ?? Data())) as? [String: Any]
            state.withLock { $0.tasks.append(object?["Text"] as? String ?? "") }
            return HTTPResponse(status: 204)
        }
        let items = state.withLock { $0.tasks }.enumerated().map { index, text in
            ["Id": index + 1, "Owner": "sam", "Text": text, "Completed": false] as [String: Any]
        }
        return json(items)
    }
}

/// Answers a sign-in error as a user would: Retry a given number of times, then Cancel.
@MainActor
final class ScriptedFailures: SignInFailurePresenter {
    private var retries: Int
    private(set) var shown: [AccountStoreError] = []

    init(retries: Int) { self.retries = retries }

    func retryAfter(_ error: AccountStoreError) async -> Bool {
        shown.append(error)
        guard retries > 0 else { return false }
        retries -= 1
        return true
    }
}
