import FoundationEssentials

/// The token cache of one storage group, in MSAL's unified cache schema: top-level sections
/// `AccessToken`, `RefreshToken`, `IdToken`, `Account` and `AppMetadata`, each mapping MSAL's
/// key to an entry. MSAL Python's `SerializableTokenCache` (and msal-extensions) read the same
/// JSON, so a developer's MSAL tools see the accounts Sesame signed in and vice versa.
public struct TokenCache: Sendable, Hashable {
    /// `AccessToken`.
    public private(set) var accessTokens: [String: AccessTokenEntry] = [:]
    /// `RefreshToken`.
    public private(set) var refreshTokens: [String: RefreshTokenEntry] = [:]
    /// `IdToken`.
    public private(set) var idTokens: [String: IDTokenEntry] = [:]
    /// `Account`.
    public private(set) var accounts: [String: AccountEntry] = [:]
    /// `AppMetadata`.
    public private(set) var appMetadata: [String: AppMetadataEntry] = [:]
    /// What the next interactive sign-in of this storage group asks the service for: `login`
    /// (ask who signs in) after a user signed out, so that the service's single sign-on does not
    /// sign the same user straight back in. Kept in Sesame's own section, `SesameSignIn`
    /// (`{"next_prompt": "login"}`), which MSAL's tools keep as they find it.
    public var nextSignInPrompt: String?
    /// Sections Sesame does not model, kept.
    private var otherSections: [String: JSONValue] = [:]
    /// Sesame's own section.
    static let sesameSection = "SesameSignIn"
    private static let modelledSections: Set<String> = [
        "AccessToken", "RefreshToken", "IdToken", "Account", "AppMetadata", sesameSection,
    ]

    /// An empty cache.
    public init() {}

    /// Reads MSAL's JSON. An empty document (`{}`) is an empty cache.
    /// - Throws: `DecodingError` when the bytes are not a cache (truncated, corrupt, foreign).
    public init(json data: Data) throws {
        let document = try JSONDecoder().decode([String: JSONValue].self, from: data)
        func section(_ name: String) throws -> [String: [String: JSONValue]] {
            guard let value = document[name] else { return [:] }
            guard case .object(let entries) = value else {
                throw DecodingError.typeMismatch(
                    [String: JSONValue].self, .init(codingPath: [AnyCodingKey(name)], debugDescription: "\(name) is not an object"))
            }
            return try entries.mapValues { entry in
                guard case .object(let fields) = entry else {
                    throw DecodingError.typeMismatch(
                        [String: JSONValue].self,
                        .init(codingPath: [AnyCodingKey(name)], debugDescription: "an \(name) entry is not an object"))
                }
                return fields
            }
        }
        // Entries are re-keyed with the key their fields produce, so a cache written by a
        // tool with a slightly different key spelling still finds its entries.
        func entries<Entry>(_ name: String, _ read: ([String: JSONValue]) throws -> Entry, key: (Entry) -> String) throws -> [String: Entry]
        {
            try Dictionary(
                section(name).values.map { json in
                    let entry = try read(json)
                    return (key(entry), entry)
                }, uniquingKeysWith: { $1 })
        }
        accessTokens = try entries("AccessToken", AccessTokenEntry.init(json:), key: \.key)
        refreshTokens = try entries("RefreshToken", RefreshTokenEntry.init(json:), key: \.key)
        idTokens = try entries("IdToken", IDTokenEntry.init(json:), key: \.key)
        accounts = try entries("Account", AccountEntry.init(json:), key: \.key)
        appMetadata = try entries("AppMetadata", AppMetadataEntry.init(json:), key: \.key)
        if case .object(let fields)? = document[Self.sesameSection], case .string(let prompt)? = fields["next_prompt"] {
            nextSignInPrompt = prompt
        }
        otherSections = document.filter { !Self.modelledSections.contains($0.key) }
    }

    /// MSAL's JSON, keys sorted, indented by four spaces as MSAL Python writes it.
    public func jsonData() throws -> Data {
        var document = otherSections
        func put<Entry>(_ name: String, _ entries: [String: Entry], _ json: (Entry) -> [String: JSONValue]) {
            if !entries.isEmpty { document[name] = .object(entries.mapValues { .object(json($0)) }) }
        }
        put("AccessToken", accessTokens) { $0.json }
        put("RefreshToken", refreshTokens) { $0.json }
        put("IdToken", idTokens) { $0.json }
        put("Account", accounts) { $0.json }
        put("AppMetadata", appMetadata) { $0.json }
        if let nextSignInPrompt { document[Self.sesameSection] = .object(["next_prompt": .string(nextSignInPrompt)]) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(document)
    }

    // MARK: Queries

    /// The accounts that hold a refresh token or an id_token of `clientID` at `environment`.
    public func accounts(environment: String, clientID: String) -> [AccountEntry] {
        let holders = Set(
            refreshTokens.values.filter { $0.environment == environment && $0.clientID == clientID }.map(\.homeAccountID)
                + idTokens.values.filter { $0.environment == environment && $0.clientID == clientID }.map(\.homeAccountID))
        return accounts.values.filter { $0.environment == environment && holders.contains($0.homeAccountID) }
            .sorted { ($0.username, $0.homeAccountID) < ($1.username, $1.homeAccountID) }
    }

    /// The account entry of a home account id at an environment.
    public func account(homeAccountID: String, environment: String) -> AccountEntry? {
        accounts.values.first { $0.homeAccountID == homeAccountID && $0.environment == environment }
    }

    /// An access token for the account and client whose scopes include `scopes` and which stays
    /// valid at least until `validUntil`.
    public func accessToken(
        homeAccountID: String, environment: String, clientID: String, realm: String, scopes: Set<String>, validUntil: Int
    ) -> AccessTokenEntry? {
        let wanted = Set(scopes.map(Self.canonicalScope))
        return accessTokens.values
            .filter {
                $0.homeAccountID == homeAccountID && $0.environment == environment && $0.clientID == clientID
                    && $0.realm.lowercased() == realm.lowercased() && wanted.isSubset(of: Set($0.scopes.map(Self.canonicalScope)))
                    && $0.expiresOn > validUntil
            }
            .max { $0.expiresOn < $1.expiresOn }
    }

    /// A scope as Entra grants it, for comparing requests with cached tokens: lower-cased, and a
    /// Microsoft Graph permission without its resource prefix — Entra answers a request for
    /// `https://graph.microsoft.com/User.Read` with `User.Read` in `scope`.
    static func canonicalScope(_ scope: String) -> String {
        let lower = scope.lowercased()
        for prefix in ["https://graph.microsoft.com/", "00000003-0000-0000-c000-000000000000/"] where lower.hasPrefix(prefix) {
            return String(lower.dropFirst(prefix.count))
        }
        return lower
    }

    /// The account's refresh token for the client.
    public func refreshToken(homeAccountID: String, environment: String, clientID: String) -> RefreshTokenEntry? {
        refreshTokens.values
            .filter { $0.homeAccountID == homeAccountID && $0.environment == environment && $0.clientID == clientID }
            .max { ($0.lastModificationTime ?? 0) < ($1.lastModificationTime ?? 0) }
    }

    /// The account's id_token for the client.
    public func idToken(homeAccountID: String, environment: String, clientID: String) -> IDTokenEntry? {
        idTokens.values.first { $0.homeAccountID == homeAccountID && $0.environment == environment && $0.clientID == clientID }
    }

    // MARK: Changes

    /// What one token response adds to the cache.
    public struct Grant: Sendable {
        /// `home_account_id`.
        public var homeAccountID: String
        /// The authority host.
        public var environment: String
        /// The token endpoint's first path segment.
        public var realm: String
        /// `client_id`.
        public var clientID: String
        /// The scopes asked for (used when the response does not echo `scope`).
        public var requestedScopes: [String]
        /// The response.
        public var response: TokenResponse
        /// The validated id_token's claims, when the response had one.
        public var idTokenClaims: IDTokenClaims?
        /// `account_source`.
        public var accountSource: String
        /// Now, in epoch seconds.
        public var now: Int

        /// A grant; see each property.
        public init(
            homeAccountID: String, environment: String, realm: String, clientID: String, requestedScopes: [String],
            response: TokenResponse, idTokenClaims: IDTokenClaims?, accountSource: String, now: Int
        ) {
            self.homeAccountID = homeAccountID
            self.environment = environment
            self.realm = realm
            self.clientID = clientID
            self.requestedScopes = requestedScopes
            self.response = response
            self.idTokenClaims = idTokenClaims
            self.accountSource = accountSource
            self.now = now
        }
    }

    /// Stores a token response: the access token (replacing any of the same account, client and
    /// realm whose scopes overlap), the refresh token (replacing the client's previous one: Entra
    /// rotates them), the id_token, the account and the app metadata. Clears the account's
    /// "interaction required" mark.
    public mutating func save(_ grant: Grant) {
        let response = grant.response
        // Without an answered scope, the scopes asked for, less OpenID Connect's reserved ones (as
        // MSAL caches them): those name no resource.
        let reserved: Set<String> = ["openid", "profile", "offline_access", "email"]
        let asked = grant.requestedScopes.filter { !reserved.contains($0.lowercased()) }
        let target = (response.scope ?? (asked.isEmpty ? grant.requestedScopes : asked)).sorted().joined(separator: " ")
        let targetScopes = Set(target.lowercased().split(separator: " ").map(String.init))
        accessTokens = accessTokens.filter { _, entry in
            !(entry.homeAccountID == grant.homeAccountID && entry.environment == grant.environment
                && entry.clientID == grant.clientID && entry.realm == grant.realm && !entry.scopes.isDisjoint(with: targetScopes))
        }
        let expiresOn = response.expiresOn ?? grant.now + response.expiresIn
        let accessToken = AccessTokenEntry(
            secret: response.accessToken, homeAccountID: grant.homeAccountID, environment: grant.environment,
            clientID: grant.clientID, realm: grant.realm, target: target, tokenType: response.tokenType,
            cachedAt: grant.now, expiresOn: expiresOn,
            extendedExpiresOn: grant.now + (response.extendedExpiresIn ?? response.expiresIn),
            refreshOn: response.refreshIn.map { grant.now + $0 })
        accessTokens[accessToken.key] = accessToken

        if let refreshToken = response.refreshToken {
            refreshTokens = refreshTokens.filter { _, entry in
                !(entry.homeAccountID == grant.homeAccountID && entry.environment == grant.environment && entry.clientID == grant.clientID)
            }
            let entry = RefreshTokenEntry(
                secret: refreshToken, homeAccountID: grant.homeAccountID, environment: grant.environment,
                clientID: grant.clientID, target: target, lastModificationTime: grant.now)
            refreshTokens[entry.key] = entry
        }

        if let idToken = response.idToken {
            let entry = IDTokenEntry(
                secret: idToken, homeAccountID: grant.homeAccountID, environment: grant.environment, realm: grant.realm,
                clientID: grant.clientID)
            idTokens[entry.key] = entry
        }

        var account =
            account(homeAccountID: grant.homeAccountID, environment: grant.environment)
            ?? AccountEntry(
                homeAccountID: grant.homeAccountID, environment: grant.environment, realm: grant.realm,
                localAccountID: "", username: "", authorityType: "MSSTS")
        if let claims = grant.idTokenClaims {
            account.localAccountID = claims.objectID ?? claims.subject
            account.username = claims.username ?? ""
            account.name = claims.name
            account.accountSource = grant.accountSource
        }
        account.interactionRequired = false
        accounts[account.key] = account

        let metadata = AppMetadataEntry(
            clientID: grant.clientID, environment: grant.environment,
            familyID: appMetadata["appmetadata-\(grant.environment)-\(grant.clientID)"]?.familyID)
        appMetadata[metadata.key] = metadata
    }

    /// Marks an account as needing an interactive sign-in, or clears the mark.
    /// Keeps a rotated refresh token on its own (its response's id_token could not be
    /// verified, so nothing else of the response is stored): the one redeemed may be dead now.
    public mutating func replaceRefreshToken(
        _ secret: Secret, homeAccountID: String, environment: String, clientID: String, now: Int
    ) {
        let previous = refreshToken(homeAccountID: homeAccountID, environment: environment, clientID: clientID)
        refreshTokens = refreshTokens.filter { _, entry in
            !(entry.homeAccountID == homeAccountID && entry.environment == environment && entry.clientID == clientID)
        }
        let entry = RefreshTokenEntry(
            secret: secret, homeAccountID: homeAccountID, environment: environment, clientID: clientID,
            target: previous?.target ?? "", lastModificationTime: now)
        refreshTokens[entry.key] = entry
    }

    public mutating func setInteractionRequired(_ required: Bool, homeAccountID: String, environment: String) {
        for (key, var entry) in accounts where entry.homeAccountID == homeAccountID && entry.environment == environment {
            entry.interactionRequired = required
            accounts[key] = entry
        }
    }

    /// Signs an account out of one client: removes that client's access, refresh and id tokens
    /// for the account, and the account entry itself once no client holds a token for it.
    public mutating func removeAccount(homeAccountID: String, environment: String, clientID: String) {
        func mine(_ home: String, _ env: String, _ client: String) -> Bool {
            home == homeAccountID && env == environment && client == clientID
        }
        accessTokens = accessTokens.filter { !mine($1.homeAccountID, $1.environment, $1.clientID) }
        refreshTokens = refreshTokens.filter { !mine($1.homeAccountID, $1.environment, $1.clientID) }
        idTokens = idTokens.filter { !mine($1.homeAccountID, $1.environment, $1.clientID) }
        let stillHeld =
            refreshTokens.values.contains { $0.homeAccountID == homeAccountID && $0.environment == environment }
            || idTokens.values.contains { $0.homeAccountID == homeAccountID && $0.environment == environment }
            || accessTokens.values.contains { $0.homeAccountID == homeAccountID && $0.environment == environment }
        if !stillHeld {
            accounts = accounts.filter { !($1.homeAccountID == homeAccountID && $1.environment == environment) }
        }
    }

    /// Drops access tokens that expired before `now`, as MSAL does when it searches.
    public mutating func removeExpiredAccessTokens(now: Int) {
        accessTokens = accessTokens.filter { $1.expiresOn > now }
    }
}
