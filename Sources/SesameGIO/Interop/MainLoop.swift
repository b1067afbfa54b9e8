import CGio

/// One-shot callbacks from the GLib loop.
@MainActor
public enum MainLoop {
    /// Runs `body` once the loop is idle (after pending redraws: GTK paints at a higher priority).
    public static func whenIdle(_ body: @escaping @MainActor () -> Void) {
        let box = SignalBox<@MainActor () -> Void>(body)
        let callback: @convention(c) (gpointer?) -> gboolean = { data in
            let box = Unmanaged<SignalBox<@MainActor () -> Void>>.fromOpaque(data!).takeRetainedValue()
            MainActor.assumeIsolated { box.handler() }
            return 0
        }
        g_idle_add(callback, Unmanaged.passRetained(box).toOpaque())
    }

    private static var running: OpaquePointer?

    /// Runs GLib's default main loop until ``quit()``: a program without GTK (the account service).
    public static func run() {
        let loop = g_main_loop_new(nil, 0)
        running = loop
        g_main_loop_run(loop)
        running = nil
        g_main_loop_unref(loop)
    }

    /// Ends ``run()``.
    public static func quit() {
        if let running { g_main_loop_quit(running) }
    }
}

/// How long the GLib main loop went without running: a timer due every `period` notes how late
/// each tick ran. A tick late by more than a frame (16 ms) is a stall the user sees as a frozen
/// window; the app records those with `--trace-events`, and tests and benchmarks read the longest.
@MainActor
public final class MainLoopWatch {
    private final class Ticks: @unchecked Sendable {
        let period: Int64
        var last = Int64(g_get_monotonic_time())
        var longest: Int64 = 0
        var threshold: Int64 = .max
        var onStall: (@MainActor (Duration) -> Void)?
        init(period: Int64) { self.period = period }
    }

    private let ticks: Ticks
    private var source: guint = 0

    /// Starts watching; `onStall` hears of every stall longer than `threshold`.
    public init(
        period: Duration = .milliseconds(5), reportingStallsOver threshold: Duration? = nil,
        onStall: (@MainActor (Duration) -> Void)? = nil
    ) {
        let periodMicroseconds = max(1, period.components.seconds * 1_000_000 + period.components.attoseconds / 1_000_000_000_000)
        ticks = Ticks(period: periodMicroseconds)
        if let threshold {
            ticks.threshold = threshold.components.seconds * 1_000_000 + threshold.components.attoseconds / 1_000_000_000_000
        }
        ticks.onStall = onStall
        let tick: GSourceFunc = { data in
            let ticks = Unmanaged<Ticks>.fromOpaque(data!).takeUnretainedValue()
            let now = Int64(g_get_monotonic_time())
            let late = now - ticks.last - ticks.period
            ticks.last = now
            if late > ticks.longest { ticks.longest = late }
            if late > ticks.threshold, let onStall = ticks.onStall {
                MainActor.assumeIsolated { onStall(.microseconds(late)) }
            }
            return 1
        }
        let release: GDestroyNotify = { data in Unmanaged<Ticks>.fromOpaque(data!).release() }
        source = g_timeout_add_full(
            G_PRIORITY_HIGH, guint(max(1, periodMicroseconds / 1000)), tick, Unmanaged.passRetained(ticks).toOpaque(), release)
    }

    /// The longest stall since the watch started or was last reset.
    public var longestStall: Duration { .microseconds(ticks.longest) }

    /// Forgets the stalls seen so far.
    public func reset() {
        ticks.longest = 0
        ticks.last = Int64(g_get_monotonic_time())
    }

    /// Stops watching.
    public func stop() {
        guard source != 0 else { return }
        g_source_remove(source)
        source = 0
    }
}
