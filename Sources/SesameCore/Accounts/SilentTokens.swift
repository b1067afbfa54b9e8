import FoundationEssentials
import SesameSystem
import Synchronization

/// Silent tokens, all of it: MSAL's `acquireTokenSilent`. The state makes a silent token cheap
/// and a refresh happen once: the last answer to each question
/// (reused while the stored bytes it came from are unchanged and the token has five minutes
/// left), and the queue of refreshes under way — callers asking the same join one refresh;
/// refreshes of one account for different scopes take turns, so that one refresh token is never
/// redeemed twice at once (each turn reads the token the previous one rotated in). The
/// operations (the extension) look the token up in the cache, redeem the refresh token under the
/// storage's refresh lock that every process sharing the cache takes, keep the rotated token
/// whatever else fails, and save the answer. The account store owns one (in its
/// ``AccountStoreContext``); only this type writes its state, behind its lock.
final class SilentTokens: Sendable {
    /// A silent token request: whose, and for which scopes (`nil`: the account type's own).
    struct Question: Hashable {
        var accountType: String
        var homeAccountID: String
        var scopes: [String]?
    }

    /// One refresh: the account, and the resource scopes it gets a token for.
    struct Refresh {
        /// The account's turn: refreshes of one account wait for each other.
        let account: String
        /// The refresh itself: callers with the same key join it.
        let key: String

        init(account: Account, scopes: Set<String>) {
            self.account = "\(account.accountType)|\(account.homeAccountID)"
            key = self.account + "|" + scopes.map { $0.lowercased() }.sorted().joined(separator: " ")
        }
    }

    /// A token given from the cache, and the read of the stored bytes it came from.
    private struct Answer {
        var token: AccessToken
        var group: String
        var read: TokenCacheTransaction.ReadCopy
    }

    private struct State {
        var answers: [Question: Answer] = [:]
        /// The refresh under way per (account, scopes), which callers for those scopes join.
        var refreshes: [String: Task<AccessToken, any Error>] = [:]
        /// The latest refresh per account, which the next one for other scopes waits for.
        var lastRefresh: [String: Task<AccessToken, any Error>] = [:]
    }

    private let state = Mutex(State())

    /// The last answer to `question`, if it still is the answer: the stored bytes have the same
    /// stamp (within its age limit) and the token has five minutes left.
    func answer(to question: Question, storage: any TokenStorage, now: Date) -> AccessToken? {
        guard let answer = state.withLock({ $0.answers[question] }),
            answer.token.expiresOn.timeIntervalSince(now) > AccountStore.minimumRemainingValidity,
            answer.read.isCurrent(in: storage, group: answer.group)
        else { return nil }
        return answer.token
    }

    /// Remembers `token`, read from `group`'s cache copy `read`, as the answer to `question`.
    func remember(_ token: AccessToken, for question: Question, group: String, read: TokenCacheTransaction.ReadCopy?) {
        guard let read else { return }
        state.withLock { $0.answers[question] = Answer(token: token, group: group, read: read) }
    }

    /// The refresh under way for `refresh`'s key, or a new one made by `start`, which is given the
    /// account's previous refresh to wait for.
    func refreshing(
        _ refresh: Refresh, start: (Task<AccessToken, any Error>?) -> Task<AccessToken, any Error>
    ) -> Task<AccessToken, any Error> {
        state.withLock { state in
            if let running = state.refreshes[refresh.key] { return running }
            let task = start(state.lastRefresh[refresh.account])
            state.refreshes[refresh.key] = task
            state.lastRefresh[refresh.account] = task
            return task
        }
    }

    /// `task` has ended: later callers start a refresh of their own.
    func ended(_ task: Task<AccessToken, any Error>, _ refresh: Refresh) {
        state.withLock { state in
            if state.refreshes[refresh.key] == task { state.refreshes[refresh.key] = nil }
            if state.lastRefresh[refresh.account] == task { state.lastRefresh[refresh.account] = nil }
        }
    }
}

extension SilentTokens {
    /// The answer remembered for `account`'s `scopes`, while the stored bytes it came from are
    /// unchanged and the token has five minutes left: no cache lookup at all.
    static func remembered(for account: Account, scopes: [String]?, in context: AccountStoreContext) -> AccessToken? {
        let question = SilentTokens.Question(accountType: account.accountType, homeAccountID: account.homeAccountID, scopes: scopes)
        return context.silent.answer(to: question, storage: context.caches.storage, now: context.now())
    }

    /// ``AccountStore/accessToken(for:scopes:forceRefresh:)`` past the remembered answer: the
    /// cache, else one refresh shared by every caller. `stored`: the account type's configuration.
    static func accessToken(
        for account: Account, configuration stored: AccountConfiguration, scopes: [String]?, forceRefresh: Bool,
        in context: AccountStoreContext
    ) async throws -> AccessToken {
        let question = SilentTokens.Question(accountType: account.accountType, homeAccountID: account.homeAccountID, scopes: scopes)
        let configuration = stored.issuing(homeAccountID: account.homeAccountID)
        let wanted = scopes ?? configuration.scopes
        let resourceScopes = Set(wanted.filter { !AccountStore.oidcScopes.contains($0.lowercased()) })
        if !forceRefresh, let cached = try cachedToken(for: account, configuration: configuration, scopes: resourceScopes, in: context) {
            context.silent.remember(
                cached, for: question, group: configuration.storageGroup, read: context.caches.readCopy(of: configuration.storageGroup))
            return cached
        }
        let refresh = SilentTokens.Refresh(account: account, scopes: resourceScopes)
        let task = context.silent.refreshing(refresh) { previous in
            Task {
                _ = try? await previous?.value
                return try await refreshAcrossProcesses(
                    account, configuration: configuration, scopes: wanted, resourceScopes: resourceScopes, forceRefresh: forceRefresh,
                    in: context)
            }
        }
        defer { context.silent.ended(task, refresh) }
        return try await task.value
    }

    /// A cached access token for `scopes` valid for at least five more minutes.
    static func cachedToken(
        for account: Account, configuration: AccountConfiguration, scopes: Set<String>, in context: AccountStoreContext
    ) throws -> AccessToken? {
        let validUntil = Int(context.now().addingTimeInterval(AccountStore.minimumRemainingValidity).timeIntervalSince1970)
        let cached = try context.withCache(group: configuration.storageGroup, write: false) { cache in
            cache.accessToken(
                homeAccountID: account.homeAccountID, environment: account.environment, clientID: configuration.clientID,
                realm: SignedInAccounts.realm(of: configuration, tenantID: account.realm), scopes: scopes, validUntil: validUntil)
        }
        return cached.map {
            AccessToken(
                secret: $0.secret, tokenType: $0.tokenType, expiresOn: Date(timeIntervalSince1970: TimeInterval($0.expiresOn)),
                scopes: $0.target.split(separator: " ").map(String.init), account: account)
        }
    }

    // MARK: Refreshing

    /// Refreshes under the storage's refresh lock: one program redeems the account's refresh
    /// token at a time, and one that waited uses what the other stored when it is enough.
    private static func refreshAcrossProcesses(
        _ account: Account, configuration: AccountConfiguration, scopes: [String], resourceScopes: Set<String>, forceRefresh: Bool,
        in context: AccountStoreContext
    ) async throws -> AccessToken {
        try await context.caches.storage.whileRefreshing(group: configuration.storageGroup, isolation: nil) {
            // What the program that held the lock before stored, read from the storage itself.
            context.caches.forgetReadCopy(of: configuration.storageGroup)
            if !forceRefresh, let cached = try cachedToken(for: account, configuration: configuration, scopes: resourceScopes, in: context)
            {
                return cached
            }
            return try await refresh(account, configuration: configuration, scopes: scopes, in: context)
        }
    }

    /// One refresh, made so that the refresh token is never lost: room for the answer is taken
    /// first (a full disk is found while the stored token still works), and from the request to
    /// the store of its answer the process does not end (``Termination``); an answer the cache
    /// cannot store is kept in the ``RefreshRescue`` for the next attempt.
    private static func refresh(
        _ account: Account, configuration stored: AccountConfiguration, scopes: [String], in context: AccountStoreContext
    ) async throws -> AccessToken {
        let configuration = try await context.forTheWire(stored)
        let group = configuration.storageGroup
        let refreshToken = try storedRefreshToken(of: account, configuration: configuration, in: context)
        try context.caches.reserveRoom(group: group)
        context.caches.rescue.prepare(group: group)
        defer {
            context.caches.storage.releaseRoom(group: group)
            context.caches.rescue.release(group: group)
        }
        do {
            return try await Termination.shared.deferring {
                try await redeemAndStore(refreshToken, of: account, configuration: configuration, scopes: scopes, in: context)
            }
        } catch let ending as Termination.Ending {
            var error = AccountStoreError(.cancelled, "The program is ending (\(Termination.name(of: ending.signal))); nothing was sent.")
            error.accountType = account.accountType
            throw error
        }
    }

    /// The request that spends `refreshToken`, and the store of its answer (or its rescue).
    private static func redeemAndStore(
        _ refreshToken: RefreshTokenEntry, of account: Account, configuration: AccountConfiguration, scopes: [String],
        in context: AccountStoreContext
    ) async throws -> AccessToken {
        let (tokens, claims): (TokenResponse, IDTokenClaims?)
        do throws(AccountStoreError) {
            (tokens, claims) = try await redeem(refreshToken, of: account, configuration: configuration, scopes: scopes, in: context)
        } catch {
            try refused(account, configuration: configuration, error, in: context)
            throw error
        }
        let grantedAt = Int(context.now().timeIntervalSince1970)
        let refreshed: Account
        do {
            refreshed = try save(
                tokens, claims: claims, of: account, configuration: configuration, scopes: scopes, at: grantedAt, in: context)
        } catch {
            // Signed out meanwhile: nothing to keep. Else the rotated token must not be lost.
            if error.code != .accountNotFound {
                rescue(tokens.refreshToken, replacing: refreshToken, of: account, configuration: configuration, failure: error, in: context)
            }
            throw error
        }
        // Stored: what an earlier refresh kept aside (for this account, now stale; for others of
        // the group, still needed) goes into the cache too.
        if context.caches.rescue.holds(group: configuration.storageGroup) {
            _ = context.caches.recoverRescued(group: configuration.storageGroup, now: context.now())
        }
        if account.interactionRequired {
            context.events.emit(.accountsDidChange(accountType: account.accountType, change: .updated(refreshed)))
        }
        return AccessToken(
            secret: tokens.accessToken, tokenType: tokens.tokenType,
            expiresOn: Date(timeIntervalSince1970: TimeInterval(tokens.expiresOn ?? grantedAt + tokens.expiresIn)),
            scopes: tokens.scope ?? scopes.filter { !AccountStore.oidcScopes.contains($0.lowercased()) }, account: refreshed)
    }

    /// The account's stored refresh token; none is an error only a sign-in mends (announced).
    private static func storedRefreshToken(
        of account: Account, configuration: AccountConfiguration, in context: AccountStoreContext
    ) throws -> RefreshTokenEntry {
        let group = configuration.storageGroup
        let rescued = context.caches.rescue.holds(group: group) ? context.caches.recoverRescued(group: group, now: context.now()) : []
        let refreshToken = try context.withCache(group: group, write: false) { stored in
            var cache = stored
            // Kept tokens the cache could not take yet are used from here.
            _ = RefreshRescue.apply(rescued, to: &cache, now: Int(context.now().timeIntervalSince1970))
            return cache.refreshToken(
                homeAccountID: account.homeAccountID, environment: account.environment, clientID: configuration.clientID)
        }
        guard let refreshToken else {
            var error = AccountStoreError(.interactionRequired, "Sign in again: no refresh token is stored for \(account.displayName).")
            error.accountType = account.accountType
            error.homeAccountID = account.homeAccountID
            context.events.emit(.didFailToRequestAccess(accountType: account.accountType, error: error))
            throw error
        }
        return refreshToken
    }

    /// `refreshToken` redeemed for `scopes` (with the account type's OpenID scopes), and the
    /// id_token of the answer checked. A rotated refresh token is kept even when the id_token
    /// cannot be checked.
    private static func redeem(
        _ refreshToken: RefreshTokenEntry, of account: Account, configuration: AccountConfiguration, scopes: [String],
        in context: AccountStoreContext
    ) async throws(AccountStoreError) -> (TokenResponse, IDTokenClaims?) {
        var scopeSet: [String] = []
        for scope in configuration.scopes.filter({ AccountStore.oidcScopes.contains($0.lowercased()) }) + scopes
        where !scopeSet.contains(scope) {
            scopeSet.append(scope)
        }
        let request = RefreshTokenRequest(
            clientID: configuration.clientID, refreshToken: refreshToken.secret, scopes: scopeSet,
            requestsClientInfo: configuration.isMicrosoftAuthority)
        context.logger.debug("refreshing", metadata: ["accountType": "\(account.accountType)", "account": "\(account.username)"])
        let tokens = try await context.tokenEndpoint.send(
            request, configuration: configuration, accountType: account.accountType, homeAccountID: account.homeAccountID)
        do throws(AccountStoreError) {
            let claims = try await context.verifier.claims(
                of: tokens.idToken, configuration: configuration, expectedNonce: nil, required: false, now: context.now())
            return (tokens, claims)
        } catch {
            do {
                try keepRotatedToken(of: tokens, for: account, configuration: configuration, in: context)
            } catch let failure {
                rescue(
                    tokens.refreshToken, replacing: refreshToken, of: account, configuration: configuration, failure: failure, in: context)
            }
            throw error
        }
    }

    /// The service rotated the refresh token and the one redeemed may be dead now: the new one is
    /// kept (nothing else of an answer that failed), so that the next attempt needs no sign-in.
    private static func keepRotatedToken(
        of tokens: TokenResponse, for account: Account, configuration: AccountConfiguration, in context: AccountStoreContext
    ) throws(AccountStoreError) {
        guard let rotated = tokens.refreshToken else { return }
        let grantedAt = Int(context.now().timeIntervalSince1970)
        try context.withCache(group: configuration.storageGroup, write: true) { cache in
            guard cache.account(homeAccountID: account.homeAccountID, environment: account.environment) != nil else { return }
            cache.replaceRefreshToken(
                rotated, homeAccountID: account.homeAccountID, environment: account.environment, clientID: configuration.clientID,
                now: grantedAt)
        }
    }

    /// The cache could not store a refresh's answer: its rotated refresh token (the one spent may
    /// be dead now) is kept in the rescue for the next attempt.
    private static func rescue(
        _ rotated: Secret?, replacing spent: RefreshTokenEntry, of account: Account, configuration: AccountConfiguration,
        failure: AccountStoreError, in context: AccountStoreContext
    ) {
        guard let rotated else { return }
        context.caches.keepAside(
            RefreshRescue.Kept(
                homeAccountID: account.homeAccountID, environment: account.environment, clientID: configuration.clientID,
                refreshToken: rotated.revealed, replaces: RefreshRescue.fingerprint(of: spent.secret),
                keptAt: Int(context.now().timeIntervalSince1970)),
            group: configuration.storageGroup, failure: failure)
    }

    /// A refresh the service refused: when only an interactive sign-in can help, the account is
    /// marked (and a claims challenge kept for that sign-in); the failure is announced.
    private static func refused(
        _ account: Account, configuration: AccountConfiguration, _ error: AccountStoreError, in context: AccountStoreContext
    ) throws(AccountStoreError) {
        if error.code == .interactionRequired, let claims = error.claimsChallenge {
            context.claims.keep(claims, for: account.accountType)
        }
        if error.code == .interactionRequired {
            let marked = try context.withCache(group: configuration.storageGroup, write: true) { cache in
                cache.setInteractionRequired(true, homeAccountID: account.homeAccountID, environment: account.environment)
                return cache.account(homeAccountID: account.homeAccountID, environment: account.environment)
            }
            if let marked {
                context.events.emit(
                    .accountsDidChange(
                        accountType: account.accountType, change: .updated(Account(accountType: account.accountType, entry: marked))))
            }
        }
        context.events.emit(.didFailToRequestAccess(accountType: account.accountType, error: error))
    }

    /// Saves a refresh's answer, in the same transaction as the check that the account is still
    /// signed in: one signed out meanwhile (here, or by `sesame signout` in another process)
    /// stays signed out; its new tokens are dropped.
    private static func save(
        _ tokens: TokenResponse, claims: IDTokenClaims?, of account: Account, configuration: AccountConfiguration, scopes: [String],
        at grantedAt: Int, in context: AccountStoreContext
    ) throws(AccountStoreError) -> Account {
        let entry = try context.withCache(group: configuration.storageGroup, write: true) { cache -> AccountEntry? in
            guard cache.account(homeAccountID: account.homeAccountID, environment: account.environment) != nil else { return nil }
            cache.save(
                TokenCache.Grant(
                    homeAccountID: account.homeAccountID, environment: account.environment,
                    realm: SignedInAccounts.realm(of: configuration, tenantID: claims?.tenantID ?? account.realm),
                    clientID: configuration.clientID, requestedScopes: scopes, response: tokens, idTokenClaims: claims,
                    accountSource: "refresh_token", now: grantedAt))
            return cache.account(homeAccountID: account.homeAccountID, environment: account.environment)
        }
        guard let entry else {
            var error = AccountStoreError(.accountNotFound, "\(account.displayName) was signed out while a token was being refreshed.")
            error.accountType = account.accountType
            error.homeAccountID = account.homeAccountID
            throw error
        }
        return Account(accountType: account.accountType, entry: entry)
    }
}
