import Foundation
import Logging
import SesameCore

/// A store over a fake identity provider and real file storage in a temporary directory.
public struct StoreFixture: Sendable {
    public let provider = FakeIdentityProvider()
    public let directory = temporaryDirectory()
    public let accountType = "myGraphService"
    public let store: AccountStore
    public let clock: TestClock

    /// A store over files in the fixture's directory (or `storage`, a wrapper around them), with a
    /// runtime folder of its own for what a failed store keeps aside (``rescueDirectory``).
    public init(logger: Logger = Logger(label: "sesame.tests"), storage: ((FileTokenStorage) -> any TokenStorage)? = nil) {
        let clock = provider.clock
        self.clock = clock
        let files = FileTokenStorage(directory: directory)
        store = AccountStore(
            storage: storage?(files) ?? files, transport: provider.transport, now: { clock.now }, logger: logger,
            rescueDirectory: directory.appending(path: "runtime"))
    }

    /// Where a refresh's answer the cache could not store waits (``RefreshRescue``).
    public var rescueDirectory: URL { directory.appending(path: "runtime") }

    public var storage: FileTokenStorage { FileTokenStorage(directory: directory) }

    public func configure() async {
        await store.setConfiguration(provider.configuration, forAccountType: accountType)
    }

    /// Signs in through the whole code flow (the user signs in at once) and returns the account.
    public func signIn(extra: [String: String] = [:]) async throws -> Account {
        await configure()
        return try await store.signIn(accountType: accountType, using: FakeUserAgent(provider: provider, extra: extra))
    }

    /// The group's cache as stored.
    public func storedCache() throws -> TokenCache {
        try TokenCache(json: Data(contentsOf: storage.fileURL(group: provider.configuration.storageGroup)))
    }

    public func remove() { try? FileManager.default.removeItem(at: directory) }
}

/// A clock tests move by hand.
public final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current = Date()
    public var now: Date { lock.withLock { current } }
    public func advance(by seconds: TimeInterval) { lock.withLock { current = current.addingTimeInterval(seconds) } }
}
