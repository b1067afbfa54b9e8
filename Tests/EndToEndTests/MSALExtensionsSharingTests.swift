import AsyncHTTPClient
import Foundation
import IdentityEmulator
import NIOSSL
import SesameCore
import SesameKeyring
import SesameTestSupport
import Synchronization
import Testing

/// Sesame and an MSAL-based tool — Microsoft's MSAL for Python over msal-extensions 1.3.1, the
/// persistence layer of azure-cli and azure-identity, pinned in the Makefile — refresh the same
/// account in one cache at the same moment, hundreds of times, against the real
/// `identity-emulator` with strict rotation (`--refresh-token-reuse revoke-family`: a refresh
/// token redeemed twice revokes its whole family). A rotated refresh token lost to the other
/// program's write shows as a refused refresh (the loser redeems the old one again), a half-read
/// file as a cache set aside; neither may happen, and both programs still see the account after.
///
/// Each program redeems its own client's refresh token (Sesame's app and "the tool", registered
/// as Azure CLI's public client id): MSAL holds no lock while it redeems one (its refresh is an
/// unlocked read, the request, then a locked write), so under strict rotation two programs
/// redeeming *one* refresh token revoke each other whatever the lock — two MSAL processes as
/// well (HACKING.md, "Sharing a cache with MSAL-based tools").
@Suite("Sharing a cache with msal-extensions")
struct MSALExtensionsSharingTests {
    /// How many times the tool refreshes (Sesame at least as many times meanwhile) in a file;
    /// msal-extensions sleeps 0.25 s each time it finds the lock taken, so this is about 15 s.
    static let fileRefreshes = 100
    /// In the keyring, where each read and write is also a round trip to gnome-keyring.
    static let keyringRefreshes = 40

    @Test(
        "Sesame and msal-extensions refresh one account in one cache file at once: no token lost, nobody signed out, nothing set aside",
        arguments: ["filelock", "portalocker"])
    func concurrentRefreshesInAFile(lock: String) async throws {
        let run = try await SharedCacheRun(store: .files)
        defer { run.stop() }
        let tool = ["--lock", lock, "--file", run.cacheFile.path]
        let outcome = try await run.refreshTogether(count: Self.fileRefreshes, tool: tool)
        expectNoLoss(outcome, lock: lock)

        let left = try FileManager.default.contentsOfDirectory(atPath: run.cacheFile.deletingLastPathComponent().path)
        #expect(!left.contains { $0.contains(".corrupt-") }, "a cache was set aside: \(left)")
        #expect(!left.contains { $0.hasSuffix(".lockfile") }, "a lock file was left behind: \(left)")
        try await run.expectBothStillSignedIn(tool: tool)
    }

    @Test(
        "the same in the Secret Service: msal-extensions' LibsecretPersistence on Sesame's item, its signal file Sesame's stamp",
        .enabled(
            if: ProcessInfo.processInfo.environment["SESAME_REQUIRE_SECRET_SERVICE"] == "1" || SecretServiceTokenStorage.isAvailable(),
            "no Secret Service on this session bus; `make test` provides one"))
    func concurrentRefreshesInTheKeyring() async throws {
        let run = try await SharedCacheRun(store: .keyring)
        defer { run.stop() }
        let shape = run.keyring.msalExtensionsPersistence(group: run.group)
        let tool =
            ["--lock", "filelock", "--keyring", shape.signalLocation, "--schema", shape.schemaName]
            + shape.attributes.sorted { $0.key < $1.key }.flatMap { ["--attribute", "\($0.key)=\($0.value)"] }
        let outcome = try await run.refreshTogether(count: Self.keyringRefreshes, tool: tool)
        expectNoLoss(outcome, lock: "filelock")
        #expect(!run.events.contains { if case .cacheRecovered = $0 { true } else { false } }, "a cache was set aside")
        try await run.expectBothStillSignedIn(tool: tool)
    }

    private func expectNoLoss(_ outcome: SharedCacheRun.Outcome, lock: String) {
        #expect(outcome.tool.failure == nil, "msal-extensions (\(lock)): \(outcome.tool.failure ?? "")")
        #expect(outcome.tool.refreshes == outcome.tool.wanted)
        #expect(outcome.tool.lock.hasPrefix(lock == "filelock" ? "msal_extensions.filelock." : "msal_extensions.cache_lock."))
        #expect(outcome.sesame.failure == nil, "Sesame: \(outcome.sesame.failure ?? "")")
        #expect(outcome.sesame.refreshes >= outcome.tool.wanted)
        print(
            "msal-extensions (\(outcome.tool.lock)): \(outcome.tool.refreshes) refreshes in \(outcome.tool.seconds) s; "
                + "Sesame meanwhile: \(outcome.sesame.refreshes)")
    }
}

/// One emulator process with strict rotation, one user signed in by Sesame for two clients of
/// one storage group (Sesame's app, and the tool's client that MSAL for Python then uses), and
/// the programs that share the group's cache.
final class SharedCacheRun: Sendable {
    /// Where the group's cache is kept.
    enum Store { case files, keyring }

    /// Azure CLI's public client id: the client an MSAL-based tool signs in with.
    static let toolClientID = "04b07795-8ddb-461a-bbee-02f9e1bf7b46"
    static let user = "alex@contoso.onmicrosoft.com"

    let store: Store
    /// The storage group both programs share (its own per run: the keyring is the session's).
    let group = "sesame.tests.shared-with-msal.\(UUID().uuidString.prefix(8))"
    let emulator: EmulatorProcess
    let state: URL
    let home: URL
    /// `XDG_DATA_HOME` (the cache files) and `XDG_RUNTIME_DIR` (the keyring's locks and stamps).
    let data: URL
    let runtime: URL
    let base: URL
    let ca: String
    let client: HTTPClient
    let accounts: AccountStore
    let keyring: SecretServiceTokenStorage
    let sesameSettings: URL
    let toolSettings: URL
    private let log = EventLog()
    private let listening: Task<Void, Never>

    /// The store's announcements, as they come.
    private final class EventLog: Sendable {
        let events = Mutex<[AccountStoreEvent]>([])
    }

    init(store: Store) async throws {
        self.store = store
        state = Repository.temporaryDirectory("sesame-msal-emulator")
        home = Repository.temporaryDirectory("sesame-msal")
        data = home.appending(path: "data")
        runtime = home.appending(path: "runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        emulator = try EmulatorProcess([
            "--port", "0", "--tls", "--state-dir", state.path, "--users", "20", "--refresh-token-reuse", "revoke-family",
            // Every refresh is forced anyway; short lifetimes as a tool in daily use meets them.
            "--access-token-lifetime", "120", "--client", "\(Self.toolClientID)=http://localhost",
        ])
        base = try #require(emulator.readLine().flatMap { $0.split(separator: " ").last }.flatMap { URL(string: String($0)) })
        ca = String(try #require(emulator.readLine()).dropFirst("ca-certificate ".count))
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(ca)
        client = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls, redirectConfiguration: .disallow))

        // The bundled Directory sample as Sesame's app, and the tool's registration, in one group.
        let bundled = try #require(
            try PropertyListSerialization.propertyList(from: Data(contentsOf: Repository.settings("directory.plist")), format: nil)
                as? [String: Any])
        var sesame = bundled
        sesame["keychain"] = group
        sesame["accountType"] = "sesame"
        var tool = sesame
        tool["accountType"] = "tool"
        tool["clientId"] = Self.toolClientID
        tool["redirectUri"] = "http://localhost"
        tool["scopes"] = "openid offline_access User.Read"
        sesameSettings = home.appending(path: "sesame.plist")
        toolSettings = home.appending(path: "tool.plist")
        for (settings, file) in [(sesame, sesameSettings), (tool, toolSettings)] {
            try PropertyListSerialization.data(fromPropertyList: settings, format: .xml, options: 0).write(to: file)
        }

        keyring = SecretServiceTokenStorage(environment: ["XDG_RUNTIME_DIR": runtime.path, "XDG_DATA_HOME": data.path])
        let storage: any TokenStorage = store == .files ? FileTokenStorage(directory: data.appending(path: "sesame")) : keyring
        accounts = AccountStore(storage: storage, transport: AsyncHTTPClientTransport(client: client))
        let events = await accounts.events()
        listening = Task { [log] in
            for await event in events { log.events.withLock { $0.append(event) } }
        }
        let browser = HeadlessBrowser.sockets(base: base, codes: OneTimeCodes(), client: client)
        for file in [sesameSettings, toolSettings] {
            let settings = try SampleSettings.load(contentsOf: file).pointed(at: base)
            await accounts.setConfiguration(settings.accountConfiguration, forAccountType: settings.accountType)
            _ = try await accounts.signIn(accountType: settings.accountType, using: HeadlessUserAgent.entra(Self.user, browser: browser))
        }
    }

    /// The group's cache file (``Store/files``).
    var cacheFile: URL { data.appending(path: "sesame/\(group).json") }

    /// What the store announced so far.
    var events: [AccountStoreEvent] { log.events.withLock { $0 } }

    func stop() {
        listening.cancel()
        emulator.stop()
        try? client.syncShutdown()
        if store == .keyring { try? keyring.clear(group: group) }
        try? FileManager.default.removeItem(at: state)
        try? FileManager.default.removeItem(at: home)
    }

    /// What the tool printed at the end of its run.
    struct ToolSummary: Sendable {
        var wanted: Int
        var refreshes: Int
        var failure: String?
        var lock: String
        var seconds: Double
    }

    /// Both programs' counts.
    struct Outcome: Sendable {
        var tool: ToolSummary
        var sesame: (refreshes: Int, failure: String?)
    }

    /// The tool refreshes `count` times; Sesame refreshes in this process from the moment the
    /// tool starts until it has ended and Sesame has refreshed `count` times too.
    func refreshTogether(count: Int, tool arguments: [String]) async throws -> Outcome {
        let account = try #require(try await accounts.accounts(ofType: "sesame").first)
        let tool = try ToolProcess(arguments: arguments + ["--count", "\(count)"], run: self)
        defer { tool.end() }
        try tool.waitUntilReady()
        tool.go()
        var refreshes = 0
        var failure: String?
        while failure == nil, !tool.hasEnded || refreshes < count {
            do {
                _ = try await accounts.accessToken(for: account, forceRefresh: true)
                refreshes += 1
            } catch {
                failure = "refresh \(refreshes + 1): \(error)"
            }
        }
        return Outcome(tool: try await tool.summary(wanted: count), sesame: (refreshes, failure))
    }

    /// One more refresh each (each program's stored refresh token is its family's live one: a
    /// stale one would be refused, and revoke the family), then `sesame accounts` lists the user
    /// for both clients, neither marked for a new sign-in.
    func expectBothStillSignedIn(tool arguments: [String]) async throws {
        let account = try #require(try await accounts.accounts(ofType: "sesame").first)
        _ = try await accounts.accessToken(for: account, forceRefresh: true)
        let last = try ToolProcess(arguments: arguments + ["--count", "1"], run: self)
        defer { last.end() }
        try last.waitUntilReady()
        last.go()
        let summary = try await last.summary(wanted: 1)
        #expect(summary.refreshes == 1, "the tool's last refresh: \(summary.failure ?? "")")

        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = data.path
        environment["XDG_RUNTIME_DIR"] = runtime.path
        if store == .files { environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent" }
        try FileManager.default.createDirectory(at: data.appending(path: "sesame"), withIntermediateDirectories: true)
        try Data((store == .files ? "files\n" : "secret-service\n").utf8).write(to: data.appending(path: "sesame/storage"))
        let listed = try await TwoProgramsTests.run(
            try Repository.product("sesame"),
            ["accounts", "--settings", sesameSettings.path, "--settings", toolSettings.path, "--emulator", base.absoluteString],
            environment: environment)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.components(separatedBy: "<\(Self.user)>").count == 3, "\(listed.stdout)")
        #expect(!listed.stdout.contains("sign in again"), "\(listed.stdout)")
    }
}

/// `msal_extensions_refresh.py` as a process: it says `ready`, waits for a line, refreshes, and
/// prints its summary.
final class ToolProcess: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let errors = Pipe()
    private let ended = Atomic<Bool>(false)

    init(arguments: [String], run: SharedCacheRun) throws {
        process.executableURL = try Repository.python()
        process.arguments =
            [
                Repository.root.appending(path: "Tests/EndToEndTests/MSAL/msal_extensions_refresh.py").path,
                "--authority", run.base.appending(path: "contoso.onmicrosoft.com").absoluteString,
                "--client-id", SharedCacheRun.toolClientID, "--username", SharedCacheRun.user,
            ] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["REQUESTS_CA_BUNDLE"] = run.ca
        process.environment = environment
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        process.terminationHandler = { [weak self] _ in self?.ended.store(true, ordering: .releasing) }
        try process.start()
    }

    /// Whether the tool has ended.
    var hasEnded: Bool { ended.load(ordering: .acquiring) }

    /// Reads stdout's first line, which must be `ready`.
    func waitUntilReady() throws {
        var line = Data()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        guard String(decoding: line, as: UTF8.self) == "ready" else {
            process.waitUntilExit()
            let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw TestSupportError("msal_extensions_refresh.py did not start: \(String(decoding: line, as: UTF8.self)) \(stderr)")
        }
    }

    /// Lets it refresh.
    func go() { input.fileHandleForWriting.write(Data("go\n".utf8)) }

    /// Waits (on a thread of its own) for its end and reads its summary.
    func summary(wanted: Int) async throws -> SharedCacheRun.ToolSummary {
        let ended = await withCheckedContinuation { continuation in
            Thread.detachNewThread { [output, errors, process] in
                continuation.resume(returning: ProcessRunner.collect(process, stdout: output, stderr: errors))
            }
        }
        let (stdout, stderr) = (Data(ended.stdout.utf8), ended.stderr)
        guard let json = try? JSONSerialization.jsonObject(with: stdout) as? [String: Any] else {
            throw TestSupportError("msal_extensions_refresh.py printed no summary: \(String(decoding: stdout, as: UTF8.self)) \(stderr)")
        }
        let failure = (json["failure"] as? [String: Any]).map { failure in
            failure.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        return SharedCacheRun.ToolSummary(
            wanted: wanted, refreshes: json["refreshes"] as? Int ?? 0, failure: failure, lock: json["lock"] as? String ?? "",
            seconds: json["seconds"] as? Double ?? 0)
    }

    func end() { process.end() }
}
