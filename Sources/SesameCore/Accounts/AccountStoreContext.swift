import FoundationEssentials
import Logging
import Synchronization

/// What the account store's flows work with — the wire, the clock, the log, this computer's
/// identity — and the owners of what the store keeps between calls, each the only writer of its
/// own fields: the token cache (``TokenCaches``), the listeners of its events
/// (``AccountStoreEvents``), the claims challenges a refused refresh left
/// (``ClaimsChallenges``) and the silent tokens' memory (``SilentTokens``). The flows —
/// ``InteractiveSignIn``, ``SilentTokens``' refresh, ``DeviceCodeSignIn``,
/// ``SignedInAccounts`` — take this and their inputs, return their result, and keep nothing.
struct AccountStoreContext: Sendable {
    let transport: any HTTPTransport
    let now: @Sendable () -> Date
    let logger: Logger
    let tokenEndpoint: TokenEndpointClient
    let verifier: IDTokenVerifier
    /// This computer's registration, when it has one to sign in with.
    let device: DeviceIdentity?
    let caches: TokenCaches
    let events: AccountStoreEvents
    let claims: ClaimsChallenges
    let silent: SilentTokens

    /// Runs `body` on a group's cache in one transaction (or on the last read's copy while the
    /// stored bytes are unchanged: ``TokenCacheTransaction/access(group:write:_:)``); announces a
    /// cache that had to be set aside.
    func withCache<T: Sendable>(group: String, write: Bool, _ body: (inout TokenCache) throws -> T) throws(AccountStoreError) -> T {
        let result = try caches.access(group: group, write: write, body)
        if let setAside = result.setAsideAt { events.emit(.cacheRecovered(storageGroup: group, setAsideAt: setAside)) }
        return result.value
    }

    /// `configuration` ready for the wire: the endpoints its settings left to discovery taken
    /// from the provider's document (OIDC Discovery §3), and how the client authenticates chosen
    /// from `token_endpoint_auth_methods_supported` when it has a secret (see
    /// ``AccountConfiguration/ready(with:)``).
    func forTheWire(_ configuration: AccountConfiguration) async throws(AccountStoreError) -> AccountConfiguration {
        try configuration.ready(with: configuration.needsProviderDocument ? await providerDocument(of: configuration) : nil)
    }

    /// The provider's OpenID configuration (discovery document), fetched once and kept.
    func providerDocument(of configuration: AccountConfiguration) async throws(AccountStoreError) -> OpenIDConfiguration {
        do {
            return try await verifier.metadata.metadata(discoveryURL: configuration.resolvedDiscoveryURL, now: now()).0
        } catch let error as AccountStoreError {
            throw error
        } catch {
            throw AccountStoreError(
                .providerMetadataUnavailable, "The identity provider's OpenID configuration could not be fetched", cause: error)
        }
    }
}

/// The token cache of every group, behind one lock: each access is one transaction under the
/// storage's lock, or the last read's copy while the stored bytes are unchanged
/// (``TokenCacheTransaction``, whose read copies this type alone changes).
final class TokenCaches: Sendable {
    private let transaction: Mutex<TokenCacheTransaction>
    /// Where the caches are kept (the Secret Service, files).
    let storage: any TokenStorage
    /// Where a rotated refresh token waits when the cache cannot store it.
    let rescue: RefreshRescue

    init(_ transaction: TokenCacheTransaction) {
        storage = transaction.storage
        rescue = transaction.rescue
        self.transaction = Mutex(transaction)
    }

    /// ``TokenCacheTransaction/access(group:write:_:)``.
    func access<Value: Sendable>(
        group: String, write: Bool, _ body: (inout TokenCache) throws -> Value
    ) throws(AccountStoreError) -> TokenCacheTransaction.Result<Value> {
        try transaction.withLock { (transaction: inout TokenCacheTransaction) throws(AccountStoreError) in
            try transaction.access(group: group, write: write, body)
        }
    }

    /// The last read's copy of `group`, if any.
    func readCopy(of group: String) -> TokenCacheTransaction.ReadCopy? { transaction.withLock { $0.readCopy(of: group) } }

    /// Forgets `group`'s read copy: the next access reads the storage.
    func forgetReadCopy(of group: String) { transaction.withLock { $0.forgetReadCopy(of: group) } }

    /// ``TokenCacheTransaction/recoverRescued(group:now:)``.
    func recoverRescued(group: String, now: Date) -> [RefreshRescue.Kept] {
        transaction.withLock { $0.recoverRescued(group: group, now: now) }
    }

    /// ``TokenCacheTransaction/keepAside(_:group:failure:)``.
    func keepAside(_ kept: RefreshRescue.Kept, group: String, failure: AccountStoreError) {
        transaction.withLock { $0.keepAside(kept, group: group, failure: failure) }
    }

    /// ``TokenCacheTransaction/reserveRoom(group:)``.
    func reserveRoom(group: String) throws(AccountStoreError) {
        try transaction.withLock { (transaction: inout TokenCacheTransaction) throws(AccountStoreError) in
            try transaction.reserveRoom(group: group)
        }
    }
}

/// The store's listeners, and the events they hear.
final class AccountStoreEvents: Sendable {
    private let subscribers = Mutex<[UUID: AsyncStream<AccountStoreEvent>.Continuation]>([:])

    /// A stream of the events, for as long as the caller listens.
    func stream() -> AsyncStream<AccountStoreEvent> {
        let id = UUID()
        let (stream, continuation) = AsyncStream.makeStream(of: AccountStoreEvent.self, bufferingPolicy: .bufferingNewest(64))
        subscribers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        return stream
    }

    func emit(_ event: AccountStoreEvent) {
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(event) }
    }
}

/// Claims challenges a refused refresh carried (Conditional Access asking for MFA), per account
/// type: the next interactive sign-in sends them on `/authorize`, and a sign-in clears them.
final class ClaimsChallenges: Sendable {
    private let challenges = Mutex<[String: String]>([:])

    /// The challenge waiting for `accountType`'s next sign-in.
    func challenge(for accountType: String) -> String? { challenges.withLock { $0[accountType] } }

    /// Keeps `claims` for `accountType`'s next sign-in.
    func keep(_ claims: String, for accountType: String) { challenges.withLock { $0[accountType] = claims } }

    /// `accountType` signed in: its challenge was answered.
    func answered(_ accountType: String) { _ = challenges.withLock { $0.removeValue(forKey: accountType) } }
}
