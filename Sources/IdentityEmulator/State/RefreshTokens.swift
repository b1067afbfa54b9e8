import FoundationEssentials

/// The refresh tokens the service issued (as digests), the users whose tokens were revoked
/// (Graph's `revokeSignInSessions`) and the rotation families revoked for a reuse. Kept in the
/// state file: its keys (`refreshTokens`, `tokensValidFrom`, `revokedFamilies`) are the file's.
struct RefreshTokens: Codable, Sendable {
    /// An issued refresh token.
    struct Record: Codable, Sendable {
        var grant: Grant
        var issuedAt: Date
        var lastUsed: Date
        /// The chain of rotations it belongs to (one per sign-in).
        var family: String?
        /// Whether it was redeemed (strict rotation refuses it after that).
        var used: Bool?
    }

    enum Outcome: Sendable {
        case valid(Record)
        case unknown
        case inactive(Record)
        case revoked(Record, validFrom: Date)
        /// Strict rotation: redeemed before, so its whole family is revoked now.
        case reused(Record)
    }

    /// Refresh tokens expire after 90 days without use (Entra), 14 days for B2C by default.
    static let inactivity: TimeInterval = 90 * 86_400
    static let b2cLifetime: TimeInterval = 14 * 86_400

    private var refreshTokens: [String: Record] = [:]
    /// userID → tokens issued before this are revoked.
    private var tokensValidFrom: [String: Date] = [:]
    /// Rotation families revoked because one of their tokens was redeemed twice.
    private var revokedFamilies: Set<String>?

    init() {}

    /// A new refresh token for `grant`, in `family` (a rotation's) or a new one (a sign-in's).
    mutating func issue(for grant: Grant, now: Date, family: String? = nil) -> String {
        let token =
            (grant.policy == nil ? "1.A" : "eyJraWQiOiJjcGltY29yZV8wOTI1MjAxNSIsInZlciI6IjEuMCIsInppcCI6IkRlZmxhdGUiLCJzZXIiOiIxLjAifQ.")
            + Identifiers.opaque(bytes: 64)
        refreshTokens[Identifiers.digest(token)] = Record(
            grant: grant, issuedAt: now, lastUsed: now, family: family ?? Identifiers.opaque(bytes: 12), used: false)
        return token
    }

    /// Looks a refresh token up and marks it used. The old token stays valid after rotation, as on
    /// Entra; with `strict` rotation a token works once, and redeeming it again revokes its whole
    /// family, as servers with reuse detection do.
    mutating func use(_ token: String, now: Date, strict: Bool) -> Outcome {
        let digest = Identifiers.digest(token)
        guard var record = refreshTokens[digest] else { return .unknown }
        if let validFrom = tokensValidFrom[record.grant.userID], record.issuedAt < validFrom {
            return .revoked(record, validFrom: validFrom)
        }
        if let family = record.family, revokedFamilies?.contains(family) == true { return .reused(record) }
        if strict, record.used == true {
            if let family = record.family { revokedFamilies = (revokedFamilies ?? []).union([family]) }
            return .reused(record)
        }
        let limit = record.grant.policy == nil ? Self.inactivity : Self.b2cLifetime
        let reference = record.grant.policy == nil ? record.lastUsed : record.issuedAt
        if now.timeIntervalSince(reference) > limit { return .inactive(record) }
        record.lastUsed = now
        record.used = true
        refreshTokens[digest] = record
        return .valid(record)
    }

    /// Every token of `userID` issued before `now` is revoked. The records stay, so a revoked
    /// token is told apart from a made-up one.
    mutating func revoke(userID: String, now: Date) { tokensValidFrom[userID] = now }
}

/// The browser sessions of the service's pages ("stay signed in"), by the digest of their
/// cookie. Kept in the state file under `sessions`.
struct BrowserSessions: Codable, Sendable {
    private var sessions: [String: SignInSession] = [:]

    init() {}

    /// A new session; its cookie.
    mutating func create(_ session: SignInSession) -> String {
        let cookie = Identifiers.opaque(bytes: 32)
        sessions[Identifiers.digest(cookie)] = session
        return cookie
    }

    subscript(cookie cookie: String) -> SignInSession? { sessions[Identifiers.digest(cookie)] }

    mutating func end(cookie: String) { sessions[Identifiers.digest(cookie)] = nil }

    /// Every session of `userID` ends (Graph's `revokeSignInSessions`).
    mutating func end(userID: String) { sessions = sessions.filter { $0.value.userID != userID } }
}

/// What users consented to, per app, and the users B2C's sign-up created. Kept in the state file
/// under `consents` and `signedUpUsers`.
struct UserGrants: Codable, Sendable {
    /// "userID|clientID" → consented permission keys.
    private var consents: [String: Set<String>] = [:]
    /// B2C users created by sign-up (in earlier runs too).
    private(set) var signedUpUsers: [DirectoryUser] = []

    init() {}

    func consented(userID: String, clientID: String) -> Set<String> { consents["\(userID)|\(clientID)"] ?? [] }

    mutating func consent(_ permissions: Set<String>, userID: String, clientID: String) {
        consents["\(userID)|\(clientID)", default: []].formUnion(permissions)
    }

    mutating func signedUp(_ user: DirectoryUser) { signedUpUsers.append(user) }

    /// A signed-up user's new password (or one signed up by another path).
    mutating func passwordChanged(_ user: DirectoryUser) {
        if let index = signedUpUsers.firstIndex(where: { $0.id == user.id }) {
            signedUpUsers[index] = user
        } else {
            signedUpUsers.append(user)
        }
    }
}
