import Foundation
import SesameCoreTestSupport
import SesameTestSupport
import Synchronization
import Testing

@testable import SesameCore

/// A refresh never loses the refresh token: a full disk is found before the request is sent, and
/// an answer the cache cannot store is kept aside (``RefreshRescue``) for the next refresh —
/// under strict rotation, where the token a refresh spent is dead once it is sent.
@Suite("Refresh safety")
struct RefreshSafetyTests {
    /// Files that fail as a full or read-only disk does, when told to.
    final class FailingStorage: TokenStorage, @unchecked Sendable {
        let files: FileTokenStorage
        private let failure = Mutex<(reserve: TokenStorageError.Problem?, write: TokenStorageError.Problem?)>((nil, nil))

        init(_ files: FileTokenStorage) { self.files = files }

        /// Reserving room fails with `problem` (nil: works).
        func failReserving(_ problem: TokenStorageError.Problem?) { failure.withLock { $0.reserve = problem } }
        /// Writing the cache fails with `problem` (nil: works).
        func failWriting(_ problem: TokenStorageError.Problem?) { failure.withLock { $0.write = problem } }

        var location: String { files.location }

        func transact(group: String, _ body: (Data?) throws -> TokenStorageAction) throws -> String? {
            let failing = failure.withLock { $0.write }
            return try files.transact(group: group) { data in
                let action = try body(data)
                if case .keep = action { return action }
                if let failing { throw TokenStorageError(location: location, reason: "cannot write: injected", problem: failing) }
                return action
            }
        }

        func whileRefreshing<T: Sendable>(
            group: String, isolation: isolated (any Actor)?, _ body: () async throws -> T
        ) async throws -> T {
            try await files.whileRefreshing(group: group, isolation: isolation, body)
        }

        func version(group: String) -> StoredVersion? { nil }

        func reserveRoom(group: String) throws {
            if let problem = failure.withLock({ $0.reserve }) {
                throw TokenStorageError(location: location, reason: "cannot reserve room: injected", problem: problem)
            }
            try files.reserveRoom(group: group)
        }

        func releaseRoom(group: String) { files.releaseRoom(group: group) }
    }

    private static func fixture() -> (StoreFixture, FailingStorage) {
        let holder = Mutex<FailingStorage?>(nil)
        let fixture = StoreFixture { files in
            let failing = FailingStorage(files)
            holder.withLock { $0 = failing }
            return failing
        }
        return (fixture, holder.withLock { $0! })
    }

    @Test("a full disk is found before the refresh is sent: nothing is spent, and the stored sign-in works once there is room")
    func fullDiskBeforeSending() async throws {
        let (fixture, storage) = Self.fixture()
        defer { fixture.remove() }
        fixture.provider.singleUseRefreshTokens = true
        let account = try await fixture.signIn()
        fixture.clock.advance(by: 3600)
        storage.failReserving(.diskFull)
        let refused = await #expect(throws: AccountStoreError.self) { try await fixture.store.accessToken(for: account) }
        #expect(refused?.code == .storageUnavailable)
        #expect(refused?.storageProblem == .diskFull)
        #expect(fixture.provider.refreshCount == 0, "the refresh token was spent on a disk with no room for its successor")
        storage.failReserving(nil)
        _ = try await fixture.store.accessToken(for: account)
        #expect(fixture.provider.refreshCount == 1)
        #expect(fixture.provider.reuseDetected == 0)
    }

    @Test("an answer the cache cannot store is kept aside, and the next refresh starts from it: strict rotation signs nobody out")
    func answerKeptAside() async throws {
        let (fixture, storage) = Self.fixture()
        defer { fixture.remove() }
        fixture.provider.singleUseRefreshTokens = true
        let account = try await fixture.signIn()
        let group = fixture.provider.configuration.storageGroup
        fixture.clock.advance(by: 3600)
        storage.failWriting(.diskFull)
        let failed = await #expect(throws: AccountStoreError.self) { try await fixture.store.accessToken(for: account) }
        #expect(failed?.storageProblem == .diskFull)
        #expect(fixture.provider.refreshCount == 1)
        let kept = fixture.rescueDirectory.appending(path: "rescue-\(group).json")
        #expect(FileManager.default.fileExists(atPath: kept.path), "the rotated refresh token was not kept aside")

        // Still no room: the kept token is used from memory (the stored one is dead), and its
        // successor is kept aside in turn.
        let stillFailing = await #expect(throws: AccountStoreError.self) { try await fixture.store.accessToken(for: account) }
        #expect(stillFailing?.storageProblem == .diskFull)
        #expect(fixture.provider.reuseDetected == 0, "the spent refresh token was redeemed again")

        storage.failWriting(nil)
        let token = try await fixture.store.accessToken(for: account)
        #expect(token.secret.revealed.hasPrefix("at-"))
        #expect(fixture.provider.reuseDetected == 0, "the spent refresh token was redeemed again")
        #expect(!FileManager.default.fileExists(atPath: kept.path), "what was kept aside stayed after it was stored")
        let stored = try #require(try fixture.storedCache().refreshTokens.values.first).secret.revealed
        #expect(fixture.provider.liveRefreshTokens == [stored])
    }

    @Test("a kept token whose account has moved on (signed in again since) is dropped, not put back")
    func staleKeptTokenDropped() throws {
        var cache = TokenCache()
        cache.replaceRefreshToken(Secret("rt-now"), homeAccountID: "uid.utid", environment: "login.example", clientID: "c", now: 10)
        let stale = RefreshRescue.Kept(
            homeAccountID: "uid.utid", environment: "login.example", clientID: "c", refreshToken: "rt-kept",
            replaces: RefreshRescue.fingerprint(of: Secret("rt-older")), keptAt: 5)
        #expect(RefreshRescue.apply([stale], to: &cache, now: 20) == 0)
        #expect(cache.refreshToken(homeAccountID: "uid.utid", environment: "login.example", clientID: "c")?.secret.revealed == "rt-now")
        // A chain (kept twice before it could be stored) is followed in order.
        let first = RefreshRescue.Kept(
            homeAccountID: "uid.utid", environment: "login.example", clientID: "c", refreshToken: "rt-1",
            replaces: RefreshRescue.fingerprint(of: Secret("rt-now")), keptAt: 11)
        let second = RefreshRescue.Kept(
            homeAccountID: "uid.utid", environment: "login.example", clientID: "c", refreshToken: "rt-2",
            replaces: RefreshRescue.fingerprint(of: Secret("rt-1")), keptAt: 12)
        #expect(RefreshRescue.apply([second, first], to: &cache, now: 20) == 2)
        #expect(cache.refreshToken(homeAccountID: "uid.utid", environment: "login.example", clientID: "c")?.secret.revealed == "rt-2")
    }

    @Test("the problems are told apart from errno and Foundation's errors")
    func problems() {
        #expect(TokenStorageError.Problem(errorNumber: ENOSPC) == .diskFull)
        #expect(TokenStorageError.Problem(errorNumber: EDQUOT) == .diskFull)
        #expect(TokenStorageError.Problem(errorNumber: EROFS) == .readOnly)
        #expect(TokenStorageError.Problem(errorNumber: EACCES) == .readOnly)
        #expect(TokenStorageError.Problem(errorNumber: EIO) == .other)
        #expect(TokenStorageError.Problem(fileError: CocoaError(.fileWriteOutOfSpace)) == .diskFull)
        #expect(TokenStorageError.Problem(fileError: CocoaError(.fileWriteVolumeReadOnly)) == .readOnly)
    }
}
