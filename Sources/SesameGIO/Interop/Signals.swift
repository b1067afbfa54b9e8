import CGio

/// A Swift closure GLib holds for a signal: retained when connected, released in GLib's destroy
/// notify when the handler is disconnected or the instance finalized.
package final class SignalBox<Handler>: @unchecked Sendable {
    package let handler: Handler
    package init(_ handler: Handler) { self.handler = handler }
}

/// Trampolines from GLib signals to main-actor closures. Each is a non-capturing C function with
/// the signal's exact signature; it recovers its box and enters the main actor (GLib emits these
/// signals on the main thread). GObject's own signatures are here; GTK's and WebKit's are
/// SesameGtk's extension of this type. Add a new signature to one of the two, never elsewhere.
@MainActor
package enum Signals {
    package static let releaseBox: GClosureNotify = { data, _ in
        guard let data else { return }
        Unmanaged<AnyObject>.fromOpaque(data).release()
    }

    package static func box<Handler>(_ data: gpointer?) -> SignalBox<Handler> {
        Unmanaged<AnyObject>.fromOpaque(data!).takeUnretainedValue() as! SignalBox<Handler>
    }

    /// `void handler(GObject*, gpointer)`: clicked, activate, search-changed, changed…
    package static func void(_ owner: GObjectReference, _ signal: String, _ handler: @escaping @MainActor () -> Void) {
        let trampoline: @convention(c) (gpointer?, gpointer?) -> Void = { _, data in
            let box: SignalBox<@MainActor () -> Void> = Signals.box(data)
            MainActor.assumeIsolated { box.handler() }
        }
        owner.connect(signal, unsafeBitCast(trampoline, to: GCallback.self), SignalBox(handler))
    }

    /// `void handler(GObject*, GParamSpec*, gpointer)`: `notify::…`.
    package static func notify(_ owner: GObjectReference, _ property: String, _ handler: @escaping @MainActor () -> Void) {
        let trampoline: @convention(c) (gpointer?, gpointer?, gpointer?) -> Void = { _, _, data in
            let box: SignalBox<@MainActor () -> Void> = Signals.box(data)
            MainActor.assumeIsolated { box.handler() }
        }
        owner.connect("notify::\(property)", unsafeBitCast(trampoline, to: GCallback.self), SignalBox(handler))
    }

    /// `void handler(GObject*, gboolean, gpointer)`: GNetworkMonitor's network-changed.
    package static func flag(_ owner: GObjectReference, _ signal: String, _ handler: @escaping @MainActor (Bool) -> Void) {
        let trampoline: @convention(c) (gpointer?, gboolean, gpointer?) -> Void = { _, value, data in
            let box: SignalBox<@MainActor (Bool) -> Void> = Signals.box(data)
            MainActor.assumeIsolated { box.handler(value != 0) }
        }
        owner.connect(signal, unsafeBitCast(trampoline, to: GCallback.self), SignalBox(handler))
    }

}
