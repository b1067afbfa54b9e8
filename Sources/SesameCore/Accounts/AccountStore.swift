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
    /// Every cache access: one transaction under the storage's lock, or the last read's copy.
    var cache: TokenCacheTransaction
    /// Silent tokens' remembered answers and the refreshes under way.
    var silent = SilentTokens()

    private var configurations: [String: AccountConfiguration] = [:]
    /// Claims challenges a refused refresh carried (Conditional Access asking for MFA), per
    /// account type: the next interactive sign-in sends them on `/authorize`.
    var claimsChallenges: [String: String] = [:]
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
    /// never redeemed: the agent leaves it unloaded and the sign-in goes on. B2C's AADB2C90118 ("Forgot your password?") starts the
    /// configuration's password-reset user flow in the same agent, and its answer signs the user
    /// in. Cancelling the calling task cancels the sign-in.
    /// - Parameter parameters: `prompt`, `login_hint`, `domain_hint`, … for this sign-in, over
    ///   the configuration's own.
    /// - Returns: the signed-in account.
    /// - Throws: ``AccountStoreError``: `cancelled` (the user closed the agent), `malformedRedirect`,
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
                let session = try await begin(accountType: accountType, configuration: configuration, parameters: parameters, in: userAgent)
                switch await session.ending() {
                case .answered(.code(let answer)):
                    // The agent goes as the code is redeemed (AppAuth dismisses on the redirect).
                    async let dismissed: Void = userAgent.dismiss(session)
                    let account: Account
                    do throws(AccountStoreError) {
                        account = try await redeem(answer, session: session, configuration: configuration)
                    } catch {
                        await dismissed
                        throw error
                    }
                    await dismissed
                    claimsChallenges[accountType] = nil
                    return account
                case .answered(.error(let refusal)):
                    let error = AccountStoreError.from(refusal, accountType: accountType)
                    // B2C's seed: AADB2C90118 means "run the password-reset user flow, then go on",
                    // in the same agent.
                    if error.code == .passwordResetRequested, let reset = base.passwordResetPolicy,
                        configuration.policy?.lowercased() != reset.lowercased()
                    {
                        emit(.didFailToRequestAccess(accountType: accountType, error: error))
                        logger.info("password reset requested; starting the reset user flow", metadata: ["accountType": "\(accountType)"])
                        configuration = base.withPolicy(reset)
                        continue
                    }
                    await userAgent.dismiss(session)
                    throw error
                case .failed(let error):
                    await userAgent.dismiss(session)
                    throw error
                case .cancelled:
                    await userAgent.dismiss(session)
                    throw AccountStoreError(.cancelled, "Sign-in was cancelled.")
                case .handedOff:
                    await userAgent.dismiss(session)
                    throw AccountStoreError(.handedOffToBrowser, "The sign-in moved to the web browser.")
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

    /// Prepares one session (`prompt=login` after a sign-out, a pending claims challenge, the
    /// agent's redirect URI) and has the agent show it.
    private func begin(
        accountType: String, configuration: AccountConfiguration, parameters: [String: String], in userAgent: any SignInUserAgent
    ) async throws(AccountStoreError) -> SignInSession {
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
            throw AccountStoreError(.userAgentUnavailable, "The sign-in cannot receive its answer: \(error)")
        }
        let request = AuthorizationRequest(configuration: configuration, additionalParameters: parameters)
        let session = SignInSession(accountType: accountType, configuration: configuration, request: request)
        logger.info("sign-in started", metadata: ["accountType": "\(accountType)", "url": "\(session.authorizationURL.redactingQuery)"])
        // The provider's keys are fetched while the user is at the pages, off the path from the
        // redirect to the user's data — and off the path to the first page: a moment after it
        // was asked for, once the agent's engine has started (the first request's proxy lookup
        // loads the desktop's proxy libraries, a PAC runner among them). Counted from here, not
        // from `present`'s return: an agent may stay in `present` while the user is at the pages.
        var prefetch: Task<Void, any Error>?
        if configuration.scopes.contains("openid") {
            prefetch = Task.detached { [verifier, now] in
                try await Task.sleep(for: Self.prefetchDelay)
                await verifier.metadata.prefetch(discoveryURL: configuration.resolvedDiscoveryURL, now: now())
            }
        }
        do {
            try await userAgent.present(session)
        } catch {
            prefetch?.cancel()
            await userAgent.dismiss(session)
            throw AccountStoreError(.userAgentUnavailable, "The sign-in page could not be shown: \(error)")
        }
        return session
    }

    /// How long after the sign-in page was asked for the provider's keys are fetched.
    static let prefetchDelay: Duration = .milliseconds(300)

    /// The code redeemed (with the session's PKCE verifier), the id_token checked against the
    /// session's nonce, the account stored.
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
        let question = SilentTokens.Question(accountType: account.accountType, homeAccountID: account.homeAccountID, scopes: scopes)
        if !forceRefresh, let token = silent.answer(to: question, storage: cache.storage, now: now()) {
            return token
        }
        let configuration = try requireConfiguration(account.accountType).issuing(homeAccountID: account.homeAccountID)
        let wanted = scopes ?? configuration.scopes
        let resourceScopes = Set(wanted.filter { !Self.oidcScopes.contains($0.lowercased()) })
        if !forceRefresh, let cached = try cachedToken(for: account, configuration: configuration, scopes: resourceScopes) {
            silent.remember(cached, for: question, group: configuration.storageGroup, read: cache.readCopy(of: configuration.storageGroup))
            return cached
        }
        let refresh = SilentTokens.Refresh(account: account, scopes: resourceScopes)
        let task = silent.refreshing(refresh) { previous in
            Task {
                _ = try? await previous?.value
                return try await self.refreshAcrossProcesses(
                    account, configuration: configuration, scopes: wanted, resourceScopes: resourceScopes, forceRefresh: forceRefresh)
            }
        }
        defer { silent.ended(task, refresh) }
        return try await task.value
    }

    /// A cached access token for `scopes` valid for at least five more minutes.
    func cachedToken(for account: Account, configuration: AccountConfiguration, scopes: Set<String>) throws -> AccessToken? {
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

    static let oidcScopes: Set<String> = ["openid", "profile", "offline_access", "email"]

    // MARK: Cache access

    /// Runs `body` on a group's cache in one transaction (or on the last read's copy while the
    /// stored bytes are unchanged: ``TokenCacheTransaction/access(group:write:_:)``); announces a
    /// cache that had to be set aside.
    func withCache<T: Sendable>(group: String, write: Bool, _ body: (inout TokenCache) throws -> T) throws(AccountStoreError) -> T {
        let result = try cache.access(group: group, write: write, body)
        if let setAside = result.setAsideAt { emit(.cacheRecovered(storageGroup: group, setAsideAt: setAside)) }
        return result.value
    }
}
