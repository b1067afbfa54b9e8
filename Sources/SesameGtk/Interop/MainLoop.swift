import CGtkWebKit
import SesameGIO

/// One-shot callbacks tied to GDK's frame clock.
extension MainLoop {
    /// A moment inside a frame, for a trace of where a frame's time goes.
    enum FramePhase: String {
        /// The frame clock began the frame (`before-paint`).
        case began
        /// Sizes and positions are done; the painting begins (after the clock's `layout` handlers).
        case laidOut = "laid-out"
    }

    /// Runs `body` once `widget`'s window has painted its next frame — the frame that shows what
    /// was just changed (GDK's frame clock, `after-paint`); for a widget not on screen yet, once
    /// the loop is idle (no frame would come for it). `phases` hears when that frame began and
    /// when its layout was done.
    static func afterNextPaint(
        of widget: Widget, phases: (@MainActor (FramePhase) -> Void)? = nil, _ body: @escaping @MainActor () -> Void
    ) {
        guard gtk_widget_get_mapped(widget.widget) != 0, let clock = gtk_widget_get_frame_clock(widget.widget) else {
            whenIdle(body)
            return
        }
        final class Once {
            let body: @MainActor () -> Void
            let phases: (@MainActor (FramePhase) -> Void)?
            var handlers: [gulong] = []
            init(_ body: @escaping @MainActor () -> Void, phases: (@MainActor (FramePhase) -> Void)?) {
                self.body = body
                self.phases = phases
            }
        }
        let once = Once(body, phases: phases)
        let clockObject = UnsafeMutableRawPointer(clock)
        func connect(_ signal: String, after: Bool, _ trampoline: @convention(c) (gpointer?, gpointer?) -> Void) {
            once.handlers.append(
                g_signal_connect_data(
                    clockObject, signal, unsafeBitCast(trampoline, to: GCallback.self),
                    Unmanaged.passRetained(SignalBox(once)).toOpaque(), Signals.releaseBox,
                    after ? G_CONNECT_AFTER : GConnectFlags(0)))
        }
        if phases != nil {
            connect("before-paint", after: false) { _, data in
                let box = Unmanaged<SignalBox<Once>>.fromOpaque(data!).takeUnretainedValue()
                MainActor.assumeIsolated { box.handler.phases?(.began) }
            }
            // After every handler: GTK's own sizing connects to `layout` when a resize is queued.
            connect("layout", after: true) { _, data in
                let box = Unmanaged<SignalBox<Once>>.fromOpaque(data!).takeUnretainedValue()
                MainActor.assumeIsolated { box.handler.phases?(.laidOut) }
            }
        }
        connect("after-paint", after: false) { clock, data in
            // Held here: disconnecting releases GLib's references to the box.
            let box = Unmanaged<SignalBox<Once>>.fromOpaque(data!).takeUnretainedValue()
            for handler in box.handler.handlers where g_signal_handler_is_connected(clock, handler) != 0 {
                g_signal_handler_disconnect(clock, handler)
            }
            MainActor.assumeIsolated { box.handler.body() }
        }
        gtk_widget_queue_draw(widget.widget)
    }

    /// Runs `body` in the next frame `widget`'s window paints, before the painting (what `body`
    /// changes is painted in that frame), without asking for a frame: a change that can wait
    /// rides on the frame something else causes, and costs the window no frame of its own. If no
    /// frame comes within `deadline`, `body` runs then (and its changes ask for their frame).
    /// For a widget not on screen, once the loop is idle.
    static func withNextFrame(of widget: Widget, orAfter deadline: Duration, _ body: @escaping @MainActor () -> Void) {
        guard gtk_widget_get_mapped(widget.widget) != 0, let clock = gtk_widget_get_frame_clock(widget.widget) else {
            whenIdle(body)
            return
        }
        final class Pending {
            var body: (@MainActor () -> Void)?
            var handler: gulong = 0
            /// Held until `body` has run: the window (and its clock) may go meanwhile.
            var clock: GObjectReference?
            init(_ body: @escaping @MainActor () -> Void, clock: GObjectReference) {
                self.body = body
                self.clock = clock
            }
            /// Runs `body` the first time only, and lets go of the clock.
            @MainActor func run() {
                guard let body, let clock else { return }
                self.body = nil
                self.clock = nil
                // A window's destruction may have disposed of its clock's handlers already.
                if g_signal_handler_is_connected(clock.object, handler) != 0 {
                    g_signal_handler_disconnect(clock.object, handler)
                }
                body()
            }
        }
        let pending = Pending(body, clock: GObjectReference(UnsafeMutableRawPointer(clock), .shared))
        let box = SignalBox(pending)
        let trampoline: @convention(c) (gpointer?, gpointer?) -> Void = { _, data in
            let box = Unmanaged<SignalBox<Pending>>.fromOpaque(data!).takeUnretainedValue()
            MainActor.assumeIsolated { box.handler.run() }
        }
        pending.handler = sesame_signal_connect(
            UnsafeMutableRawPointer(clock), "before-paint", unsafeBitCast(trampoline, to: GCallback.self),
            Unmanaged.passRetained(box).toOpaque(), Signals.releaseBox)
        Task { @MainActor in
            try? await Task.sleep(for: deadline)
            pending.run()
        }
    }
}
