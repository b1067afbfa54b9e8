import FoundationEssentials

/// Where the emulator reads the time. Tests move it forward to expire codes, tokens and
/// refresh tokens without waiting.
public final class EmulatorClock: @unchecked Sendable {
    private let lock = Lock()
    private var offset: TimeInterval = 0
    private var skew: TimeInterval = 0

    public init() {}

    /// The current time, shifted by every ``advance(by:)`` so far and the injected skew.
    public var now: Date { lock.withLock { Date().addingTimeInterval(offset + skew) } }

    /// Runs the clock `seconds` ahead of the real time (negative: behind), as a fault.
    func setSkew(_ seconds: TimeInterval) { lock.withLock { skew = seconds } }

    /// Moves the clock forward (e.g. 11 minutes to expire an authorization code).
    public func advance(by interval: TimeInterval) { lock.withLock { offset += interval } }
}

extension Date {
    /// Entra's timestamp form in error texts: `2026-11-22 10:00:48Z`.
    var entraTimestamp: String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: self)
        func two(_ value: Int?) -> String { String(value ?? 0).leftPadded(to: 2) }
        return "\(c.year ?? 1970)-\(two(c.month))-\(two(c.day)) \(two(c.hour)):\(two(c.minute)):\(two(c.second))Z"
    }

    /// Graph's `innerError.date` form: `2026-11-22T10:00:48`.
    var graphTimestamp: String { entraTimestamp.replacing(" ", with: "T").replacing("Z", with: "") }

    /// Graph's property form (`registrationDateTime`): `2026-11-22T10:00:48Z`.
    var iso8601Seconds: String { entraTimestamp.replacing(" ", with: "T") }

    var epochSeconds: Int { Int(timeIntervalSince1970) }
}
