import Foundation
import Logging
import SesameCore

/// A store over a fake identity provider and real file storage in a temporary directory.
struct StoreFixture {
    let provider = FakeIdentityProvider()
    let directory = temporaryDirectory()
    let accountType = "myGraphService"
    let store: AccountStore
    let clock: TestClock

    init(logger: Logger = Logger(label: "sesame.tests")) {
        let clock = provider.clock
        self.clock = clock
        store = AccountStore(
            storage: FileTokenStorage(directory: directory), transport: provider.transport, now: { clock.now }, logger: logger)
    }

    var storage: FileTokenStorage { FileTokenStorage(directory: directory) }

    func configure() async {
        await store.setConfiguration(provider.configuration, forAccountType: accountType)
    }

    /// Signs in through the whole code flow and returns the account.
    func signIn(extra: [String: String] = [:]) async throws -> Account {
        await configure()
        let pending = try await store.prepareAuthorization(accountType: accountType)
        let redirect = provider.redirect(for: pending.url, extra: extra)
        let account = try await store.handleRedirect(redirect)
        return try #require(account)
    }

    /// The group's cache as stored.
    func storedCache() throws -> TokenCache {
        try TokenCache(json: Data(contentsOf: storage.fileURL(group: provider.configuration.storageGroup)))
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}

import Testing

/// A clock tests move by hand.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current = Date()
    var now: Date { lock.withLock { current } }
    func advance(by seconds: TimeInterval) { lock.withLock { current = current.addingTimeInterval(seconds) } }
}
