import Foundation

/// Blocking work of an async test (waiting for a program, a semaphore, `Eventually.holdsBlocking`)
/// run on a thread of its own. Swift's tasks share as many threads as the machine has cores (two
/// on CI); a test that blocks one of them for the length of a program starves everything else in
/// the process, an in-process emulator's answers among them, and other suites then time out.
public enum OwnThread {
    /// Runs `body` on a new thread and returns what it returns, holding no task thread meanwhile.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }
}
