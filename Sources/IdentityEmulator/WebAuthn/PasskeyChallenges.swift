import FoundationEssentials

/// The challenges the relying party has issued and not yet seen answered: 32 random bytes each,
/// single use, five minutes of life, at most ``maximumCount`` outstanding (the oldest go first).
struct PasskeyChallenges: Sendable {
    static let lifetime: TimeInterval = 5 * 60
    static let maximumCount = 1024
    static let length = 32

    enum Ceremony: String, Sendable, Codable {
        case registration, assertion
    }

    /// One issued challenge and what it was issued for.
    struct Issued: Sendable, Equatable {
        let challenge: [UInt8]
        let ceremony: Ceremony
        /// The user the options named (registration; a sign-in after a username), nil for a
        /// username-less sign-in.
        let userHandle: [UInt8]?
        let issuedAt: Date
        var expiresAt: Date { issuedAt.addingTimeInterval(PasskeyChallenges.lifetime) }
    }

    private var issued: [[UInt8]: Issued] = [:]
    private var order: [[UInt8]] = []

    init() {}

    var count: Int { issued.count }

    /// Issues a fresh challenge for `ceremony`.
    mutating func issue(for ceremony: Ceremony, userHandle: [UInt8]?, now: Date) -> Issued {
        var generator = SystemRandomNumberGenerator()
        return issue(for: ceremony, userHandle: userHandle, now: now, using: &generator)
    }

    mutating func issue(
        for ceremony: Ceremony, userHandle: [UInt8]?, now: Date, using generator: inout some RandomNumberGenerator
    )
        -> Issued
    {
        prune(now: now)
        while issued.count >= Self.maximumCount, let oldest = order.first {
            order.removeFirst()
            issued[oldest] = nil
        }
        let challenge = (0..<Self.length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let entry = Issued(challenge: challenge, ceremony: ceremony, userHandle: userHandle, issuedAt: now)
        issued[challenge] = entry
        order.append(challenge)
        return entry
    }

    /// Takes the challenge out: a second answer with it finds nothing. An expired or
    /// other-ceremony challenge is taken out too.
    mutating func consume(_ challenge: [UInt8], for ceremony: Ceremony, now: Date) throws(WebAuthnRefusal) -> Issued {
        guard let entry = issued.removeValue(forKey: challenge) else { throw .challengeUnknown }
        order.removeAll { $0 == challenge }
        guard entry.ceremony == ceremony else { throw .challengeUnknown }
        guard now < entry.expiresAt, now >= entry.issuedAt.addingTimeInterval(-60) else { throw .challengeExpired }
        return entry
    }

    /// Forgets the challenges whose life ended a lifetime ago (until then an answer with one
    /// is told it came too late, not that it is unknown).
    mutating func prune(now: Date) {
        let expired = issued.values.filter { now >= $0.expiresAt.addingTimeInterval(Self.lifetime) }.map(\.challenge)
        guard !expired.isEmpty else { return }
        for challenge in expired { issued[challenge] = nil }
        order.removeAll { issued[$0] == nil }
    }
}
