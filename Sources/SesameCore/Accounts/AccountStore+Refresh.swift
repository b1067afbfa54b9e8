import Foundation

/// Refreshing an access token: redeem the refresh token, keep the rotated one whatever else
/// fails, save the answer — under the storage's refresh lock, which every process sharing the
/// cache takes.
extension AccountStore {
    /// Refreshes under the storage's refresh lock: one program redeems the account's refresh
    /// token at a time, and one that waited uses what the other stored when it is enough.
    func refreshAcrossProcesses(
        _ account: Account, configuration: AccountConfiguration, scopes: [String], resourceScopes: Set<String>, forceRefresh: Bool
    ) async throws -> AccessToken {
        try await cache.storage.whileRefreshing(group: configuration.storageGroup, isolation: self) {
            // What the program that held the lock before stored, read from the storage itself.
            self.cache.forgetReadCopy(of: configuration.storageGroup)
            if !forceRefresh, let cached = try self.cachedToken(for: account, configuration: configuration, scopes: resourceScopes) {
                return cached
            }
            return try await self.refresh(account, configuration: configuration, scopes: scopes)
        }
    }

    private func refresh(_ account: Account, configuration stored: AccountConfiguration, scopes: [String]) async throws -> AccessToken {
        let configuration = try await forTheWire(stored)
        let refreshToken = try storedRefreshToken(of: account, configuration: configuration)
        let (tokens, claims): (TokenResponse, IDTokenClaims?)
        do throws(AccountStoreError) {
            (tokens, claims) = try await redeem(refreshToken, of: account, configuration: configuration, scopes: scopes)
        } catch {
            try refused(account, configuration: configuration, error)
            throw error
        }
        let grantedAt = Int(now().timeIntervalSince1970)
        let refreshed = try save(tokens, claims: claims, of: account, configuration: configuration, scopes: scopes, at: grantedAt)
        if account.interactionRequired {
            emit(.accountsDidChange(accountType: account.accountType, change: .updated(refreshed)))
        }
        return AccessToken(
            secret: tokens.accessToken, tokenType: tokens.tokenType,
            expiresOn: Date(timeIntervalSince1970: TimeInterval(tokens.expiresOn ?? grantedAt + tokens.expiresIn)),
            scopes: tokens.scope ?? scopes.filter { !Self.oidcScopes.contains($0.lowercased()) }, account: refreshed)
    }

    /// The account's stored refresh token; none is an error only a sign-in mends (announced).
    private func storedRefreshToken(of account: Account, configuration: AccountConfiguration) throws -> RefreshTokenEntry {
        let refreshToken = try withCache(group: configuration.storageGroup, write: false) { cache in
            cache.refreshToken(homeAccountID: account.homeAccountID, environment: account.environment, clientID: configuration.clientID)
        }
        guard let refreshToken else {
            var error = AccountStoreError(.interactionRequired, "Sign in again: no refresh token is stored for \(account.displayName).")
            error.accountType = account.accountType
            error.homeAccountID = account.homeAccountID
            emit(.didFailToRequestAccess(accountType: account.accountType, error: error))
            throw error
        }
        return refreshToken
    }

    /// `refreshToken` redeemed for `scopes` (with the account type's OpenID scopes), and the
    /// id_token of the answer checked. A rotated refresh token is kept even when the id_token
    /// cannot be checked.
    private func redeem(
        _ refreshToken: RefreshTokenEntry, of account: Account, configuration: AccountConfiguration, scopes: [String]
    ) async throws(AccountStoreError) -> (TokenResponse, IDTokenClaims?) {
        var scopeSet: [String] = []
        for scope in configuration.scopes.filter({ Self.oidcScopes.contains($0.lowercased()) }) + scopes where !scopeSet.contains(scope) {
            scopeSet.append(scope)
        }
        let request = RefreshTokenRequest(
            clientID: configuration.clientID, refreshToken: refreshToken.secret, scopes: scopeSet,
            requestsClientInfo: configuration.isMicrosoftAuthority)
        logger.debug("refreshing", metadata: ["accountType": "\(account.accountType)", "account": "\(account.username)"])
        let tokens = try await tokenEndpoint.send(
            request, configuration: configuration, accountType: account.accountType, homeAccountID: account.homeAccountID)
        do throws(AccountStoreError) {
            let claims = try await verifier.claims(
                of: tokens.idToken, configuration: configuration, expectedNonce: nil, required: false, now: now())
            return (tokens, claims)
        } catch {
            try keepRotatedToken(of: tokens, for: account, configuration: configuration)
            throw error
        }
    }

    /// The service rotated the refresh token and the one redeemed may be dead now: the new one is
    /// kept (nothing else of an answer that failed), so that the next attempt needs no sign-in.
    private func keepRotatedToken(
        of tokens: TokenResponse, for account: Account, configuration: AccountConfiguration
    ) throws(AccountStoreError) {
        guard let rotated = tokens.refreshToken else { return }
        let grantedAt = Int(now().timeIntervalSince1970)
        try withCache(group: configuration.storageGroup, write: true) { cache in
            guard cache.account(homeAccountID: account.homeAccountID, environment: account.environment) != nil else { return }
            cache.replaceRefreshToken(
                rotated, homeAccountID: account.homeAccountID, environment: account.environment, clientID: configuration.clientID,
                now: grantedAt)
        }
    }

    /// A refresh the service refused: when only an interactive sign-in can help, the account is
    /// marked (and a claims challenge kept for that sign-in); the failure is announced.
    private func refused(_ account: Account, configuration: AccountConfiguration, _ error: AccountStoreError) throws(AccountStoreError) {
        if error.code == .interactionRequired, let claims = error.claimsChallenge {
            claimsChallenges[account.accountType] = claims
        }
        if error.code == .interactionRequired {
            let marked = try withCache(group: configuration.storageGroup, write: true) { cache in
                cache.setInteractionRequired(true, homeAccountID: account.homeAccountID, environment: account.environment)
                return cache.account(homeAccountID: account.homeAccountID, environment: account.environment)
            }
            if let marked {
                emit(
                    .accountsDidChange(
                        accountType: account.accountType, change: .updated(Account(accountType: account.accountType, entry: marked))))
            }
        }
        emit(.didFailToRequestAccess(accountType: account.accountType, error: error))
    }

    /// Saves a refresh's answer, in the same transaction as the check that the account is still
    /// signed in: one signed out meanwhile (here, or by `sesame signout` in another process)
    /// stays signed out; its new tokens are dropped.
    private func save(
        _ tokens: TokenResponse, claims: IDTokenClaims?, of account: Account, configuration: AccountConfiguration, scopes: [String],
        at grantedAt: Int
    ) throws(AccountStoreError) -> Account {
        let entry = try withCache(group: configuration.storageGroup, write: true) { cache -> AccountEntry? in
            guard cache.account(homeAccountID: account.homeAccountID, environment: account.environment) != nil else { return nil }
            cache.save(
                TokenCache.Grant(
                    homeAccountID: account.homeAccountID, environment: account.environment, realm: Self.realm(of: configuration),
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
