import FoundationEssentials
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
/// The store owns the configurations and hands the jobs to stateless flows: ``InteractiveSignIn``
/// (begin, redeem, claims, B2C's reset), ``SilentTokens`` (the cache lookup, the one refresh, the
/// rotated token), ``DeviceCodeSignIn`` (over ``DeviceCodeFlow``) and ``SignedInAccounts``
/// (saving, listing and signing out accounts). Each takes the configuration it needs and the
/// store's ``AccountStoreContext`` — the wire (a token endpoint client, an id_token verifier that
/// follows key rollover) and the owners of what lasts between calls (the cache, where every access
/// is one transaction under the storage's lock; the events; the claims challenges; the silent
/// tokens' memory), each the only writer of its own fields.
public actor AccountStore {
    /// The wire and the owners of the store's lasting state, for the flows.
    private let context: AccountStoreContext
    /// This computer's identity in an organization, when the user registered it: its PRT signs
    /// new sign-ins in with no page (``DeviceSignIn``).
    public nonisolated var device: DeviceIdentity? { context.device }
    /// How the device code flow waits between polls (tests record instead of sleeping).
    private var pollingSleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    private var configurations: [String: AccountConfiguration] = [:]

    /// A cached access token is handed out only while it stays valid this much longer.
    public static let minimumRemainingValidity: TimeInterval = 5 * 60

    /// A store over a storage backend and a transport.
    /// - Parameters:
    ///   - storage: where token caches live (Secret Service or files).
    ///   - transport: HTTP to the identity provider.
    ///   - validator: id_token checks (clock skew).
    ///   - now: the clock; tests move it.
    ///   - logger: never sees a secret.
    ///   - rescueDirectory: where a rotated refresh token waits when the cache cannot store it
    ///     (``RefreshRescue``): `$XDG_RUNTIME_DIR/sesame`.
    ///   - device: this computer's registration, when it has one to sign in with.
    public init(
        storage: any TokenStorage,
        transport: any HTTPTransport = AsyncHTTPClientTransport(),
        validator: IDTokenValidator = IDTokenValidator(),
        now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "sesame.accounts"),
        rescueDirectory: URL? = RefreshRescue.defaultDirectory(),
        device: DeviceIdentity? = nil
    ) {
        context = AccountStoreContext(
            transport: transport, now: now, logger: logger, tokenEndpoint: TokenEndpointClient(transport: transport, logger: logger),
            verifier: IDTokenVerifier(transport: transport, validator: validator, logger: logger), device: device,
            caches: TokenCaches(TokenCacheTransaction(storage: storage, logger: logger, rescue: RefreshRescue(directory: rescueDirectory))),
            events: AccountStoreEvents(), claims: ClaimsChallenges(), silent: SilentTokens())
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

    /// The configuration of `accountType` asking, besides its own scopes, for `additionalScopes`.
    private func requireConfiguration(_ accountType: String, additionalScopes: [String]) throws(AccountStoreError) -> AccountConfiguration {
        var configuration = try requireConfiguration(accountType)
        let known = Set(configuration.scopes.map { $0.lowercased() })
        configuration.scopes += additionalScopes.filter { !known.contains($0.lowercased()) }
        return configuration
    }

    private func requireConfiguration(_ accountType: String) throws(AccountStoreError) -> AccountConfiguration {
        guard let configuration = configurations[accountType] else {
            var error = AccountStoreError(.unknownAccountType, "No sign-in is configured for the account type \"\(accountType)\".")
            error.accountType = accountType
            throw error
        }
        return configuration
    }

    /// A sign-in's configuration (``requireConfiguration(_:additionalScopes:)``); an account type
    /// with none is announced as the sign-in's failure, as every other failure of it is.
    private func signInConfiguration(_ accountType: String, additionalScopes: [String]) throws(AccountStoreError) -> AccountConfiguration {
        do throws(AccountStoreError) {
            return try requireConfiguration(accountType, additionalScopes: additionalScopes)
        } catch {
            context.events.emit(.didFailToRequestAccess(accountType: accountType, error: error))
            throw error
        }
    }

    /// The provider's OpenID configuration (discovery document) for an account type, fetched
    /// once and kept: what the app reads the `userinfo_endpoint` from, say.
    public func providerConfiguration(forAccountType accountType: String) async throws(AccountStoreError) -> OpenIDConfiguration {
        try await context.providerDocument(of: requireConfiguration(accountType))
    }

    // MARK: Events

    /// A stream of the store's events, for as long as the caller listens.
    public func events() -> AsyncStream<AccountStoreEvent> { context.events.stream() }

    // MARK: Signing in

    /// Signs a user in interactively through `userAgent` (``InteractiveSignIn``).
    ///
    /// Builds the authorization request (fresh `state`, `nonce`, PKCE; `prompt=login` when the
    /// group's last user signed out), has the agent show it, and takes the redirect the agent
    /// hands back through the ``SignInSession``. An answer whose `state` is not this request's is
    /// never redeemed: the agent leaves it unloaded and the sign-in goes on. B2C's AADB2C90118
    /// ("Forgot your password?") starts the configuration's password-reset user flow in the same
    /// agent, and its answer signs the user in. Cancelling the calling task cancels the sign-in.
    /// - Parameter parameters: `prompt`, `login_hint`, `domain_hint`, … for this sign-in, over
    ///   the configuration's own.
    /// - Parameter additionalScopes: permissions of other resources to consent to in the same
    ///   sign-in (Entra asks for them all on one page; the token is for the configuration's
    ///   resource), e.g. the mail scopes of ``MailScope``.
    /// - Returns: the signed-in account.
    /// - Throws: ``AccountStoreError``: `cancelled` (the user closed the agent), `malformedRedirect`,
    ///   `authorizationFailed`, `passwordResetRequested` (no reset flow configured),
    ///   `invalidIDToken`, `tokenRequestFailed`, `network`, …; each also announced as
    ///   ``AccountStoreEvent/didFailToRequestAccess(accountType:error:)``.
    public func signIn(
        accountType: String, parameters: [String: String] = [:], additionalScopes: [String] = [], using userAgent: any SignInUserAgent
    ) async throws(AccountStoreError) -> Account {
        try await InteractiveSignIn.signIn(
            accountType: accountType, configuration: signInConfiguration(accountType, additionalScopes: additionalScopes),
            parameters: parameters, using: userAgent, in: context)
    }

    /// Signs the user of this computer's registration in with its Primary Refresh Token, with no
    /// page (``DeviceSignIn``): what `sesame token` and the account service do for an account
    /// type nobody signed in to yet. Nil when the PRT cannot serve it (no registration, the app
    /// needs the user's consent first, the user asked to choose who signs in): only a page can.
    /// - Throws: the organization's refusal of the PRT's sign-in (a policy asking for a compliant
    ///   device, say), with its code.
    public func signInWithDevice(accountType: String, parameters: [String: String] = [:]) async throws(AccountStoreError) -> Account? {
        guard device != nil else { return nil }
        let configuration = try await context.forTheWire(requireConfiguration(accountType))
        return try await InteractiveSignIn.signInWithDevice(
            accountType, configuration: configuration, parameters: parameters, refusalsThrow: true, in: context)
    }

    /// The registration whose Primary Refresh Token ``signInWithDevice(accountType:parameters:)``
    /// (and a page's sign-in, before its page) would sign in with, checked as they check it, sending
    /// nothing: its user can be asked about before anything is signed in. Nil when only a page can.
    public func deviceSignInUser(accountType: String, parameters: [String: String] = [:]) async -> DeviceIdentity.Status? {
        guard device != nil, let configuration = try? await context.forTheWire(requireConfiguration(accountType)) else { return nil }
        return await InteractiveSignIn.deviceUser(accountType, configuration: configuration, parameters: parameters, in: context)
    }

    /// Signs a user in with the device code flow (RFC 8628; ``DeviceCodeFlow``), for a machine
    /// with no browser: `show` tells the user where to type the code (on any other device), and
    /// the store polls until the user has signed in there, declines, or the code expires.
    /// - Throws: ``AccountStoreError``: `deviceCodeDeclined`, `deviceCodeExpired`, `cancelled`,
    ///   `tokenRequestFailed` (B2C and providers without the flow refuse it), `invalidIDToken`,
    ///   `network`, ….
    public func signInWithDeviceCode(
        accountType: String, additionalScopes: [String] = [], show: @Sendable (DeviceAuthorizationResponse) async -> Void
    ) async throws(AccountStoreError) -> Account {
        try await DeviceCodeSignIn.signIn(
            accountType: accountType, configuration: signInConfiguration(accountType, additionalScopes: additionalScopes), show: show,
            sleep: pollingSleep, in: context)
    }

    // MARK: Tokens and accounts

    /// An access token for the account, without user interaction: MSAL's `acquireTokenSilent`
    /// (``SilentTokens``). A cached token is returned while it stays valid for at least five more
    /// minutes; otherwise the refresh token is redeemed, once however many callers ask, and the
    /// rotated refresh token is stored before the new access token is returned.
    /// - Parameters:
    ///   - scopes: the scopes needed; the account type's non-OIDC scopes when `nil`.
    ///   - forceRefresh: skip the cached access token (after a 401, say).
    /// - Throws: ``AccountStoreError`` with code `interactionRequired` when the refresh token
    ///   was refused (`invalid_grant`, `interaction_required`); the account stays in the store,
    ///   marked, until the user signs in again.
    public func accessToken(for account: Account, scopes: [String]? = nil, forceRefresh: Bool = false) async throws -> AccessToken {
        if !forceRefresh, let token = SilentTokens.remembered(for: account, scopes: scopes, in: context) { return token }
        return try await SilentTokens.accessToken(
            for: account, configuration: requireConfiguration(account.accountType), scopes: scopes, forceRefresh: forceRefresh,
            in: context)
    }

    /// The accounts of an account type: those holding a token of its client in its storage group.
    public func accounts(ofType accountType: String) throws -> [Account] {
        try SignedInAccounts.accounts(ofType: accountType, configuration: requireConfiguration(accountType), in: context)
    }

    /// Signs an account out (``SignedInAccounts/remove(_:in:)``): its tokens go, and the group's
    /// next interactive sign-in asks who signs in.
    public func remove(_ account: Account) throws {
        try SignedInAccounts.remove(account, configuration: requireConfiguration(account.accountType), in: context)
    }

    /// The account's last id_token for its type's client (checked when it was received), for a
    /// broker that hands it to the app; nil when the cache holds none.
    public func idToken(for account: Account) throws(AccountStoreError) -> Secret? {
        try SignedInAccounts.idToken(for: account, configuration: requireConfiguration(account.accountType), in: context)
    }

    /// Whether the next interactive sign-in of `accountType` asks who signs in (`prompt=login`),
    /// because its group's last user signed out (remembered across restarts, in the cache).
    public func asksForAccountNext(accountType: String) throws(AccountStoreError) -> Bool {
        try SignedInAccounts.nextPrompt(group: requireConfiguration(accountType).storageGroup, in: context) == "login"
    }

    // MARK: Cache access

    static let oidcScopes: Set<String> = ["openid", "profile", "offline_access", "email"]
}
