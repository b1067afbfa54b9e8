import FoundationEssentials
import Synchronization

/// The keys that sign tokens, as Entra and B2C keep them: one current key signs, and the keys it
/// replaced stay published in the JWKS for a while, so tokens already issued still verify. A
/// rollover happens on command (`POST /.emulator/keys/rotate`) and, with `--key-rollover`, on a
/// schedule. The current key is kept in the state directory.
final class SigningKeys: Sendable {
    /// How many replaced keys stay published.
    static let keptAfterRollover = 2

    private struct State {
        var current: SigningKey
        var since: Date
        var previous: [SigningKey]
    }

    private let state: Mutex<State>
    private let directory: URL?
    private let interval: TimeInterval?

    /// The saved key from `directory` (or a new one); `interval` rolls it over on a schedule.
    init(directory: URL?, interval: TimeInterval?, now: Date) throws {
        self.directory = directory
        self.interval = interval
        state = Mutex(State(current: try SigningKey.loadOrCreate(in: directory, now: now), since: now, previous: []))
    }

    /// The key that signs now (rolled over first when the schedule says so).
    func current(now: Date) -> SigningKey {
        if let interval, state.withLock({ now.timeIntervalSince($0.since) >= interval }) {
            // A key that could not be made or saved leaves the current one signing; the next
            // token tries the rollover again.
            _ = try? rotate(now: now)
        }
        return state.withLock { $0.current }
    }

    /// Every key the JWKS publishes: the current one first, then those it replaced.
    var published: [SigningKey] { state.withLock { [$0.current] + $0.previous } }

    /// Makes a new current key; the old one stays published.
    @discardableResult
    func rotate(now: Date) throws -> SigningKey {
        let fresh = try SigningKey.create(now: now)
        if let directory { try fresh.save(in: directory) }
        state.withLock { state in
            state.previous = Array(([state.current] + state.previous).prefix(Self.keptAfterRollover))
            state.current = fresh
            state.since = now
        }
        return fresh
    }

    /// The claims of a token signed by a published key (the one its `kid` names).
    func verify(_ token: String) throws(JSONWebToken.Failure) -> [String: Any] {
        let keys = published
        let kid = JSONWebToken.keyID(of: token)
        guard let key = keys.first(where: { $0.keyID == kid }) ?? (kid == nil ? keys.first : nil) else { throw .badSignature }
        return try JSONWebToken.verify(token, with: key)
    }
}
