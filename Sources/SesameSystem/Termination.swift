import Dispatch
import Glibc
import Synchronization

/// How Sesame's programs end on SIGINT (Ctrl+C), SIGTERM (a desktop logging out, a mail program's
/// time limit) and SIGHUP (a closed terminal): at once, after one sentence on standard error — but
/// never inside a section that must not be cut short. The one that matters is a refresh between
/// its request and the store of its answer: with strict rotation the request spends the stored
/// refresh token, and a process ended before the new one is stored has signed its user out. A
/// signal that comes during such a section (``deferring(_:)``) is acted on when the last one ends.
///
/// A program ends as the signal asks (the handler is reset and the signal raised again): its
/// parent sees a death by that signal, and a shell running it in a loop stops too; the shell's
/// status is 128 + the signal's number (130 for Ctrl+C, 143 for SIGTERM, 129 for SIGHUP).
/// SIGKILL cannot be deferred: docs/SECURITY.md says what it can still cost.
///
/// A program that answers others (the account service) runs each answer in ``answering(_:)``:
/// a section inside it that a signal waited for ends the process only once the answer is given,
/// so the caller whose refresh was stored hears its token, not that the service went away.
public final class Termination: Sendable {
    /// The process's one instance (signal dispositions belong to the process).
    public static let shared = Termination()

    /// The signals handled.
    public static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    private struct State: ~Copyable {
        /// Sections running that a signal waits for.
        var depth = 0
        /// The first signal that came, acted on when `depth` is 0.
        var pending: Int32?
        /// What runs before the process ends (its sentence, its flush).
        var ending: (@Sendable (Int32, _ waited: Bool) -> Void)?
        /// Whether a section was running when the signal came.
        var waited = false
        /// Sections running inside each ``answering(_:)`` scope, by the scope's number.
        var sectionsIn: [Int: Int] = [:]
        /// The scopes whose section ended after the signal came: the process ends once they have
        /// answered.
        var owing: Set<Int> = []
        /// The next scope's number.
        var nextScope = 0
    }

    private let state = Mutex(State())
    /// Where the signals are handled, and an answer that is late is given up on.
    private let queue = DispatchQueue(label: "sesame.termination")

    /// How long an ``answering(_:)`` scope whose section a signal waited for has to give its
    /// answer before the process ends anyway: what is left after a refresh is stored is the reply
    /// itself, but nothing after it (a question to the person) may hold the ending up.
    public static let answerGrace: Duration = .seconds(5)
    /// The dispatch sources, kept for the process's life.
    nonisolated(unsafe) private var sources: [any DispatchSourceSignal] = []

    private init() {}

    /// From now on SIGINT, SIGTERM and SIGHUP end the process through `ending` (called once, off
    /// the main thread, with the signal and whether it waited for a section to end; it writes the
    /// program's sentence and flushes what must reach the disk), then the signal's own ending.
    /// Called early in `main`; called again (a subcommand's own sentence), it replaces `ending`.
    public func install(ending: @escaping @Sendable (Int32, _ waited: Bool) -> Void) {
        let first = state.withLock { state in
            defer { state.ending = ending }
            return state.ending == nil
        }
        guard first, sources.isEmpty else { return }
        for number in Self.signals {
            // Handled by the source, not by the default action (which would end the process at once).
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [self] in received(number) }
            source.resume()
            sources.append(source)
        }
    }

    /// The signal that asked the process to end, if one did (a long task may stop early).
    public var requested: Int32? { state.withLock { $0.pending } }

    /// Runs `body`; a signal that comes meanwhile ends the process once it (and every other
    /// section running) has returned. A section nested in another is part of it.
    /// - Throws: ``Ending`` without running `body` when a signal already asked the process to end
    ///   (a refresh must not start then), or what `body` throws.
    public func deferring<T>(_ body: () throws -> T) throws -> T {
        if Self.inSection { return try body() }
        try enter()
        defer { leave() }
        return try Self.$inSection.withValue(true) { try body() }
    }

    /// The asynchronous ``deferring(_:)``, on the caller's actor.
    public func deferring<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T) async throws -> T {
        if Self.inSection { return try await body() }
        try enter()
        defer { leave() }
        return try await Self.$inSection.withValue(true) { try await body() }
    }

    /// Whether the current task runs inside a section.
    @TaskLocal private static var inSection = false

    /// The ``answering(_:)`` scope the current task runs in, by its number.
    @TaskLocal private static var scope: Int?

    /// Runs `body`, which answers a caller (a call on the bus); when a section inside it is one a
    /// signal waited for, the process ends once `body` has returned — the answer given — rather
    /// than when the section ends. A scope that ran no section when the signal came (one waiting
    /// for the person to answer a question, say) holds nothing up.
    public func answering<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T) async rethrows -> T {
        let number = state.withLock { state in
            defer { state.nextScope += 1 }
            return state.nextScope
        }
        defer {
            let signal = state.withLock { state -> Int32? in
                guard state.owing.remove(number) != nil else { return nil }
                return state.depth == 0 && state.owing.isEmpty ? state.pending : nil
            }
            if let signal { end(signal) }
        }
        return try await Self.$scope.withValue(number) { try await body() }
    }

    /// Waits for the end a signal already began, if one did: a command whose work failed because
    /// the process is ending (a refresh refused to start, a request cut short) would otherwise end
    /// with its own status while the signal's ending is still saying why and flushing, and its
    /// parent would see `1` rather than a death by the signal. Once a signal is pending, the
    /// process ends as it asks: at once, or when the section under way is left.
    public func waitIfEnding() {
        guard state.withLock({ $0.pending != nil }) else { return }
        while true { pause() }
    }

    /// What ``deferring(_:)`` throws when the process is ending.
    public struct Ending: Error, CustomStringConvertible {
        /// The signal that ends it.
        public let signal: Int32
        public var description: String { "the program is ending (\(Termination.name(of: signal)))" }
    }

    private func enter() throws {
        let scope = Self.scope
        let ending = state.withLock { state -> Int32? in
            if let pending = state.pending { return pending }
            state.depth += 1
            if let scope { state.sectionsIn[scope, default: 0] += 1 }
            return nil
        }
        if let ending { throw Ending(signal: ending) }
    }

    private func leave() {
        let scope = Self.scope
        let (signal, owing) = state.withLock { state -> (Int32?, Int32?) in
            state.depth -= 1
            var owing: Int32?
            if let scope, let running = state.sectionsIn[scope] {
                state.sectionsIn[scope] = running > 1 ? running - 1 : nil
                // Its section done after the signal: its caller is answered before the end.
                if running == 1, let pending = state.pending {
                    state.owing.insert(scope)
                    owing = pending
                }
            }
            return (state.depth == 0 && state.owing.isEmpty ? state.pending : nil, owing)
        }
        if let signal { end(signal) }
        if let owing, let scope {
            queue.asyncAfter(deadline: .now() + .milliseconds(Int(Self.answerGrace.components.seconds * 1000))) { [self] in
                // Not answered yet: given up on (a section running still ends the process itself).
                let now = state.withLock { state in state.owing.remove(scope) != nil && state.depth == 0 && state.owing.isEmpty }
                if now { end(owing) }
            }
        }
    }

    private func received(_ signal: Int32) {
        let now = state.withLock { state -> Bool in
            guard state.pending == nil else { return false }
            state.pending = signal
            state.waited = state.depth > 0
            return state.depth == 0
        }
        if now { end(signal) }
    }

    /// Runs the program's ending once, then ends as `signal` does by default. A second thread
    /// that gets here waits for the first to end the process.
    private func end(_ signal: Int32) -> Never {
        let (ending, waited) = state.withLock { state in
            let ending = state.ending
            state.ending = nil
            return (ending, state.waited)
        }
        guard let ending else {
            while true { pause() }
        }
        ending(signal, waited)
        Glibc.signal(signal, SIG_DFL)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        sigaddset(&unblocked, signal)
        pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
        raise(signal)
        // Not reached: the signal's default action ends the process.
        _exit(128 + signal)
    }

    /// The signal's name as people know it: `SIGTERM`, `SIGINT`, `SIGHUP`.
    public static func name(of signal: Int32) -> String {
        switch signal {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        default: "signal \(signal)"
        }
    }
}
