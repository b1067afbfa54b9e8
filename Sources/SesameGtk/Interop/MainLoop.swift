import CGtkWebKit

/// One-shot callbacks from the GLib loop.
@MainActor
enum MainLoop {
    /// Runs `body` once the loop is idle (after pending redraws: GTK paints at a higher priority).
    static func whenIdle(_ body: @escaping @MainActor () -> Void) {
        let box = SignalBox<@MainActor () -> Void>(body)
        let callback: @convention(c) (gpointer?) -> gboolean = { data in
            let box = Unmanaged<SignalBox<@MainActor () -> Void>>.fromOpaque(data!).takeRetainedValue()
            MainActor.assumeIsolated { box.handler() }
            return 0
        }
        g_idle_add(callback, Unmanaged.passRetained(box).toOpaque())
    }
}
