import CGtkWebKit
import SesameGIO

/// GTK's and WebKit's signal signatures (GObject's own are in SesameGIO).
extension Signals {
    /// `gboolean handler(GtkWidget*, GdkEvent*, gpointer)`: delete-event.
    static func event(_ owner: GObjectReference, _ signal: String, _ handler: @escaping @MainActor () -> Bool) {
        let trampoline: @convention(c) (gpointer?, gpointer?, gpointer?) -> gboolean = { _, _, data in
            let box: SignalBox<@MainActor () -> Bool> = Signals.box(data)
            return MainActor.assumeIsolated { box.handler() } ? 1 : 0
        }
        owner.connect(signal, unsafeBitCast(trampoline, to: GCallback.self), SignalBox(handler))
    }

    /// `void handler(GtkWidget*, GdkRectangle*, gpointer)`: size-allocate, with the width and height.
    static func allocation(_ owner: GObjectReference, _ handler: @escaping @MainActor (Int, Int) -> Void) {
        let trampoline: @convention(c) (gpointer?, UnsafeMutablePointer<GdkRectangle>?, gpointer?) -> Void = { _, rectangle, data in
            let box: SignalBox<@MainActor (Int, Int) -> Void> = Signals.box(data)
            guard let rectangle else { return }
            let (width, height) = (Int(rectangle.pointee.width), Int(rectangle.pointee.height))
            MainActor.assumeIsolated { box.handler(width, height) }
        }
        owner.connect("size-allocate", unsafeBitCast(trampoline, to: GCallback.self), SignalBox(handler))
    }

    /// `gboolean handler(GtkWidget*, cairo_t*, gpointer)`: draw.
    static func draw(_ owner: GObjectReference, _ handler: @escaping @MainActor (OpaquePointer) -> Void) {
        let trampoline: @convention(c) (gpointer?, OpaquePointer?, gpointer?) -> gboolean = { _, context, data in
            let box: SignalBox<@MainActor (OpaquePointer) -> Void> = Signals.box(data)
            guard let context else { return 0 }
            // The context crosses no thread: GTK draws on the main thread; the bit pattern carries it in.
            let address = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(context)))
            MainActor.assumeIsolated { box.handler(OpaquePointer(bitPattern: address)!) }
            return 1
        }
        owner.connect("draw", unsafeBitCast(trampoline, to: GCallback.self), SignalBox(handler))
    }

    /// `gboolean handler(GtkWidget*, GdkEventButton*, gpointer)`: button-press-event, with the
    /// pointer's position in the widget (primary button only).
    static func pointer(_ owner: GObjectReference, _ signal: String, _ handler: @escaping @MainActor (Double, Double) -> Bool) {
        let trampoline: @convention(c) (gpointer?, UnsafeMutablePointer<GdkEvent>?, gpointer?) -> gboolean = { _, event, data in
            let box: SignalBox<@MainActor (Double, Double) -> Bool> = Signals.box(data)
            var button: guint = 0
            var x = 0.0
            var y = 0.0
            guard let event, gdk_event_get_button(event, &button) != 0, button == 1, gdk_event_get_coords(event, &x, &y) != 0
            else { return 0 }
            return MainActor.assumeIsolated { box.handler(x, y) } ? 1 : 0
        }
        owner.connect(signal, unsafeBitCast(trampoline, to: GCallback.self), SignalBox(handler))
    }

    /// `gboolean handler(GtkWidget*, GdkEventKey*, gpointer)`: key-press-event, with the key's value.
    static func key(_ owner: GObjectReference, _ signal: String, _ handler: @escaping @MainActor (UInt32) -> Bool) {
        let trampoline: @convention(c) (gpointer?, UnsafeMutablePointer<GdkEvent>?, gpointer?) -> gboolean = { _, event, data in
            let box: SignalBox<@MainActor (UInt32) -> Bool> = Signals.box(data)
            var keyval: guint = 0
            guard let event, gdk_event_get_keyval(event, &keyval) != 0 else { return 0 }
            return MainActor.assumeIsolated { box.handler(keyval) } ? 1 : 0
        }
        owner.connect(signal, unsafeBitCast(trampoline, to: GCallback.self), SignalBox(handler))
    }

    /// `void handler(GObject*, <enum>, gpointer)`: load-changed, edge-reached.
    static func enumerated(_ owner: GObjectReference, _ signal: String, _ handler: @escaping @MainActor (UInt32) -> Void) {
        let trampoline: @convention(c) (gpointer?, UInt32, gpointer?) -> Void = { _, value, data in
            let box: SignalBox<@MainActor (UInt32) -> Void> = Signals.box(data)
            MainActor.assumeIsolated { box.handler(value) }
        }
        owner.connect(signal, unsafeBitCast(trampoline, to: GCallback.self), SignalBox(handler))
    }

    /// `gboolean handler(GObject*, gpointer object, <enum>, gpointer)`: decide-policy.
    static func objectAndEnum(
        _ owner: GObjectReference, _ signal: String, _ handler: @escaping @MainActor (UnsafeMutableRawPointer, UInt32) -> Bool
    ) {
        let trampoline: @convention(c) (gpointer?, gpointer?, UInt32, gpointer?) -> gboolean = { _, object, value, data in
            let box: SignalBox<@MainActor (UnsafeMutableRawPointer, UInt32) -> Bool> = Signals.box(data)
            guard let object else { return 0 }
            return MainActor.assumeIsolated { box.handler(object, value) } ? 1 : 0
        }
        owner.connect(signal, unsafeBitCast(trampoline, to: GCallback.self), SignalBox(handler))
    }

    /// WebKitWebView `load-failed`: `gboolean (WebKitWebView*, WebKitLoadEvent, gchar* uri, GError*, gpointer)`.
    static func loadFailed(_ owner: GObjectReference, _ handler: @escaping @MainActor (String, GLibError) -> Bool) {
        let trampoline:
            @convention(c) (gpointer?, UInt32, UnsafeMutablePointer<gchar>?, UnsafeMutablePointer<GError>?, gpointer?) -> gboolean = {
                _, _, uri, error, data in
                let box: SignalBox<@MainActor (String, GLibError) -> Bool> = Signals.box(data)
                let text = uri.map { String(cString: $0) } ?? ""
                let failure = GLibError(error)
                return MainActor.assumeIsolated { box.handler(text, failure) } ? 1 : 0
            }
        owner.connect("load-failed", unsafeBitCast(trampoline, to: GCallback.self), SignalBox(handler))
    }

    /// WebKitWebView `load-failed-with-tls-errors`: `gboolean (WebKitWebView*, gchar*, GTlsCertificate*, GTlsCertificateFlags, gpointer)`.
    static func tlsFailed(_ owner: GObjectReference, _ handler: @escaping @MainActor (String, UInt32) -> Bool) {
        let trampoline: @convention(c) (gpointer?, UnsafeMutablePointer<gchar>?, gpointer?, UInt32, gpointer?) -> gboolean = {
            _, uri, _, flags, data in
            let box: SignalBox<@MainActor (String, UInt32) -> Bool> = Signals.box(data)
            let text = uri.map { String(cString: $0) } ?? ""
            return MainActor.assumeIsolated { box.handler(text, flags) } ? 1 : 0
        }
        owner.connect("load-failed-with-tls-errors", unsafeBitCast(trampoline, to: GCallback.self), SignalBox(handler))
    }

    /// `void handler(GObject*, gpointer object, gpointer)`: automation-started.
    static func object(_ owner: GObjectReference, _ signal: String, _ handler: @escaping @MainActor (UnsafeMutableRawPointer) -> Void) {
        let trampoline: @convention(c) (gpointer?, gpointer?, gpointer?) -> Void = { _, object, data in
            let box: SignalBox<@MainActor (UnsafeMutableRawPointer) -> Void> = Signals.box(data)
            guard let object else { return }
            MainActor.assumeIsolated { box.handler(object) }
        }
        owner.connect(signal, unsafeBitCast(trampoline, to: GCallback.self), SignalBox(handler))
    }

    /// `gpointer handler(GObject*, gpointer)`: WebKitAutomationSession `create-web-view`.
    static func returningObject(_ owner: GObjectReference, _ signal: String, _ handler: @escaping @MainActor () -> UnsafeMutableRawPointer?)
    {
        let trampoline: @convention(c) (gpointer?, gpointer?) -> gpointer? = { _, data in
            let box: SignalBox<@MainActor () -> UnsafeMutableRawPointer?> = Signals.box(data)
            // The pointer crosses no thread: GLib emits on the main thread; the bit pattern carries it out.
            let address = MainActor.assumeIsolated { box.handler().map { UInt(bitPattern: $0) } ?? 0 }
            return UnsafeMutableRawPointer(bitPattern: address)
        }
        owner.connect(signal, unsafeBitCast(trampoline, to: GCallback.self), SignalBox(handler))
    }
}
