import FoundationEssentials

/// A signed-in account of one account type: NXOAuth2Account / MSALAccount in Swift form.
public struct Account: Sendable, Hashable, Identifiable, CustomStringConvertible {
    /// The account type it belongs to (`myGraphService`).
    public let accountType: String
    /// `home_account_id`: `uid.utid` from `client_info`, else the id_token's `oid`/`sub`.
    /// Signing in again as the same user updates this account instead of adding one.
    public let homeAccountID: String
    /// `environment`: the authority host.
    public let environment: String
    /// `realm`: the tenant the tokens were issued in.
    public let realm: String
    /// `username`: `preferred_username`, `upn`, or B2C's first email; may be empty.
    public let username: String
    /// `name`: the display name, when the id_token had one.
    public let name: String?
    /// `local_account_id`: the user's object id in the tenant.
    public let localAccountID: String
    /// Whether the last silent refresh was refused: only an interactive sign-in helps.
    public let interactionRequired: Bool

    /// The account's identity within the store: type and home account id.
    public var id: String { "\(accountType)|\(homeAccountID)" }

    /// What to show a user: the name, else the username, else the id.
    public var displayName: String {
        if let name, !name.isEmpty { return name }
        return username.isEmpty ? homeAccountID : username
    }

    public var description: String { "Account(\(accountType), \(username.isEmpty ? homeAccountID : username))" }

    init(accountType: String, entry: AccountEntry) {
        self.accountType = accountType
        self.homeAccountID = entry.homeAccountID
        self.environment = entry.environment
        self.realm = entry.realm
        self.username = entry.username
        self.name = entry.name
        self.localAccountID = entry.localAccountID
        self.interactionRequired = entry.interactionRequired
    }
}

/// An access token handed out by the store.
public struct AccessToken: Sendable, Hashable, CustomStringConvertible {
    /// `access_token`.
    public let secret: Secret
    /// `token_type`: `Bearer`.
    public let tokenType: String
    /// When it expires.
    public let expiresOn: Date
    /// The scopes it grants.
    public let scopes: [String]
    /// The account it belongs to.
    public let account: Account

    /// The `Authorization` header's value: `Bearer <token>`.
    public var authorizationHeaderValue: String { "Bearer \(secret.revealed)" }

    public var description: String {
        "AccessToken(\(tokenType), scopes: \(scopes.joined(separator: " ")), expires: \(expiresOn.formatted(.iso8601)), secret: <redacted>)"
    }
}

/// What the store announces: NXOAuth2's `AccountsDidChange` and `DidFailToRequestAccess`
/// notifications, plus cache recovery.
public enum AccountStoreEvent: Sendable {
    /// An account was added, updated (signed in again, refreshed) or removed.
    case accountsDidChange(accountType: String, change: AccountChange)
    /// A sign-in or a silent token request failed.
    case didFailToRequestAccess(accountType: String, error: AccountStoreError)
    /// The token cache of a storage group could not be read; it was set aside (kept for
    /// inspection at `setAsideAt`) and replaced by an empty one.
    case cacheRecovered(storageGroup: String, setAsideAt: String)
    /// A sign-in needed no page: this computer's Primary Refresh Token signed the account in.
    case signedInWithDevice(accountType: String, deviceID: String)
    /// The organization removed (or disabled) this computer, or its keys cannot be used (its TPM
    /// is away): its registration is of no use now, and sign-ins show their pages again. The
    /// error says which, for the user.
    case deviceLost(DeviceIdentityError)
    /// An interactive sign-in's ID token was checked (signature, issuer, audience, lifetime,
    /// nonce): how each check went, for the flow inspector.
    case idTokenChecked(accountType: String, checks: [IDTokenCheck])
}

/// How the accounts changed.
public enum AccountChange: Sendable, Hashable {
    /// A new account signed in.
    case added(Account)
    /// A known account signed in again or was marked as needing interaction.
    case updated(Account)
    /// An account signed out.
    case removed(Account)
}
