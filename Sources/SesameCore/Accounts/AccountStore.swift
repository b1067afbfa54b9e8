import Foundation
import Logging

/// Signs users in and keeps their tokens fresh: NXOAuth2's `NXOAuth2AccountStore` and MSAL's
/// `acquireTokenSilent`, with state, PKCE, nonce and id_token validation.
///
/// 1. ``setConfiguration(_:forAccountType:)`` once per account type.
/// 2. ``prepareAuthorization(accountType:additionalParameters:)`` gives the URL to load.
/// 3. The web view reports each navigation; when ``PendingAuthorization/isRedirect(_:)`` is
///    true, ignore the navigation and pass the URL to ``handleRedirect(_:)``, which redeems the
///    code, validates the id_token and stores the account.
/// 4. ``accessToken(for:scopes:forceRefresh:)`` returns a token valid for at least five more
///    minutes, refreshing (once, however many callers ask at the same time) when needed.
public actor AccountStore {
    private let storage: any TokenStorage
    private let transport: any HTTPTransport
    private let now: @Sendable () -> Date
    private let logger: Logger
    private let validator: IDTokenValidator
    private let metadata: ProviderMetadataCache

    private var configurations: [String: AccountConfiguration] = [:]
    private var pending: [String: (accountType: String, request: AuthorizationRequest, id: String)] = [:]
    private var refreshes: [String: Task<AccessToken, any Error>] = [:]
    private var subscribers: [UUID: AsyncStream<AccountStoreEvent>.Continuation] = [:]

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
        self.storage = storage
        self.transport = transport
        self.validator = validator
        self.now = now
        self.logger = logger
        self.metadata = ProviderMetadataCache(transport: transport, logger: logger)
    }

    // MARK: Configuration

    /// Registers (or replaces) how an account type signs in.
    public func setConfiguration(_ configuration: AccountConfiguration, forAccountType accountType: String) {
        configurations[accountType] = configuration
    }

    /// The configuration of an account type.
    public func configuration(forAccountType accountType: String) -> AccountConfiguration? {
        configurations[accountType]
    }

    private func requireConfiguration(_ accountType: String) throws(AccountStoreError) -> AccountConfiguration {
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

    private func emit(_ event: AccountStoreEvent) {
        for continuation in subscribers.values { continuation.yield(event) }
    }

    // MARK: Interactive sign-in

    /// Starts a sign-in: builds the authorization URL with fresh `state`, `nonce` and PKCE
    /// values, and remembers them until the redirect comes back.
    /// - Parameter additionalParameters: `prompt`, `login_hint`, `domain_hint`, … for this
    ///   request, over the configuration's own.
    public func prepareAuthorization(
        accountType: String, additionalParameters: [String: String] = [:]
    ) throws(AccountStoreError) -> PendingAuthorization {
        let configuration = try requireConfiguration(accountType)
        let request = AuthorizationRequest(configuration: configuration, additionalParameters: additionalParameters)
        let id = UUID().uuidString
        pending[request.state.revealed] = (accountType, request, id)
        logger.info("authorization prepared", metadata: ["accountType": "\(accountType)", "url": "\(request.url.redactingQuery)"])
        return PendingAuthorization(
            accountType: accountType, url: request.url, classifier: NavigationClassifier(configuration: configuration),
            id: id)
    }

    /// Forgets a pending sign-in (the user closed the window); its redirect will be refused.
    public func cancelAuthorization(_ authorization: PendingAuthorization) {
        pending = pending.filter { $0.value.id != authorization.id }
        var error = AccountStoreError(.cancelled, "Sign-in was cancelled.")
        error.accountType = authorization.accountType
        emit(.didFailToRequestAccess(accountType: authorization.accountType, error: error))
    }

    /// Takes a URL the web view was about to load. If it is the redirect URI of a pending
    /// sign-in, checks `state`, reads the code or the error, redeems the code, validates the
    /// id_token and stores the account.
    /// - Returns: the signed-in account, or `nil` when the URL is no pending sign-in's redirect
    ///   (the caller lets that navigation go on).
    /// - Throws: ``AccountStoreError``: `stateMismatch`, `passwordResetRequested`, `cancelled`,
    ///   `authorizationFailed`, `invalidIDToken`, `tokenRequestFailed`, `network`, ….
    public func handleRedirect(_ url: URL) async throws(AccountStoreError) -> Account? {
        let matching = pending.values.filter { RedirectMatcher(redirectURI: $0.request.redirectURI).matches(url) }
        guard let first = matching.first else { return nil }
        guard let response = AuthorizationResponse(redirectURL: url) else {
            var error = AccountStoreError(.malformedRedirect, "The identity service's answer carried neither a code nor an error.")
            error.accountType = first.accountType
            try fail(error)
        }
        guard let state = response.state, let (accountType, request, _) = pending[state] else {
            logger.warning("redirect with an unknown state refused", metadata: ["url": "\(url.redactingQuery)"])
            var error = AccountStoreError(
                .stateMismatch, "The sign-in answer does not belong to a sign-in this app started; it was ignored. Sign in again.")
            error.accountType = first.accountType
            try fail(error)
        }
        pending[state] = nil

        switch response {
        case .error(let errorResponse):
            try fail(AccountStoreError.from(errorResponse, accountType: accountType))
        case .code(let codeResponse):
            do {
                return try await redeem(codeResponse, request: request, accountType: accountType)
            } catch {
                var failure = error
                if failure.accountType == nil { failure.accountType = accountType }
                try fail(failure)
            }
        }
    }

    private func fail(_ error: AccountStoreError) throws(AccountStoreError) -> Never {
        logger.notice("sign-in failed", metadata: ["accountType": "\(error.accountType ?? "-")", "error": "\(error)"])
        emit(.didFailToRequestAccess(accountType: error.accountType ?? "", error: error))
        throw error
    }

    private func redeem(
        _ response: AuthorizationCodeResponse, request: AuthorizationRequest, accountType: String
    ) async throws(AccountStoreError) -> Account {
        let configuration = try requireConfiguration(accountType)
        var form: [(String, String)] = [
            ("client_id", configuration.clientID),
            ("grant_type", "authorization_code"),
            ("code", response.code.revealed),
            ("redirect_uri", request.redirectURI.absoluteString),
            ("code_verifier", request.proofKey.verifier.revealed),
            ("scope", configuration.scopes.joined(separator: " ")),
        ]
        if request.requestsClientInfo { form.append(("client_info", "1")) }
        let tokens = try await requestTokens(form, configuration: configuration, accountType: accountType, homeAccountID: nil)

        let claims = try await validatedClaims(
            tokens.idToken, configuration: configuration, expectedNonce: request.nonce.revealed,
            required: configuration.scopes.contains("openid"))
        let clientInfo = (tokens.clientInfo ?? response.clientInfo).flatMap(ClientInfo.init(encoded:))
        guard let homeAccountID = clientInfo?.homeAccountID ?? claims?.objectID ?? claims?.subject else {
            throw AccountStoreError(.invalidResponse, "The identity service's answer identifies no user (no client_info and no id_token).")
        }
        let environment = Self.environment(of: configuration)
        let (entry, existed) = try withCache(group: configuration.storageGroup, write: true) { cache in
            let existed = cache.account(homeAccountID: homeAccountID, environment: environment) != nil
                && !cache.accounts(environment: environment, clientID: configuration.clientID).filter { $0.homeAccountID == homeAccountID }.isEmpty
            cache.save(
                TokenCache.Grant(
                    homeAccountID: homeAccountID, environment: environment, realm: Self.realm(of: configuration),
                    clientID: configuration.clientID, requestedScopes: configuration.scopes, response: tokens,
                    idTokenClaims: claims, accountSource: "authorization_code", now: Int(now().timeIntervalSince1970)))
            return (cache.account(homeAccountID: homeAccountID, environment: environment)!, existed)
        }
        let account = Account(accountType: accountType, entry: entry)
        logger.info("signed in", metadata: ["accountType": "\(accountType)", "account": "\(account.username)"])
        emit(.accountsDidChange(accountType: accountType, change: existed ? .updated(account) : .added(account)))
        return account
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
    /// goes too once no other client sharing the group holds a token for it).
    public func remove(_ account: Account) throws {
        let configuration = try requireConfiguration(account.accountType)
        try withCache(group: configuration.storageGroup, write: true) { cache in
            cache.removeAccount(homeAccountID: account.homeAccountID, environment: account.environment, clientID: configuration.clientID)
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
        let configuration = try requireConfiguration(account.accountType)
        let wanted = scopes ?? configuration.scopes
        let resourceScopes = Set(wanted.filter { !Self.oidcScopes.contains($0.lowercased()) })
        if !forceRefresh {
            let validUntil = Int(now().addingTimeInterval(Self.minimumRemainingValidity).timeIntervalSince1970)
            let cached = try withCache(group: configuration.storageGroup, write: false) { cache in
                cache.accessToken(
                    homeAccountID: account.homeAccountID, environment: account.environment, clientID: configuration.clientID,
                    realm: Self.realm(of: configuration), scopes: resourceScopes, validUntil: validUntil)
            }
            if let cached {
                return AccessToken(
                    secret: cached.secret, tokenType: cached.tokenType, expiresOn: Date(timeIntervalSince1970: TimeInterval(cached.expiresOn)),
                    scopes: cached.target.split(separator: " ").map(String.init), account: account)
            }
        }
        let key = "\(account.accountType)|\(account.homeAccountID)"
        if let running = refreshes[key] {
            return try await running.value
        }
        let task = Task { try await self.refresh(account, configuration: configuration, scopes: wanted) }
        refreshes[key] = task
        defer { refreshes[key] = nil }
        return try await task.value
    }

    private func refresh(_ account: Account, configuration: AccountConfiguration, scopes: [String]) async throws -> AccessToken {
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
        let scopeSet = Array(NSOrderedSet(array: configuration.scopes.filter { Self.oidcScopes.contains($0.lowercased()) } + scopes)) as! [String]
        var form: [(String, String)] = [
            ("client_id", configuration.clientID),
            ("grant_type", "refresh_token"),
            ("refresh_token", refreshToken.secret.revealed),
            ("scope", scopeSet.joined(separator: " ")),
        ]
        if configuration.isMicrosoftAuthority { form.append(("client_info", "1")) }
        logger.debug("refreshing", metadata: ["accountType": "\(account.accountType)", "account": "\(account.username)"])

        let tokens: TokenResponse
        let claims: IDTokenClaims?
        do {
            tokens = try await requestTokens(form, configuration: configuration, accountType: account.accountType, homeAccountID: account.homeAccountID)
            claims = try await validatedClaims(tokens.idToken, configuration: configuration, expectedNonce: nil, required: false)
        } catch {
            if error.code == .interactionRequired {
                try withCache(group: configuration.storageGroup, write: true) { cache in
                    cache.setInteractionRequired(true, homeAccountID: account.homeAccountID, environment: environment)
                }
                let marked = try self.account(account.homeAccountID, accountType: account.accountType, configuration: configuration)
                if let marked { emit(.accountsDidChange(accountType: account.accountType, change: .updated(marked))) }
            }
            emit(.didFailToRequestAccess(accountType: account.accountType, error: error))
            throw error
        }

        let grantedAt = Int(now().timeIntervalSince1970)
        let entry = try withCache(group: configuration.storageGroup, write: true) { cache in
            cache.save(
                TokenCache.Grant(
                    homeAccountID: account.homeAccountID, environment: environment, realm: Self.realm(of: configuration),
                    clientID: configuration.clientID, requestedScopes: scopes, response: tokens, idTokenClaims: claims,
                    accountSource: "refresh_token", now: grantedAt))
            return cache.account(homeAccountID: account.homeAccountID, environment: environment)!
        }
        let refreshed = Account(accountType: account.accountType, entry: entry)
        if account.interactionRequired {
            emit(.accountsDidChange(accountType: account.accountType, change: .updated(refreshed)))
        }
        return AccessToken(
            secret: tokens.accessToken, tokenType: tokens.tokenType,
            expiresOn: Date(timeIntervalSince1970: TimeInterval(tokens.expiresOn ?? grantedAt + tokens.expiresIn)),
            scopes: tokens.scope ?? scopes, account: refreshed)
    }

    private func account(_ homeAccountID: String, accountType: String, configuration: AccountConfiguration) throws -> Account? {
        let entry = try withCache(group: configuration.storageGroup, write: false) { cache in
            cache.account(homeAccountID: homeAccountID, environment: Self.environment(of: configuration))
        }
        return entry.map { Account(accountType: accountType, entry: $0) }
    }

    // MARK: Token endpoint

    private static let oidcScopes: Set<String> = ["openid", "profile", "offline_access", "email"]

    private func requestTokens(
        _ form: [(String, String)], configuration: AccountConfiguration, accountType: String, homeAccountID: String?
    ) async throws(AccountStoreError) -> TokenResponse {
        var fields = form
        if let secret = configuration.clientSecret { fields.append(("client_secret", secret.revealed)) }
        var headers: HTTPHeaders = ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"]
        for (name, value) in configuration.customHeaderFields { headers[name] = value }
        let request = HTTPRequest(method: "POST", url: configuration.tokenURL, headers: headers, body: Data(FormEncoding.encode(fields).utf8))

        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch {
            var failure = AccountStoreError(.network, "Could not reach the identity service: \(error)")
            failure.accountType = accountType
            throw failure
        }
        if response.isSuccess, let tokens = try? JSONDecoder().decode(TokenResponse.self, from: response.body) {
            logger.debug("token response", metadata: ["accountType": "\(accountType)", "response": "\(tokens)"])
            return tokens
        }
        if let oauthError = try? JSONDecoder().decode(OAuthErrorResponse.self, from: response.body) {
            throw AccountStoreError.from(oauthError, accountType: accountType, homeAccountID: homeAccountID)
        }
        var failure = AccountStoreError(
            .invalidResponse, "The token endpoint \(configuration.tokenURL.redactingQuery) answered HTTP \(response.status) with a body that is not a token response.")
        failure.accountType = accountType
        throw failure
    }

    private func validatedClaims(
        _ idToken: Secret?, configuration: AccountConfiguration, expectedNonce: String?, required: Bool
    ) async throws(AccountStoreError) -> IDTokenClaims? {
        guard let idToken else {
            if required { throw AccountStoreError(.invalidIDToken, "The identity service sent no id_token although openid was requested.") }
            return nil
        }
        let discoveryURL = configuration.resolvedDiscoveryURL
        do {
            var (provider, keys) = try await metadata.metadata(discoveryURL: discoveryURL, now: now())
            do {
                return try validator.validate(
                    idToken, provider: provider, keys: keys, clientID: configuration.clientID, expectedNonce: expectedNonce, now: now())
            } catch .unknownKey {
                // The provider may have rolled its keys over since they were cached.
                (provider, keys) = try await metadata.metadata(discoveryURL: discoveryURL, refreshKeys: true, now: now())
                return try validator.validate(
                    idToken, provider: provider, keys: keys, clientID: configuration.clientID, expectedNonce: expectedNonce, now: now())
            }
        } catch let error as IDTokenValidationError {
            throw AccountStoreError(.invalidIDToken, "The sign-in was refused because \(error).")
        } catch let error as AccountStoreError {
            throw error
        } catch {
            throw AccountStoreError(.providerMetadataUnavailable, "The identity provider's signing keys could not be fetched: \(error)")
        }
    }

    // MARK: Cache access

    /// Runs `body` on a group's cache under the storage lock; writes it back when `write`.
    /// An unreadable cache is set aside, reported, and replaced by an empty one.
    private func withCache<T: Sendable>(group: String, write: Bool, _ body: (inout TokenCache) throws -> T) throws(AccountStoreError) -> T {
        var result: T?
        do {
            let setAside = try storage.transact(group: group) { data in
                var cache = TokenCache()
                var unreadable = false
                if let data {
                    do {
                        cache = try TokenCache(json: data)
                    } catch {
                        unreadable = true
                        logger.error("token cache unreadable; starting empty", metadata: ["group": "\(group)", "error": "\(error)"])
                    }
                }
                result = try body(&cache)
                if unreadable { return .setAsideAndWrite(try cache.jsonData()) }
                return write ? .write(try cache.jsonData()) : .keep
            }
            if let setAside {
                logger.error("unreadable token cache set aside", metadata: ["group": "\(group)", "path": "\(setAside)"])
                emit(.cacheRecovered(storageGroup: group, setAsideAt: setAside))
            }
        } catch let error as AccountStoreError {
            throw error
        } catch {
            throw AccountStoreError(.invalidResponse, "The token cache could not be used: \(error)")
        }
        return result!
    }

    /// MSAL's `environment`: the authority host.
    static func environment(of configuration: AccountConfiguration) -> String {
        (configuration.tokenURL.host ?? "").lowercased()
    }

    /// MSAL's `realm`: the token endpoint's first path segment (tenant).
    static func realm(of configuration: AccountConfiguration) -> String {
        configuration.tokenURL.pathComponents.dropFirst().first ?? ""
    }
}
