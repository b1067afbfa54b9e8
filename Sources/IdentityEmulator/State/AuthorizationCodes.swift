import FoundationEssentials

/// The authorization codes the service issued and not yet redeemed, and those redeemed in the
/// last day (a second redemption is told apart from a made-up code). Kept as SHA-256 digests,
/// in memory only: a code lives ten minutes.
struct AuthorizationCodes: Sendable {
    /// An issued authorization code.
    struct Record: Sendable {
        var grant: Grant
        /// `redirect_uri` as sent on /authorize: the token request must send the same.
        var redirectURI: String
        var nonce: String?
        var codeChallenge: String?
        var codeChallengeMethod: String
        var issuedAt: Date
    }

    enum Outcome: Sendable {
        case valid(Record)
        case unknown
        case alreadyRedeemed
        case expired(Record)
    }

    /// Codes live about ten minutes.
    static let lifetime: TimeInterval = 600

    private var issued: [String: Record] = [:]
    private var redeemed: [String: Date] = [:]

    /// A new code for `record`.
    mutating func issue(_ record: Record) -> String {
        // Entra's codes start "0.A"; B2C's look like a JWE. Both are opaque to clients.
        let prefix =
            record.grant.policy == nil
            ? "0.A" : "eyJraWQiOiJjcGltY29yZV8wOTI1MjAxNSIsInZlciI6IjEuMCIsInppcCI6IkRlZmxhdGUiLCJzZXIiOiIxLjAifQ."
        let code = prefix + Identifiers.opaque(bytes: 48)
        issued[Identifiers.digest(code)] = record
        return code
    }

    /// Redeems a code once: a second attempt is `alreadyRedeemed`, a late one `expired`.
    mutating func redeem(_ code: String, now: Date) -> Outcome {
        let digest = Identifiers.digest(code)
        if redeemed[digest] != nil { return .alreadyRedeemed }
        guard let record = issued.removeValue(forKey: digest) else { return .unknown }
        redeemed[digest] = now
        redeemed = redeemed.filter { now.timeIntervalSince($0.value) < 86_400 }
        if now.timeIntervalSince(record.issuedAt) > Self.lifetime { return .expired(record) }
        return .valid(record)
    }
}

/// The sign-in transactions under way: one per `/authorize` until its code is issued, for an hour
/// at most. In memory only.
struct SignInTransactions: Sendable {
    static let lifetime: TimeInterval = 3600

    private var open: [String: SignInTransaction] = [:]

    /// A new transaction for `request` (those older than an hour are dropped).
    mutating func begin(_ request: AuthorizeRequest, now: Date) -> SignInTransaction {
        open = open.filter { now.timeIntervalSince($0.value.createdAt) < Self.lifetime }
        let transaction = SignInTransaction(id: Identifiers.opaque(bytes: 24), request: request, createdAt: now)
        open[transaction.id] = transaction
        return transaction
    }

    subscript(id: String) -> SignInTransaction? { open[id] }

    mutating func update(_ transaction: SignInTransaction) { open[transaction.id] = transaction }

    mutating func finish(_ id: String) { open[id] = nil }
}
