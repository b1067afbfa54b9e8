import Foundation

/// Waiting for what another task, thread or process does: ask again every `interval` until the
/// answer comes or `timeout` has passed, and return what was found. The tests' one way to poll
/// (nothing sleeps a fixed time and hopes). The timeout only bounds a wait that would otherwise
/// hang; a test asserts on the answer, never on how long it took.
///
/// The GUI tests wait with `MainLoopBridge.spin(timeout:until:)` instead, which runs GLib's loop
/// between questions (the thing they wait for happens on that loop).
public enum Eventually {
    /// How long a wait lasts unless it says otherwise: only a guard against a wait that would
    /// hang — what is awaited ends it — so it is generous enough for a machine busy with other
    /// work besides `make test` (two builds beside it took what once came in 10 s past it).
    public static let defaultTimeout: Duration = .seconds(120)
    /// How often the question is asked unless the wait says otherwise.
    public static let defaultInterval: Duration = .milliseconds(10)

    /// The first answer `probe` gives (non-nil), asked until `timeout` has passed; nil if none
    /// came (or the task was cancelled). Runs on the caller's actor, so `probe` may read its state.
    public static func value<T>(
        within timeout: Duration = defaultTimeout, every interval: Duration = defaultInterval,
        isolation: isolated (any Actor)? = #isolation, _ probe: () async throws -> T?
    ) async rethrows -> T? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let found = try await probe() { return found }
            // Between two questions; the answer ends the wait, the deadline only bounds a hang.
            guard ContinuousClock.now < deadline, (try? await Task.sleep(for: interval)) != nil else { return nil }
        }
    }

    /// Whether `condition` came to hold within `timeout` (asked every `interval`).
    public static func holds(
        within timeout: Duration = defaultTimeout, every interval: Duration = defaultInterval,
        isolation: isolated (any Actor)? = #isolation, _ condition: () async throws -> Bool
    ) async rethrows -> Bool {
        try await value(within: timeout, every: interval) { try await condition() ? true : nil } ?? false
    }

    /// ``value(within:every:isolation:_:)`` for synchronous code (an XCTest method, a thread of
    /// the test's own): blocks the calling thread between questions.
    public static func valueBlocking<T>(
        within timeout: Duration = defaultTimeout, every interval: Duration = defaultInterval, _ probe: () throws -> T?
    ) rethrows -> T? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let found = try probe() { return found }
            guard ContinuousClock.now < deadline else { return nil }
            Thread.sleep(forTimeInterval: interval / .seconds(1))  // between two questions, as above
        }
    }

    /// ``holds(within:every:isolation:_:)`` for synchronous code: blocks the calling thread
    /// between questions.
    public static func holdsBlocking(
        within timeout: Duration = defaultTimeout, every interval: Duration = defaultInterval, _ condition: () throws -> Bool
    ) rethrows -> Bool {
        try valueBlocking(within: timeout, every: interval) { try condition() ? true : nil } ?? false
    }
}
