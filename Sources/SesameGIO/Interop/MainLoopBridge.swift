import CGio
import FoundationEssentials
import Glibc

/// The one bridge between GLib's main loop and Swift's main actor.
///
/// GLib owns the main thread, so Swift's main queue (where `@MainActor` work is enqueued) is never
/// drained by `dispatch_main()`. libdispatch exports the hooks CoreFoundation's run loop uses: an
/// eventfd that becomes readable when main-queue work arrives, and the function that drains it.
/// A GLib fd source watches the eventfd, reads it (without the read the source fires forever),
/// then drains the queue.
public enum MainLoopBridge {
    nonisolated(unsafe) private static var installed = false

    /// Installs the bridge once; call on the main thread before the GLib loop runs.
    public static func install() {
        precondition(sesame_is_main_thread() != 0, "the main-loop bridge must be installed on the main thread")
        guard !installed else { return }
        installed = true
        let fd = _dispatch_get_main_queue_handle_4CF()
        g_unix_fd_add(
            fd, G_IO_IN,
            { fd, _, _ in
                var counter: UInt64 = 0
                _ = read(fd, &counter, MemoryLayout<UInt64>.size)
                _dispatch_main_queue_callback_4CF(nil)
                return gboolean(1)
            }, nil)
    }

    /// Runs the GLib main context until `condition` holds or `timeout` passes (for tests and
    /// synchronous waits on the main thread; never called from inside a handler).
    @discardableResult
    public static func spin(timeout: TimeInterval, until condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(timeout * 1000)))
        while !condition() {
            if ContinuousClock.now > deadline { return false }
            if g_main_context_iteration(nil, gboolean(0)) == 0 { usleep(2_000) }
        }
        return true
    }
}
