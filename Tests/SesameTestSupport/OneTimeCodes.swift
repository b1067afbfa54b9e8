import Foundation
import Synchronization

/// The one-time codes the identity emulator "sends" (SMS and e-mail), read from the lines it
/// announces — `mfa-code <user> <code>` — whether it runs in process (its `announce` hook) or as
/// a process (its standard output).
public final class OneTimeCodes: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    /// Takes one announced line (others are kept but never match).
    public func record(_ line: String) { lines.withLock { $0.append(line) } }

    /// Every line announced so far.
    public var all: [String] { lines.withLock { $0 } }

    /// The last code sent to `user`.
    public func code(for user: String) -> String? {
        all.last { $0.hasPrefix("mfa-code \(user) ") }.map { String($0.split(separator: " ")[2]) }
    }

    /// The last code sent to anyone.
    public var last: String? {
        all.last { $0.hasPrefix("mfa-code ") }.flatMap { $0.split(separator: " ").dropFirst(2).first.map(String.init) }
    }
}
