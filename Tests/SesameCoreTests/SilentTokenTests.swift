import Foundation
import SesameCore
import SesameCoreTestSupport
import SesameTestSupport
import Testing

@Suite("Silent tokens")
struct SilentTokenTests {
    @Test("a cached token valid for more than five minutes is returned without a request")
    func cachedToken() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        let account = try await fixture.signIn()
        let before = fixture.provider.transport.requests.count
        let token = try await fixture.store.accessToken(for: account)
        #expect(token.secret.revealed.hasPrefix("at-1-"))
        fixture.clock.advance(by: 3600 - 301)
        _ = try await fixture.store.accessToken(for: account)
        #expect(fixture.provider.transport.requests.count == before)
        #expect(fixture.provider.refreshCount == 0)
    }

    @Test("a token Entra granted as User.Read answers a request for https://graph.microsoft.com/user.read without a request")
    func graphScopeSpellings() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        let account = try await fixture.signIn()
        let before = fixture.provider.transport.requests.count
        _ = try await fixture.store.accessToken(for: account, scopes: ["https://graph.microsoft.com/user.read"])
        _ = try await fixture.store.accessToken(for: account, scopes: ["00000003-0000-0000-c000-000000000000/User.Read"])
        #expect(fixture.provider.transport.requests.count == before)
        #expect(fixture.provider.refreshCount == 0)
    }

    @Test("a token with less than five minutes left is refreshed, and the rotated refresh token is stored first")
    func refreshNearExpiry() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        let account = try await fixture.signIn()
        let firstRefreshToken = try #require(try fixture.storedCache().refreshTokens.values.first).secret.revealed
        fixture.clock.advance(by: 3600 - 299)
        let token = try await fixture.store.accessToken(for: account)
        #expect(fixture.provider.refreshCount == 1)
        #expect(token.secret.revealed.hasPrefix("at-2-"))
        let request = try #require(fixture.provider.transport.requests.last)
        #expect(request.form["grant_type"] == "refresh_token")
        #expect(request.form["refresh_token"] == firstRefreshToken)
        #expect(request.form["client_info"] == "1")
        // When the token reaches the caller, the rotated refresh token is already on disk.
        let stored = try fixture.storedCache()
        #expect(stored.refreshTokens.count == 1)
        let storedRefresh = try #require(stored.refreshTokens.values.first).secret.revealed
        #expect(storedRefresh != firstRefreshToken)
        #expect(fixture.provider.liveRefreshTokens.contains(storedRefresh))
        #expect(stored.accessTokens.values.map(\.secret.revealed) == [token.secret.revealed])
    }

    @Test("50 concurrent callers with an expired token cause exactly one refresh")
    func concurrentRefresh() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        let account = try await fixture.signIn()
        fixture.clock.advance(by: 7200)
        // The refresh is held on its way until all 50 have asked: every one overlaps it.
        fixture.provider.holdRefreshes()
        let asked = Arrivals()
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    asked.arrive()
                    return try await fixture.store.accessToken(for: account).secret.revealed
                }
            }
            let everyoneAsked = await Eventually.holds { asked.count == 50 && !fixture.provider.refreshedScopes.isEmpty }
            fixture.provider.releaseRefreshes()
            #expect(everyoneAsked, "not every caller asked while the refresh was held")
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(tokens.count == 50)
        #expect(Set(tokens).count == 1)
        #expect(fixture.provider.refreshCount == 1)
    }

    @Test("concurrent callers for different scopes each get their own scopes' token; one redemption at a time per account")
    func refreshPerScopes() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        let account = try await fixture.signIn()
        fixture.clock.advance(by: 7200)
        fixture.provider.echoesScope = true
        // Each refresh is held on its way until all 200 have asked, then let go.
        fixture.provider.holdRefreshes()
        let arrivals = Arrivals()
        let asked = ["User.Read", "Mail.Read", "User.Read", "Calendars.Read", "Mail.Read"] + Array(repeating: "User.Read", count: 195)
        let answers = try await withThrowingTaskGroup(of: (String, [String]).self) { group in
            for scope in asked {
                group.addTask {
                    arrivals.arrive()
                    return (scope, try await fixture.store.accessToken(for: account, scopes: [scope]).scopes)
                }
            }
            let everyoneAsked = await Eventually.holds { arrivals.count == asked.count && !fixture.provider.refreshedScopes.isEmpty }
            fixture.provider.releaseRefreshes()
            #expect(everyoneAsked, "not every caller asked while the refresh was held")
            return try await group.reduce(into: [(String, [String])]()) { $0.append($1) }
        }
        #expect(answers.count == 200)
        for (scope, granted) in answers { #expect(granted == [scope], "asked \(scope), got \(granted)") }
        #expect(fixture.provider.refreshCount == 3, "one refresh per (account, scopes)")
        #expect(fixture.provider.mostRefreshesAtOnce == 1, "the refresh token was redeemed by two requests at once")
    }

    @Test("signing out while a refresh is on its way sticks: the refresh does not write the account back")
    func signOutDuringRefresh() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        let account = try await fixture.signIn()
        fixture.provider.holdRefreshes()
        defer { fixture.provider.releaseRefreshes() }  // however the test ends
        let refreshing = Task { try await fixture.store.accessToken(for: account, forceRefresh: true) }
        // Generous: the refresh starts at once, but a loaded test run may keep its task waiting.
        try #require(await Eventually.holds(within: .seconds(300)) { !fixture.provider.refreshedScopes.isEmpty })
        try await fixture.store.remove(account)
        fixture.provider.releaseRefreshes()
        await #expect(throws: AccountStoreError.self) { _ = try await refreshing.value }
        #expect(try await fixture.store.accounts(ofType: fixture.accountType).isEmpty)
        let cache = try fixture.storedCache()
        #expect(cache.refreshTokens.isEmpty && cache.accessTokens.isEmpty && cache.accounts.isEmpty, "the refresh wrote tokens back")
    }

    @Test("a rotated refresh token is kept when the answer's id_token fails; the next attempt needs no sign-in")
    func rotatedTokenKeptWhenTheIDTokenFails() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        let account = try await fixture.signIn()
        fixture.provider.singleUseRefreshTokens = true
        fixture.provider.tokenOverrides = ["aud": "someone-else"]
        await #expect(throws: AccountStoreError.self) { _ = try await fixture.store.accessToken(for: account, forceRefresh: true) }
        let stored = try #require(try fixture.storedCache().refreshTokens.values.first).secret.revealed
        #expect(fixture.provider.liveRefreshTokens.contains(stored) && stored.hasPrefix("rt-2-"), "the rotated refresh token was dropped")

        fixture.provider.tokenOverrides = [:]
        let token = try await fixture.store.accessToken(for: account, forceRefresh: true)
        #expect(!token.secret.revealed.isEmpty)
        #expect(fixture.provider.reuseDetected == 0)
    }

    @Test("two programs sharing the cache refresh at the same moment under strict rotation: one redeems, neither is signed out")
    func twoProgramsRefreshTogether() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        let account = try await fixture.signIn()
        // A second program: its own store over the same files (its lock files are other descriptors).
        let clock = fixture.clock
        let other = AccountStore(storage: fixture.storage, transport: fixture.provider.transport, now: { clock.now })
        await other.setConfiguration(fixture.provider.configuration, forAccountType: fixture.accountType)
        fixture.provider.singleUseRefreshTokens = true
        fixture.clock.advance(by: 7200)

        // The first refresh is held on its way until both programs have asked.
        fixture.provider.holdRefreshes()
        let arrivals = Arrivals()
        async let window = {
            arrivals.arrive()
            return try await fixture.store.accessToken(for: account)
        }()
        async let command = {
            arrivals.arrive()
            return try await other.accessToken(for: account)
        }()
        let everyoneAsked = await Eventually.holds { arrivals.count == 2 && !fixture.provider.refreshedScopes.isEmpty }
        fixture.provider.releaseRefreshes()
        #expect(everyoneAsked, "not every caller asked while the refresh was held")
        let tokens = try await [window.secret.revealed, command.secret.revealed]
        #expect(fixture.provider.reuseDetected == 0, "a refresh token was redeemed twice: the family was revoked")
        #expect(fixture.provider.mostRefreshesAtOnce == 1)
        #expect(fixture.provider.refreshCount == 1, "the program that waited did not use the token the other stored")
        #expect(tokens[0] == tokens[1])
        fixture.clock.advance(by: 7200)
        _ = try await other.accessToken(for: account)
    }

    @Test("silent calls do not read unchanged bytes again, and still see at once what another program stored")
    func unchangedBytesAreNotReadAgain() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        let account = try await fixture.signIn()
        let counting = CountingStorage(fixture.storage)
        let clock = fixture.clock
        let window = AccountStore(storage: counting, transport: fixture.provider.transport, now: { clock.now })
        await window.setConfiguration(fixture.provider.configuration, forAccountType: fixture.accountType)
        // The kernel's events for the sign-in's write are read on the watcher's thread a moment
        // later — on a busy machine after the next call, which then reads again, rightly.
        try await Self.waitForTheDirectoryWatcher()
        let first = try await window.accessToken(for: account)
        let readsBefore = counting.transactions
        for _ in 0..<200 { #expect(try await window.accessToken(for: account).secret.revealed == first.secret.revealed) }
        #expect(counting.transactions == readsBefore, "\(counting.transactions - readsBefore) reads of bytes that had not changed")

        // Another program (the command line) signs the account out: the very next call knows.
        try await fixture.store.remove(account)
        await #expect(throws: AccountStoreError.self) { _ = try await window.accessToken(for: account) }
        // …and signs in again: seen at once too.
        let again = try await fixture.signIn()
        #expect(try await window.accessToken(for: again).secret.revealed != first.secret.revealed)
    }

    /// Returns once the process's directory watcher has read every inotify event so far: the
    /// events of all its watches come in one queue, in order, so once a write made now in a
    /// folder of its own has been seen, every earlier event has been too.
    static func waitForTheDirectoryWatcher() async throws {
        guard let changes = DirectoryChanges.shared else { return }
        let folder = FileManager.default.temporaryDirectory.appending(path: "watcher-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        guard let before = changes.generation(ofDirectory: folder.path) else { return }
        try Data("seen?".utf8).write(to: folder.appending(path: "marker"))
        let seen = await Eventually.value { changes.generation(ofDirectory: folder.path) != before ? true : nil }
        try #require(seen != nil, "the directory watcher did not see a file written in \(folder.path)")
    }

    @Test("invalid_grant on refresh is 'interaction required'; the account is kept and marked")
    func interactionRequired() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        let account = try await fixture.signIn()
        fixture.clock.advance(by: 7200)
        fixture.provider.refreshError = [
            "error": "invalid_grant",
            "error_description":
                "AADSTS50076: Due to a configuration change made by your administrator, you must use multi-factor "
                + "authentication.\r\nTrace ID: 1",
            "error_codes": [50076], "suberror": "basic_action",
        ]
        let events = await fixture.store.events()
        do {
            _ = try await fixture.store.accessToken(for: account)
            Issue.record("a refused refresh produced a token")
        } catch let error as AccountStoreError {
            #expect(error.code == .interactionRequired)
            #expect(error.serviceCode == "AADSTS50076")
            #expect(error.homeAccountID == account.homeAccountID)
        }
        let accounts = try await fixture.store.accounts(ofType: fixture.accountType)
        #expect(accounts.count == 1)
        #expect(accounts.first?.interactionRequired == true)
        #expect(try fixture.storedCache().refreshTokens.count == 1)
        var iterator = events.makeAsyncIterator()
        guard case .accountsDidChange(_, .updated(let marked)) = await iterator.next() else {
            Issue.record("no update event")
            return
        }
        #expect(marked.interactionRequired)
        guard case .didFailToRequestAccess(_, let failure) = await iterator.next() else {
            Issue.record("no failure event")
            return
        }
        #expect(failure.code == .interactionRequired)

        // Signing in again clears the mark.
        fixture.provider.refreshError = nil
        let again = try await fixture.signIn()
        #expect(!again.interactionRequired)
    }

    @Test("older interaction_required errors are treated the same")
    func legacyInteractionRequired() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        let account = try await fixture.signIn()
        fixture.clock.advance(by: 7200)
        fixture.provider.refreshError = ["error": "interaction_required", "error_description": "AADSTS50079: must enroll"]
        await #expect { try await fixture.store.accessToken(for: account) } throws: { error in
            (error as? AccountStoreError)?.code == .interactionRequired
        }
    }

    @Test("B2C's string numbers are read: \"expires_in\":\"3600\"")
    func stringNumbers() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        fixture.provider.expiresIn = "3600"
        let account = try await fixture.signIn()
        let token = try await fixture.store.accessToken(for: account)
        #expect(abs(token.expiresOn.timeIntervalSince(fixture.clock.now) - 3600) < 2)
        #expect(fixture.provider.refreshCount == 0)
    }

    @Test("an account with no refresh token needs interaction")
    func noRefreshToken() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        let account = try await fixture.signIn()
        // Another process signed the account out of this client meanwhile.
        _ = try fixture.storage.transact(group: fixture.provider.configuration.storageGroup) { data in
            var cache = try TokenCache(json: data!)
            cache.removeAccount(homeAccountID: account.homeAccountID, environment: account.environment, clientID: fixture.provider.clientID)
            return .write(try cache.jsonData())
        }
        await #expect { try await fixture.store.accessToken(for: account) } throws: { error in
            (error as? AccountStoreError)?.code == .interactionRequired
        }
    }
}

/// Storage that counts its transactions (reads and writes under the lock).
final class CountingStorage: TokenStorage, @unchecked Sendable {
    private let base: FileTokenStorage
    private let lock = NSLock()
    private var count = 0
    init(_ base: FileTokenStorage) { self.base = base }
    var transactions: Int { lock.withLock { count } }
    var location: String { base.location }
    func version(group: String) -> StoredVersion? { base.version(group: group) }
    func transact(group: String, _ body: (Data?) throws -> TokenStorageAction) throws -> String? {
        lock.withLock { count += 1 }
        return try base.transact(group: group, body)
    }
}

/// Under the refresh lock a store must read what the program that held the lock before stored,
/// even when its stamp of the stored bytes has not moved yet: the kernel's event for the other
/// program's write can still be unread when the lock is taken (it was, under load, and the
/// store redeemed the refresh token the other had rotated: the family was revoked).
@Suite("The refresh lock and the stamp")
struct RefreshLockTests {
    /// A file store whose stamp never moves: the event of every write is still unread.
    struct StampThatLags: TokenStorage {
        let files: FileTokenStorage
        var location: String { files.location }
        func transact(group: String, _ body: (Data?) throws -> TokenStorageAction) throws -> String? {
            try files.transact(group: group, body)
        }
        func whileRefreshing<T: Sendable>(
            group: String, isolation: isolated (any Actor)?, _ body: () async throws -> T
        ) async throws -> T {
            try await files.whileRefreshing(group: group, isolation: isolation, body)
        }
        func version(group: String) -> StoredVersion? { StoredVersion(stamp: [42]) }
    }

    @Test("a refresh after another program's reads the rotated refresh token, not the store's copy")
    func rotatedByAnother() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        fixture.provider.singleUseRefreshTokens = true
        let clock = fixture.clock
        let lagging = AccountStore(
            storage: StampThatLags(files: fixture.storage), transport: fixture.provider.transport, now: { clock.now })
        await lagging.setConfiguration(fixture.provider.configuration, forAccountType: fixture.accountType)
        let account = try await lagging.signIn(accountType: fixture.accountType, using: FakeUserAgent(provider: fixture.provider))
        // This store reads the cache once: its copy holds the first refresh token.
        _ = try await lagging.accessToken(for: account)
        // Another program refreshes: the refresh token rotates, in the same file.
        await fixture.configure()
        _ = try await fixture.store.accessToken(for: account, forceRefresh: true)
        // This store's refresh redeems the rotated token, not the one in its copy.
        _ = try await lagging.accessToken(for: account, forceRefresh: true)
        #expect(fixture.provider.reuseDetected == 0)
        #expect(fixture.provider.refreshCount == 2)
    }
}

/// How many tasks have reached a point (each calls ``arrive()`` once).
final class Arrivals: @unchecked Sendable {
    private let lock = NSLock()
    private var arrived = 0
    var count: Int { lock.withLock { arrived } }
    func arrive() { lock.withLock { arrived += 1 } }
}
