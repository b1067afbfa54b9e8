import AsyncHTTPClient
import Foundation
import IdentityEmulator
import NIOCore
import SesameCore
import Testing

/// SesameCore against the identity emulator over real sockets: two independent implementations
/// of the wire, each catching the other's mistakes. The bundled sample settings are pointed at the
/// emulator exactly as `sesame --emulator URL` does.
@Suite("SesameCore ↔ identity emulator", .serialized)
struct CoreAgainstEmulatorTests {
    /// A running emulator on a free port, stopped when the test ends.
    final class RunningEmulator: Sendable {
        let base: URL
        let emulator: IdentityEmulator
        private let task: Task<Void, any Error>

        init(users: Int = 300, announce: @escaping @Sendable (String) -> Void = { _ in }) async throws {
            var configuration = EmulatorConfiguration()
            configuration.userCount = users
            configuration.announce = announce
            let emulator = try await IdentityEmulator(configuration: configuration)
            let (stream, continuation) = AsyncStream<URL>.makeStream()
            task = Task { try await emulator.run { url, _ in continuation.yield(url) } }
            var iterator = stream.makeAsyncIterator()
            guard let base = await iterator.next() else { throw CancellationError() }
            self.base = base
            self.emulator = emulator
        }

        deinit { task.cancel() }
    }

    static let resources = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../Resources/settings").standardized

    static func settings(_ name: String, at base: URL) throws -> SampleSettings {
        try SampleSettings.load(contentsOf: resources.appending(path: name)).pointed(at: base)
    }

    static func store() -> AccountStore {
        let directory = FileManager.default.temporaryDirectory.appending(path: "sesame-e2e-\(UUID().uuidString)")
        return AccountStore(storage: FileTokenStorage(directory: directory), transport: AsyncHTTPClientTransport())
    }

    /// Plays the web view: loads the authorization URL, fills the pages by Microsoft's field
    /// names, and stops at the first navigation the pending sign-in recognises as its redirect.
    static func browse(_ pending: PendingAuthorization, fill: [String: String]) async throws -> URL {
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        defer { Task { try? await client.shutdown() } }
        var response = try await client.execute(HTTPClientRequest(url: pending.url.absoluteString), timeout: .seconds(10))
        var current = pending.url
        for _ in 0..<12 {
            if let location = response.headers.first(name: "Location"), let target = URL(string: location, relativeTo: current)?.absoluteURL {
                if pending.isRedirect(target) { return target }
                current = target
                response = try await client.execute(HTTPClientRequest(url: target.absoluteString), timeout: .seconds(10))
                continue
            }
            let page = String(buffer: try await response.body.collect(upTo: 1 << 20))
            let action = try #require(page.firstCapture(#"<form method="post" action="([^"]*)""#), "no form: \(page.prefix(400))")
            var fields: [(String, String)] = page.captures(#"<input type="hidden" name="([^"]*)" value="([^"]*)">"#)
            for (name, value) in fill where page.contains(#"name="\#(name)""#) { fields.append((name, value)) }
            if let primary = page.firstCapture(#"name="([a-z]+)" value="([a-z]+)" id="idSIButton9""#, group: 1),
               let value = page.firstCapture(#"name="[a-z]+" value="([a-z]+)" id="idSIButton9""#) {
                fields.append((primary, value))
            }
            var request = HTTPClientRequest(url: URL(string: action, relativeTo: current)!.absoluteString)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: fields.map { "\($0.0.formEncoded)=\($0.1.formEncoded)" }.joined(separator: "&")))
            current = URL(string: action, relativeTo: current)!.absoluteURL
            response = try await client.execute(request, timeout: .seconds(10))
        }
        Issue.record("the sign-in pages never redirected to the app")
        throw CancellationError()
    }

    @Test("Directory: alex signs in, the account is named, Graph search finds megan and pages on, a refresh works")
    func directorySample() async throws {
        let emulator = try await RunningEmulator(users: 300)
        let settings = try Self.settings("directory.plist", at: emulator.base)
        guard case .graph(let graph) = settings else { Issue.record("not the Graph sample"); return }
        let store = Self.store()
        await store.setConfiguration(settings.accountConfiguration, forAccountType: settings.accountType)

        let pending = try await store.prepareAuthorization(accountType: settings.accountType)
        let redirect = try await Self.browse(pending, fill: ["loginfmt": "alex@contoso.onmicrosoft.com", "passwd": "Passw0rd!"])
        #expect(redirect.absoluteString.hasPrefix("https://login.microsoftonline.com/common/oauth2/nativeclient?code="))
        let account = try #require(try await store.handleRedirect(redirect))
        #expect(account.username == "alex@contoso.onmicrosoft.com")
        #expect(account.homeAccountID == "4c1b9a54-7f4e-4f2b-9a5f-2a0c6c1d7e01.\(Tenant.contoso.id)")

        let directory = GraphUserDirectory(client: AuthorizedHTTPClient(store: store), account: account, baseURL: graph.graphBaseURL)
        let megan = try await directory.search("meg")
        #expect(megan.users.contains { $0.displayName == "Megan Bowen" })
        let obrien = try await directory.search("O'Brien")
        #expect(obrien.users.contains { $0.displayName == "Seán O'Brien" })
        let first = try await directory.search("", pageSize: 100)
        let second = try #require(try await directory.nextPage(after: first))
        #expect(!second.users.isEmpty)
        #expect(Set(first.users.map(\.id)).isDisjoint(with: second.users.map(\.id)))
        #expect(try await directory.me().userPrincipalName == "alex@contoso.onmicrosoft.com")

        let cached = try await store.accessToken(for: account)
        let refreshed = try await store.accessToken(for: account, forceRefresh: true)
        #expect(refreshed.secret.revealed != cached.secret.revealed)
    }

    @Test("Tasks: sam signs in through the B2C policy, adds a task and reads it back; kim sees none")
    func tasksSample() async throws {
        let emulator = try await RunningEmulator(users: 10)
        let settings = try Self.settings("tasks.plist", at: emulator.base)
        guard case .b2c(let b2c) = settings else { Issue.record("not the B2C sample"); return }
        let store = Self.store()
        await store.setConfiguration(settings.accountConfiguration, forAccountType: settings.accountType)

        func signIn(_ email: String) async throws -> Account {
            let pending = try await store.prepareAuthorization(accountType: settings.accountType)
            let redirect = try await Self.browse(pending, fill: ["signInName": email, "password": "Passw0rd!"])
            return try #require(try await store.handleRedirect(redirect))
        }
        let sam = try await signIn("sam@example.com")
        #expect(sam.username == "sam@example.com")
        let samTasks = TaskService(client: AuthorizedHTTPClient(store: store), account: sam, baseURL: b2c.taskAPI)
        try await samTasks.add("Water the plants")
        #expect(try await samTasks.tasks().map(\.text) == ["Water the plants"])

        let kim = try await signIn("kim@example.com")
        #expect(try await TaskService(client: AuthorizedHTTPClient(store: store), account: kim, baseURL: b2c.taskAPI).tasks().isEmpty)
    }

    @Test("Me: the MSAL sample's scopes sign megan in through the SMS step and read /me")
    func meSample() async throws {
        // The emulator "texts" the SMS code through its announcements; the test reads it there.
        let codes = MFACodes()
        let emulator = try await RunningEmulator(users: 10, announce: { codes.record($0) })
        let settings = try Self.settings("me.plist", at: emulator.base)
        guard case .msal(let msal) = settings else { Issue.record("not the MSAL sample"); return }
        let store = Self.store()
        await store.setConfiguration(settings.accountConfiguration, forAccountType: settings.accountType)
        let pending = try await store.prepareAuthorization(accountType: settings.accountType)
        let redirect = try await Self.browseWithSMS(pending, codes: codes)
        let account = try #require(try await store.handleRedirect(redirect))
        #expect(account.username == "megan@contoso.onmicrosoft.com")

        let client = AuthorizedHTTPClient(store: store)
        let response = try await client.perform(ResourceRequest(method: "GET", url: msal.graphURI), as: account)
        #expect(response.status == 200)
        let me = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        #expect(me?["displayName"] as? String == "Megan Bowen")
    }

    /// As ``browse(_:fill:)``, typing the SMS code the emulator announced when the page asks for it.
    static func browseWithSMS(_ pending: PendingAuthorization, codes: MFACodes) async throws -> URL {
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        defer { Task { try? await client.shutdown() } }
        let response = try await client.execute(HTTPClientRequest(url: pending.url.absoluteString), timeout: .seconds(10))
        let page = String(buffer: try await response.body.collect(upTo: 1 << 20))
        let ctx = try #require(page.firstCapture(#"name="ctx" value="([^"]*)""#))
        let login = pending.url.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appending(path: "login")
        func post(_ form: String) async throws -> HTTPClientResponse {
            var request = HTTPClientRequest(url: login.absoluteString)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: "ctx=\(ctx)&\(form)"))
            return try await client.execute(request, timeout: .seconds(10))
        }
        _ = try await post("step=username&loginfmt=megan%40contoso.onmicrosoft.com")
        _ = try await post("step=password&passwd=Passw0rd%21")
        let code = try #require(codes.last)
        _ = try await post("step=otc&otc=\(code)")
        _ = try await post("step=kmsi&kmsi=no")
        let consented = try await post("step=consent&consent=accept")
        let location = try #require(consented.headers.first(name: "Location"))
        let url = try #require(URL(string: location))
        #expect(pending.isRedirect(url))
        return url
    }
}

/// SMS codes the emulator announced (`mfa-code <user> <code>`).
final class MFACodes: @unchecked Sendable {
    private let lock = NSLock()
    private var codes: [String] = []
    func record(_ line: String) {
        let parts = line.split(separator: " ")
        if parts.count == 3, parts[0] == "mfa-code" { lock.withLock { codes.append(String(parts[2])) } }
    }
    var last: String? { lock.withLock { codes.last } }
}

extension String {
    var formEncoded: String {
        addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~")))?
            .replacingOccurrences(of: "%20", with: "+") ?? self
    }

    func firstCapture(_ pattern: String, group: Int = 1) -> String? {
        guard let regex = try? NSRegularExpression(pattern: pattern),
              let match = regex.firstMatch(in: self, range: NSRange(startIndex..., in: self)),
              let range = Range(match.range(at: group), in: self) else { return nil }
        return String(self[range])
    }

    func captures(_ pattern: String) -> [(String, String)] {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        return regex.matches(in: self, range: NSRange(startIndex..., in: self)).compactMap { match in
            guard let a = Range(match.range(at: 1), in: self), let b = Range(match.range(at: 2), in: self) else { return nil }
            return (String(self[a]), String(self[b]))
        }
    }
}
