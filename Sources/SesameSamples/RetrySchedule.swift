import FoundationEssentials
import SesameWindowModel

/// When a page reads again by itself after a failure Retry can mend — a service that was refusing
/// or down comes back without a press — and how many seconds are left before it does, which the
/// page's status says ("Trying again in 8 s") and counts down. One delay per attempt in a row, the
/// last repeating; a success, the user's own retry or the network's return starts it over.
///
/// Time passes through ``sleep`` (the real clock by default), so a test moves it by hand.
@MainActor
public final class RetrySchedule {
    /// The delays, one per failure in a row (the last repeats).
    public var delays: [Duration] = [.seconds(2), .seconds(4), .seconds(8), .seconds(15), .seconds(30), .seconds(60)]
    /// How a wait passes: `Task.sleep` unless a test says otherwise.
    public var sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    /// Whole seconds left before the next attempt (rounded up), while one is scheduled.
    public private(set) var secondsLeft: Int?
    /// Called after each second of the countdown, and when it starts and ends.
    public var onTick: (@MainActor () -> Void)?
    private var failuresInARow = 0
    private var task: Task<Void, Never>?

    public init() {}

    /// Runs `attempt` after the next delay (counting down meanwhile); replaces a wait under way.
    public func schedule(_ attempt: @escaping @MainActor () -> Void) {
        task?.cancel()
        guard !delays.isEmpty else { return }
        var remaining = delays[min(failuresInARow, delays.count - 1)]
        failuresInARow += 1
        secondsLeft = Self.wholeSeconds(remaining)
        onTick?()
        let sleep = sleep
        task = Task { [weak self] in
            while remaining > .zero {
                let step = min(remaining, .seconds(1))
                do { try await sleep(step) } catch { return }
                guard let self, !Task.isCancelled else { return }
                remaining -= step
                self.secondsLeft = remaining > .zero ? Self.wholeSeconds(remaining) : nil
                self.onTick?()
            }
            guard self != nil, !Task.isCancelled else { return }
            attempt()
        }
    }

    /// Stops a wait under way (something else read the page); the next failure waits longer.
    public func cancel() {
        task?.cancel()
        task = nil
        guard secondsLeft != nil else { return }
        secondsLeft = nil
        onTick?()
    }

    /// The page read well, or the user asked: the next failure waits the first delay again.
    public func reset() {
        cancel()
        failuresInARow = 0
    }

    private static func wholeSeconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) + (attoseconds > 0 ? 1 : 0)
    }
}
