import Foundation
import Logging

/// Signs users in and keeps their tokens fresh: NXOAuth2's `NXOAuth2AccountStore` and MSAL's
/// `acquireTokenSilent`, with state, PKCE, nonce and id_token validation.
///
/// 1. ``setConfiguration(_:forAccountType:)`` once per account type.
/// 2. ``signIn(accountType:parameters:using:)`` runs one interactive sign-in through a
///    ``SignInUserAgent`` (the embedded web view, say): it prepares the request, waits for the
///    redirect the agent catches, checks it, redeems the code, validates the id_token and stores
///    the account. B2C's "Forgot your password?" goes on into the password-reset user flow.
/// 3. ``accessToken(for:scopes:forceRefresh:)`` returns a token valid for at least five more
///    minutes, refreshing (once, however many callers ask at the same time) when needed.
/// 4. ``remove(_:)`` signs out; the group's next sign-in asks who signs in, also after a restart.
///
/// The store is orchestration: token requests are ``TokenRequest`` values sent by a token
/// endpoint client, id_tokens are checked by a verifier that follows key rollover, and every
/// cache access is one transaction under the storage's lock.
public actor AccountStore {
    let transport: any HTTPTransport
    let now: @Sendable () -> Date
    let logger: Logger
    let tokenEndpoint: TokenEndpointClient
    let verifier: IDTokenVerifier
    private let cache: TokenCacheTransaction

    private var configurations: [String: AccountConfiguration] = [:]
    /// The refresh under way per (account, scopes), which callers for those scopes join.
    private var refreshes: [String: Task<AccessToken, any Error>] = [:]
    /// The latest refresh per account, which the next one for other scopes waits for.
    private var lastRefresh: [String: Task<AccessToken, any Error>] = [:]
    /// Claims challenges a refused refresh carried (Conditional Access asking for MFA), per
    /// account type: the next interactive sign-in sends them on `/authorize`.
    private var claimsChallenges: [String: String] = [:]
    private var subscribers: [UUID: AsyncStream<AccountStoreEvent>.Continuation] = [:]
    /// How the device code flow waits between polls (tests record instead of sleeping).
    var pollingSleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }

    /// A cached access token is handed out only while it stays valid this much longer.
    public static let minimumRemainingValidity: TimeInterval = 5 * 60

    /// A store over a storage backend and a transport.
    /// - Parameters:
    ///   - storage: where token caches live (Secret Service or files).
    ///   - transport: HTTP to the identity provider.
    ///   - validator: id_token checks (clock skew).
    ///   - now: the clock; tests move it.
    ///   - logger: never sees a secret.
    public init(
        storage: any TokenStorage,
        transport: any HTTPTransport = AsyncHTTPClientTransport(),
        validator: IDTokenValidator = IDTokenValidator(),
        now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "sesame.accounts")
    ) {
        self.transport = transport
        self.now = now
        self.logger = logger
        tokenEndpoint = TokenEndpointClient(transport: transport, logger: logger)
        verifier = IDTokenVerifier(transport: transport, validator: validator, logger: logger)
        cache = TokenCacheTransaction(storage: storage, logger: logger)
    }

    /// Replaces how the device code flow waits between polls (tests).
    func setPollingSleep(_ sleep: @escaping @Sendable (Duration) async throws -> Void) { pollingSleep = sleep }

    // MARK: Configuration

    /// Registers (or replaces) how an account type signs in.
    public func setConfiguration(_ configuration: AccountConfiguration, forAccountType accountType: String) {
        configurations[accountType] = configuration
    }

    /// Registers (or replaces) how each of several account types signs in (keys: the account
    /// types), in one call on the store's actor.
    public func setConfigurations(_ configurations: [String: AccountConfiguration]) {
        self.configurations.merge(configurations) { _, new in new }
    }

    /// The configuration of an account type.
    public func configuration(forAccountType accountType: String) -> AccountConfiguration? {
        configurations[accountType]
    }

    func requireConfiguration(_ accountType: String) throws(AccountStoreError) -> AccountConfiguration {
        guard let configuration = configurations[accountType] else {
            var error = AccountStoreError(.unknownAccountType, "No sign-in is configured for the account type \"\(accountType)\".")
            error.accountType = accountType
            throw error
        }
        return configuration
    }

    // MARK: Events

    /// A stream of the store's events, for as long as the caller listens.
    public func events() -> AsyncStream<AccountStoreEvent> {
        let id = UUID()
        let (stream, continuation) = AsyncStream.makeStream(of: AccountStoreEvent.self, bufferingPolicy: .bufferingNewest(64))
        subscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        return stream
    }

    private func unsubscribe(_ id: UUID) {
        subscribers[id] = nil
    }

    func emit(_ event: AccountStoreEvent) {
        for continuation in subscribers.values { continuation.yield(event) }
    }

    // MARK: Interactive sign-in

    /// Signs a user in interactively through `userAgent`.
    ///
    /// Builds the authorization request (fresh `state`, `nonce`, PKCE; `prompt=login` when the
    /// group's last user signed out), has the agent show it, and takes the redirect the agent
    /// hands back through the ``SignInSession``. An answer whose `state` is not this request's is
    /// refused before anything is sent. B2C's AADB2C90118 ("Forgot your password?") starts the
    /// configuration's password-reset user flow in the same agent, and its answer signs the user
    /// in. Cancelling the calling task cancels the sign-in.
    /// - Parameter parameters: `prompt`, `login_hint`, `domain_hint`, … for this sign-in, over
    ///   the configuration's own.
    /// - Returns: the signed-in account.
    /// - Throws: ``AccountStoreError``: `cancelled` (the user closed the agent), `stateMismatch`,
    ///   `authorizationFailed`, `passwordResetRequested` (no reset flow configured),
    ///   `invalidIDToken`, `tokenRequestFailed`, `network`, …; each also announced as
    ///   ``AccountStoreEvent/didFailToRequestAccess(accountType:error:)``.
    public func signIn(
        accountType: String, parameters: [String: String] = [:], using userAgent: any SignInUserAgent
    ) async throws(AccountStoreError) -> Account {
        do throws(AccountStoreError) {
            let base = try await forTheWire(requireConfiguration(accountType))
            var configuration = base
            while true {
                do throws(SessionFailure) {
                    let (account, session) = try await signInOnce(
                        accountType: accountType, configuration: configuration, parameters: parameters, userAgent: userAgent)
                    claimsChallenges[accountType] = nil
                    await userAgent.dismiss(session)
                    return account
                } catch {
                    let reset = base.passwordResetPolicy
                    guard error.error.code == .passwordResetRequested, let reset,
                        configuration.policy?.lowercased() != reset.lowercased()
                    else {
                        await userAgent.dismiss(error.session)
                        throw error.error
                    }
                    // B2C's seed: AADB2C90118 means "run the password-reset user flow, then go on".
                    emit(.didFailToRequestAccess(accountType: accountType, error: error.error))
                    logger.info("password reset requested; starting the reset user flow", metadata: ["accountType": "\(accountType)"])
                    configuration = base.withPolicy(reset)
                }
            }
        } catch {
            var failure = error
            if failure.accountType == nil { failure.accountType = accountType }
            logger.notice("sign-in failed", metadata: ["accountType": "\(accountType)", "error": "\(failure)"])
            emit(.didFailToRequestAccess(accountType: accountType, error: failure))
            throw failure
        }
    }

    /// A failure of one session, with the session (for dismissing its agent).
    private struct SessionFailure: Error {
        var error: AccountStoreError
        var session: SignInSession
    }

    private func signInOnce(
        accountType: String, configuration: AccountConfiguration, parameters: [String: String], userAgent: any SignInUserAgent
    ) async throws(SessionFailure) -> (account: Account, session: SignInSession) {
        var parameters = parameters
        if parameters["prompt"] == nil, let prompt = try? nextPrompt(group: configuration.storageGroup) {
            parameters["prompt"] = prompt
        }
        if parameters["claims"] == nil, let claims = claimsChallenges[accountType] {
            parameters["claims"] = claims
        }
        var configuration = configuration
        do {
            configuration.redirectURL = try await userAgent.redirectURI(for: configuration)
        } catch {
            let request = AuthorizationRequest(configuration: configuration, additionalParameters: parameters)
            throw SessionFailure(
                error: AccountStoreError(.userAgentUnavailable, "The sign-in cannot receive its answer: \(error)"),
                session: SignInSession(accountType: accountType, configuration: configuration, request: request))
        }
        let request = AuthorizationRequest(configuration: configuration, additionalParameters: parameters)
        let session = SignInSession(accountType: accountType, configuration: configuration, request: request)
        logger.info("sign-in started", metadata: ["accountType": "\(accountType)", "url": "\(session.authorizationURL.redactingQuery)"])
        // The provider's keys are fetched while the user is at the pages, off the path from the
        // redirect to the user's data.
        if configuration.scopes.contains("openid") {
            Task.detached { [verifier, now] in
                await verifier.metadata.prefetch(discoveryURL: configuration.resolvedDiscoveryURL, now: now())
            }
        }
        do throws(AccountStoreError) {
            do {
                try await userAgent.present(session)
            } catch {
                throw AccountStoreError(.userAgentUnavailable, "The sign-in page could not be shown: \(error)")
            }
            guard case .redirect(let url) = await session.outcome() else {
                throw AccountStoreError(.cancelled, "Sign-in was cancelled.")
            }
            let account = try await complete(session, redirect: url, configuration: configuration)
            return (account, session)
        } catch {
            throw SessionFailure(error: error, session: session)
        }
    }

    /// The redirect's answer: `state` checked, then the code redeemed or the error typed.
    private func complete(
        _ session: SignInSession, redirect url: URL, configuration: AccountConfiguration
    ) async throws(AccountStoreError) -> Account {
        guard let response = AuthorizationResponse(redirectURL: url) else {
            throw AccountStoreError(.malformedRedirect, "The identity service's answer carried neither a code nor an error.")
        }
        guard let state = response.state, state == session.request.state.revealed else {
            logger.warning("redirect with an unknown state refused", metadata: ["url": "\(url.redactingQuery)"])
            throw AccountStoreError(
                .stateMismatch, "The sign-in answer does not belong to a sign-in this app started; it was ignored. Sign in again.")
        }
        switch response {
        case .error(let refusal):
            throw AccountStoreError.from(refusal, accountType: session.accountType)
        case .code(let answer):
            return try await redeem(answer, session: session, configuration: configuration)
        }
    }

    private func redeem(
        _ answer: AuthorizationCodeResponse, session: SignInSession, configuration: AccountConfiguration
    ) async throws(AccountStoreError) -> Account {
        let accountType = session.accountType
        let request = AuthorizationCodeRequest(code: answer.code, answering: session.request)
        let tokens = try await tokenEndpoint.send(request, configuration: configuration, accountType: accountType)
        let claims = try await verifier.claims(
            of: tokens.idToken, configuration: configuration, expectedNonce: session.request.nonce.revealed,
            required: configuration.scopes.contains("openid"), now: now())
        let clientInfo = (tokens.clientInfo ?? answer.clientInfo).flatMap(ClientInfo.init(encoded:))
        return try store(
            tokens, claims: claims, clientInfo: clientInfo, configuration: configuration, accountType: accountType,
            source: "authorization_code")
    }

    /// Stores a sign-in's tokens under the account they name and announces it.
    /// - Parameter source: the cache's `account_source` (`authorization_code`, `device_code`).
    func store(
        _ tokens: TokenResponse, claims: IDTokenClaims?, clientInfo: ClientInfo?, configuration: AccountConfiguration,
        accountType: String, source: String
    ) throws(AccountStoreError) -> Account {
        guard let homeAccountID = clientInfo?.homeAccountID ?? claims?.objectID ?? claims?.subject else {
            throw AccountStoreError(.invalidResponse, "The identity service's answer identifies no user (no client_info and no id_token).")
        }
        let environment = Self.environment(of: configuration)
        let grantedAt = Int(now().timeIntervalSince1970)
        let (entry, existed) = try withCache(group: configuration.storageGroup, write: true) { cache -> (AccountEntry?, Bool) in
            let existed = cache.accounts(environment: environment, clientID: configuration.clientID)
                .contains { $0.homeAccountID == homeAccountID }
            cache.save(
                TokenCache.Grant(
                    homeAccountID: homeAccountID, environment: environment, realm: Self.realm(of: configuration),
                    clientID: configuration.clientID, requestedScopes: configuration.scopes, response: tokens,
                    idTokenClaims: claims, accountSource: source, now: grantedAt))
            // Someone signed in: the group's next sign-in may use single sign-on again.
            cache.nextSignInPrompt = nil
            return (cache.account(homeAccountID: homeAccountID, environment: environment), existed)
        }
        guard let entry else {
            throw AccountStoreError(.invalidResponse, "The signed-in account could not be stored.")
        }
        let account = Account(accountType: accountType, entry: entry)
        logger.info("signed in", metadata: ["accountType": "\(accountType)", "account": "\(account.username)"])
        emit(.accountsDidChange(accountType: accountType, change: existed ? .updated(account) : .added(account)))
        return account
    }

    /// `prompt` for the group's next interactive sign-in: `login` after a sign-out.
    private func nextPrompt(group: String) throws(AccountStoreError) -> String? {
        try withCache(group: group, write: false) { $0.nextSignInPrompt }
    }

    /// Whether the next interactive sign-in of `accountType` asks who signs in (`prompt=login`),
    /// because its group's last user signed out (remembered across restarts, in the cache).
    public func asksForAccountNext(accountType: String) throws(AccountStoreError) -> Bool {
        try nextPrompt(group: requireConfiguration(accountType).storageGroup) == "login"
    }

    // MARK: Accounts

    /// The accounts of an account type: those holding a token of its client in its storage group.
    public func accounts(ofType accountType: String) throws -> [Account] {
        let configuration = try requireConfiguration(accountType)
        let cache = try withCache(group: configuration.storageGroup, write: false) { $0 }
        return cache.accounts(environment: Self.environment(of: configuration), clientID: configuration.clientID)
            .map { Account(accountType: accountType, entry: $0) }
    }

    /// Signs an account out: removes its tokens for the account type's client (the account entry
    /// goes too once no other client sharing the group holds a token for it), and makes the
    /// group's next interactive sign-in ask who signs in rather than letting the service's single
    /// sign-on pick the same user again.
    public func remove(_ account: Account) throws {
        let configuration = try requireConfiguration(account.accountType)
        try withCache(group: configuration.storageGroup, write: true) { cache in
            cache.removeAccount(homeAccountID: account.homeAccountID, environment: account.environment, clientID: configuration.clientID)
            cache.nextSignInPrompt = "login"
        }
        logger.info("signed out", metadata: ["accountType": "\(account.accountType)", "account": "\(account.username)"])
        emit(.accountsDidChange(accountType: account.accountType, change: .removed(account)))
    }

    // MARK: Silent tokens

    /// An access token for the account, without user interaction: MSAL's `acquireTokenSilent`.
    ///
    /// A cached token is returned while it stays valid for at least five more minutes;
    /// otherwise the refresh token is redeemed. Concurrent callers for one account share a
    /// single refresh. The rotated refresh token is stored before the new access token is
    /// returned.
    /// - Parameters:
    ///   - scopes: the scopes needed; the account type's non-OIDC scopes when `nil`.
    ///   - forceRefresh: skip the cached access token (after a 401, say).
    /// - Throws: ``AccountStoreError`` with code `interactionRequired` when the refresh token
    ///   was refused (`invalid_grant`, `interaction_required`); the account stays in the store,
    ///   marked, until the user signs in again.
    public func accessToken(for account: Account, scopes: [String]? = nil, forceRefresh: Bool = false) async throws -> AccessToken {
        // The answer to the same question, while the stored bytes it came from are unchanged
        // and the token has five minutes left: no cache lookup at all.
        let question = TokenQuestion(accountType: account.accountType, homeAccountID: account.homeAccountID, scopes: scopes)
        if !forceRefresh, let answer = answers[question], answer.isCurrent(storage: cache.storage, now: now()) {
            return answer.token
        }
        let configuration = try requireConfiguration(account.accountType).issuing(homeAccountID: account.homeAccountID)
        let wanted = scopes ?? configuration.scopes
        let resourceScopes = Set(wanted.filter { !Self.oidcScopes.contains($0.lowercased()) })
        if !forceRefresh, let cached = try cachedToken(for: account, configuration: configuration, scopes: resourceScopes) {
            if let copy = readCopies[configuration.storageGroup] {
                answers[question] = Answer(token: cached, group: configuration.storageGroup, read: copy)
            }
            return cached
        }
        // Callers asking for the same scopes share one refresh; refreshes of one account for
        // different scopes take turns, so that one refresh token is never redeemed twice at once
        // (each turn reads the token the previous one rotated in).
        let accountKey = "\(account.accountType)|\(account.homeAccountID)"
        let key = accountKey + "|" + resourceScopes.map { $0.lowercased() }.sorted().joined(separator: " ")
        if let running = refreshes[key] {
            return try await running.value
        }
        let previous = lastRefresh[accountKey]
        let task = Task {
            _ = try? await previous?.value
            return try await self.refreshAcrossProcesses(
                account, configuration: configuration, scopes: wanted, resourceScopes: resourceScopes, forceRefresh: forceRefresh)
        }
        refreshes[key] = task
        lastRefresh[accountKey] = task
        defer {
            if refreshes[key] == task { refreshes[key] = nil }
            if lastRefresh[accountKey] == task { lastRefresh[accountKey] = nil }
        }
        return try await task.value
    }

    /// A cached access token for `scopes` valid for at least five more minutes.
    private func cachedToken(for account: Account, configuration: AccountConfiguration, scopes: Set<String>) throws -> AccessToken? {
        let validUntil = Int(now().addingTimeInterval(Self.minimumRemainingValidity).timeIntervalSince1970)
        let cached = try withCache(group: configuration.storageGroup, write: false) { cache in
            cache.accessToken(
                homeAccountID: account.homeAccountID, environment: account.environment, clientID: configuration.clientID,
                realm: Self.realm(of: configuration), scopes: scopes, validUntil: validUntil)
        }
        return cached.map {
            AccessToken(
                secret: $0.secret, tokenType: $0.tokenType, expiresOn: Date(timeIntervalSince1970: TimeInterval($0.expiresOn)),
                scopes: $0.target.split(separator: " ").map(String.init), account: account)
        }
    }

    /// Refreshes under the storage's refresh lock, which every process sharing the cache takes:
    /// one program redeems the account's refresh token at a time, and one that waited uses
    /// what the other stored when it is enough.
    private func refreshAcrossProcesses(
        _ account: Account, configuration: AccountConfiguration, scopes: [String], resourceScopes: Set<String>, forceRefresh: Bool
    ) async throws -> AccessToken {
        try await cache.storage.whileRefreshing(group: configuration.storageGroup, isolation: self) {
            if !forceRefresh, let cached = try self.cachedToken(for: account, configuration: configuration, scopes: resourceScopes) {
                return cached
            }
            return try await self.refresh(account, configuration: configuration, scopes: scopes)
        }
    }

    private func refresh(_ account: Account, configuration stored: AccountConfiguration, scopes: [String]) async throws -> AccessToken {
        let configuration = try await forTheWire(stored)
        let environment = account.environment
        let refreshToken = try withCache(group: configuration.storageGroup, write: false) { cache in
            cache.refreshToken(homeAccountID: account.homeAccountID, environment: environment, clientID: configuration.clientID)
        }
        guard let refreshToken else {
            var error = AccountStoreError(.interactionRequired, "Sign in again: no refresh token is stored for \(account.displayName).")
            error.accountType = account.accountType
            error.homeAccountID = account.homeAccountID
            emit(.didFailToRequestAccess(accountType: account.accountType, error: error))
            throw error
        }
        var scopeSet: [String] = []
        for scope in configuration.scopes.filter({ Self.oidcScopes.contains($0.lowercased()) }) + scopes where !scopeSet.contains(scope) {
            scopeSet.append(scope)
        }
        let request = RefreshTokenRequest(
            clientID: configuration.clientID, refreshToken: refreshToken.secret, scopes: scopeSet,
            requestsClientInfo: configuration.isMicrosoftAuthority)
        logger.debug("refreshing", metadata: ["accountType": "\(account.accountType)", "account": "\(account.username)"])

        let tokens: TokenResponse
        let claims: IDTokenClaims?
        do throws(AccountStoreError) {
            tokens = try await tokenEndpoint.send(
                request, configuration: configuration, accountType: account.accountType, homeAccountID: account.homeAccountID)
            do throws(AccountStoreError) {
                claims = try await verifier.claims(
                    of: tokens.idToken, configuration: configuration, expectedNonce: nil, required: false, now: now())
            } catch {
                // The service rotated the refresh token and the one redeemed may be dead now: keep
                // the new one (nothing else of an answer whose id_token failed), so that the next
                // attempt — once the keys can be fetched — needs no sign-in.
                if let rotated = tokens.refreshToken {
                    let grantedAt = Int(now().timeIntervalSince1970)
                    try withCache(group: configuration.storageGroup, write: true) { cache in
                        guard cache.account(homeAccountID: account.homeAccountID, environment: environment) != nil else { return }
                        cache.replaceRefreshToken(
                            rotated, homeAccountID: account.homeAccountID, environment: environment, clientID: configuration.clientID,
                            now: grantedAt)
                    }
                }
                throw error
            }
        } catch {
            if error.code == .interactionRequired, let claims = error.claimsChallenge {
                claimsChallenges[account.accountType] = claims
            }
            if error.code == .interactionRequired {
                let marked = try withCache(group: configuration.storageGroup, write: true) { cache in
                    cache.setInteractionRequired(true, homeAccountID: account.homeAccountID, environment: environment)
                    return cache.account(homeAccountID: account.homeAccountID, environment: environment)
                }
                if let marked {
                    emit(
                        .accountsDidChange(
                            accountType: account.accountType, change: .updated(Account(accountType: account.accountType, entry: marked))))
                }
            }
            emit(.didFailToRequestAccess(accountType: account.accountType, error: error))
            throw error
        }

        let grantedAt = Int(now().timeIntervalSince1970)
        // In the same transaction as the write: an account signed out meanwhile (here, or by
        // `sesame signout` in another process) stays signed out; its new tokens are dropped.
        let entry = try withCache(group: configuration.storageGroup, write: true) { cache -> AccountEntry? in
            guard cache.account(homeAccountID: account.homeAccountID, environment: environment) != nil else { return nil }
            cache.save(
                TokenCache.Grant(
                    homeAccountID: account.homeAccountID, environment: environment, realm: Self.realm(of: configuration),
                    clientID: configuration.clientID, requestedScopes: scopes, response: tokens, idTokenClaims: claims,
                    accountSource: "refresh_token", now: grantedAt))
            return cache.account(homeAccountID: account.homeAccountID, environment: environment)
        }
        guard let entry else {
            var error = AccountStoreError(.accountNotFound, "\(account.displayName) was signed out while a token was being refreshed.")
            error.accountType = account.accountType
            error.homeAccountID = account.homeAccountID
            throw error
        }
        let refreshed = Account(accountType: account.accountType, entry: entry)
        if account.interactionRequired {
            emit(.accountsDidChange(accountType: account.accountType, change: .updated(refreshed)))
        }
        return AccessToken(
            secret: tokens.accessToken, tokenType: tokens.tokenType,
            expiresOn: Date(timeIntervalSince1970: TimeInterval(tokens.expiresOn ?? grantedAt + tokens.expiresIn)),
            scopes: tokens.scope ?? scopes.filter { !Self.oidcScopes.contains($0.lowercased()) }, account: refreshed)
    }

    private static let oidcScopes: Set<String> = ["openid", "profile", "offline_access", "email"]

    // MARK: Cache access

    /// Runs `body` on a group's cache in one transaction; announces a cache that had to be set
    /// aside.
    ///
    /// Every call sees what any process stored last, yet unchanged bytes are not read again: a
    /// read keeps its parsed copy under the storage's stamp (``TokenStorage/version(group:)``,
    /// taken under the lock with the read), and the next read uses the copy while the stamp is
    /// the same — no lock, no read, no parse.
    private func withCache<T: Sendable>(
        group: String, write: Bool, _ body: (inout TokenCache) throws -> T
    ) throws(AccountStoreError) -> T {
        let storage = cache.storage
        if !write, let copy = readCopies[group], let version = storage.version(group: group), version == copy.version,
            copy.version.maximumAge.map({ copy.readAt.duration(to: .now) < $0 }) ?? true
        {
            var cache = copy.cache
            do {
                return try body(&cache)
            } catch let error as AccountStoreError {
                throw error
            } catch {
                throw AccountStoreError(.invalidResponse, "The token cache could not be used: \(error)")
            }
        }
        readCopies[group] = nil
        var read: ReadCopy?
        let result = try cache.run(group: group, write: write) { cache in
            // Still under the lock: no process can have written since the bytes were read.
            if !write, let version = storage.version(group: group) { read = ReadCopy(version: version, cache: cache, readAt: .now) }
            return try body(&cache)
        }
        if let setAside = result.setAsideAt {
            emit(.cacheRecovered(storageGroup: group, setAsideAt: setAside))
        } else if let read {
            readCopies[group] = read
        }
        return result.value
    }

    /// A group's cache as last read, and the storage's stamp when it was.
    private struct ReadCopy {
        var version: StoredVersion
        var cache: TokenCache
        var readAt: ContinuousClock.Instant
    }

    /// The last read of each group (see ``withCache(group:write:_:)``).
    private var readCopies: [String: ReadCopy] = [:]

    /// A silent token request: whose, and for which scopes (`nil`: the account type's own).
    private struct TokenQuestion: Hashable {
        var accountType: String
        var homeAccountID: String
        var scopes: [String]?
    }

    /// A token given from the cache, and the read of the stored bytes it came from.
    private struct Answer {
        var token: AccessToken
        var group: String
        var read: ReadCopy

        /// Still the answer: the stored bytes have the same stamp (within its age limit) and
        /// the token has five minutes left.
        func isCurrent(storage: any TokenStorage, now: Date) -> Bool {
            guard token.expiresOn.timeIntervalSince(now) > AccountStore.minimumRemainingValidity,
                let version = storage.version(group: group), version == read.version
            else { return false }
            return read.version.maximumAge.map { read.readAt.duration(to: .now) < $0 } ?? true
        }
    }

    /// The last answer to each question (see ``accessToken(for:scopes:forceRefresh:)``).
    private var answers: [TokenQuestion: Answer] = [:]

    /// MSAL's `environment`: the authority host.
    static func environment(of configuration: AccountConfiguration) -> String {
        // A token endpoint left to discovery is known only later: the discovery document's host
        // names the provider from the start.
        let url = configuration.discoveredEndpoints.contains(.token) ? configuration.resolvedDiscoveryURL : configuration.tokenURL
        return (url.host ?? "").lowercased()
    }

    /// MSAL's `realm`: the token endpoint's first path segment (tenant); none for a provider
    /// whose token endpoint comes from discovery.
    static func realm(of configuration: AccountConfiguration) -> String {
        guard !configuration.discoveredEndpoints.contains(.token) else { return "" }
        return configuration.tokenURL.pathComponents.dropFirst().first ?? ""
    }
}
