import FoundationEssentials
import Synchronization

/// What the emulator needs of Foundation's text handling, without Foundation's ICU (the emulator
/// does not import SesameCore, whose `Text.swift` is Sesame's own).
extension String {
    /// The text without the white space at its ends.
    func trimmingWhitespace() -> String {
        trimming { $0.isWhitespace }
    }

    /// The text without the characters `drop` picks at its ends.
    func trimming(_ drop: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !drop($0) }), let last = lastIndex(where: { !drop($0) }) else { return "" }
        return String(self[first...last])
    }

    /// Whether the two are the same text, ignoring case.
    func equalsIgnoringCase(_ other: some StringProtocol) -> Bool {
        lowercased() == other.lowercased()
    }
}

extension Substring {
    /// The text without the white space at its ends.
    func trimmingWhitespace() -> String { String(self).trimmingWhitespace() }
}

/// A lock around state a class keeps itself (Foundation's `NSLock`, without Foundation).
final class Lock: Sendable {
    private let mutex = Mutex(())

    /// Runs `body` holding the lock.
    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        try mutex.withLock { _ in try body() }
    }
}
