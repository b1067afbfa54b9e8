import FoundationEssentials

/// The accounts a store keeps: a sign-in's tokens saved under the account they name, the
/// accounts of a type, signing one out — and where in MSAL's cache schema they live. Stateless:
/// the cache is the context's (``TokenCaches``), the configuration the store's.
enum SignedInAccounts {
    /// Stores a sign-in's tokens under the account they name and announces it.
    /// - Parameter source: the cache's `account_source` (`authorization_code`, `device_code`).
    static func save(
        _ tokens: TokenResponse, claims: IDTokenClaims?, clientInfo: ClientInfo?, configuration: AccountConfiguration,
        accountType: String, source: String, in context: AccountStoreContext
    ) throws(AccountStoreError) -> Account {
        guard let homeAccountID = clientInfo?.homeAccountID ?? claims?.objectID ?? claims?.subject else {
            throw AccountStoreError(.invalidResponse, "The identity service's answer identifies no user (no client_info and no id_token).")
        }
        let environment = environment(of: configuration)
        let grantedAt = Int(context.now().timeIntervalSince1970)
        let (entry, existed) = try context.withCache(group: configuration.storageGroup, write: true) { cache -> (AccountEntry?, Bool) in
            let existed = cache.accounts(environment: environment, clientID: configuration.clientID)
                .contains { $0.homeAccountID == homeAccountID }
            cache.save(
                TokenCache.Grant(
                    homeAccountID: homeAccountID, environment: environment, realm: realm(of: configuration, tenantID: claims?.tenantID),
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
        context.logger.info("signed in", metadata: ["accountType": "\(accountType)", "account": "\(account.username)"])
        context.events.emit(.accountsDidChange(accountType: accountType, change: existed ? .updated(account) : .added(account)))
        return account
    }

    /// `prompt` for the group's next interactive sign-in: `login` after a sign-out.
    static func nextPrompt(group: String, in context: AccountStoreContext) throws(AccountStoreError) -> String? {
        try context.withCache(group: group, write: false) { $0.nextSignInPrompt }
    }

    /// ``AccountStore/accounts(ofType:)``: `configuration` is the account type's.
    static func accounts(
        ofType accountType: String, configuration: AccountConfiguration, in context: AccountStoreContext
    ) throws -> [Account] {
        let cache = try context.withCache(group: configuration.storageGroup, write: false) { $0 }
        return cache.accounts(environment: environment(of: configuration), clientID: configuration.clientID)
            .map { Account(accountType: accountType, entry: $0) }
    }

    /// Signs an account out: removes its tokens for the account type's client (the account entry
    /// goes too once no other client sharing the group holds a token for it), and makes the
    /// group's next interactive sign-in ask who signs in rather than letting the service's single
    /// sign-on pick the same user again.
    static func remove(_ account: Account, configuration: AccountConfiguration, in context: AccountStoreContext) throws {
        try context.withCache(group: configuration.storageGroup, write: true) { cache in
            cache.removeAccount(homeAccountID: account.homeAccountID, environment: account.environment, clientID: configuration.clientID)
            cache.nextSignInPrompt = "login"
        }
        context.logger.info("signed out", metadata: ["accountType": "\(account.accountType)", "account": "\(account.username)"])
        context.events.emit(.accountsDidChange(accountType: account.accountType, change: .removed(account)))
    }

    /// ``AccountStore/idToken(for:)``.
    static func idToken(
        for account: Account, configuration: AccountConfiguration, in context: AccountStoreContext
    ) throws(AccountStoreError) -> Secret? {
        return try context.withCache(group: configuration.storageGroup, write: false) { cache in
            cache.idToken(homeAccountID: account.homeAccountID, environment: account.environment, clientID: configuration.clientID)?
                .secret
        }
    }

    /// MSAL's `environment`: the authority host.
    static func environment(of configuration: AccountConfiguration) -> String {
        // A token endpoint left to discovery is known only later: the discovery document's host
        // names the provider from the start.
        let url = configuration.discoveredEndpoints.contains(.token) ? configuration.resolvedDiscoveryURL : configuration.tokenURL
        return (url.host ?? "").lowercased()
    }

    /// MSAL's `realm`: the tenant of the token endpoint as the provider's discovery names it —
    /// for Entra a tenant's id (`tenantID`: the token's `tid`), whatever name the settings use
    /// (MSAL reads the realm off the discovered endpoint, which Entra names by the tenant's id),
    /// `organizations`, `common` and `consumers` as they are; B2C's tenant as written; none for a
    /// provider whose token endpoint comes from discovery.
    static func realm(of configuration: AccountConfiguration, tenantID: String?) -> String {
        guard !configuration.discoveredEndpoints.contains(.token) else { return "" }
        let segment = configuration.tokenURL.pathComponents.dropFirst().first ?? ""
        guard configuration.policy == nil, !["organizations", "common", "consumers"].contains(segment.lowercased()),
            let tenantID, !tenantID.isEmpty
        else { return segment }
        return tenantID
    }
}
