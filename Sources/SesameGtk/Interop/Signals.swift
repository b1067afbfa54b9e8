import CGtkWebKit

/// A Swift closure GLib holds for a signal: retained when connected, released in GLib's destroy
/// notify when the instance goes away or the handler is disconnected.
final class SignalBox<Handler>: @unchecked Sendable {
    let handler: Handler
    init(_ handler: Handler) { self.handler = handler }
}

/// Connecting GLib signals to main-actor closures. Each trampoline is a non-capturing C function
/// with the signal's exact signature; it recovers the box and enters the main actor (GLib emits
/// these signals on the main thread).
@MainActor
enum Signals {
    private static let release: GClosureNotify = { data, _ in
        guard let data else { return }
        Unmanaged<AnyObject>.fromOpaque(data).release()
    }

    private static func connect<Handler>(_ instance: UnsafeMutableRawPointer, _ signal: String, _ box: SignalBox<Handler>, _ trampoline: GCallback) {
        _ = sesame_signal_connect(instance, signal, trampoline, Unmanaged.passRetained(box as AnyObject).toOpaque(), release)
    }

    private static func box<Handler>(_ data: gpointer?) -> SignalBox<Handler> {
        Unmanaged<AnyObject>.fromOpaque(data!).takeUnretainedValue() as! SignalBox<Handler>
    }

    /// `void handler(GObject*, gpointer)`: clicked, activate, search-changed, destroy, changed…
    static func onVoid(_ instance: UnsafeMutableRawPointer, _ signal: String, _ handler: @escaping @MainActor () -> Void) {
        let trampoline: @convention(c) (gpointer?, gpointer?) -> Void = { _, data in
            let box: SignalBox<@MainActor () -> Void> = Signals.box(data)
            MainActor.assumeIsolated { box.handler() }
        }
        connect(instance, signal, SignalBox(handler), unsafeBitCast(trampoline, to: GCallback.self))
    }

    /// `void handler(GObject*, GParamSpec*, gpointer)`: `notify::…`.
    static func onNotify(_ instance: UnsafeMutableRawPointer, _ property: String, _ handler: @escaping @MainActor () -> Void) {
        let trampoline: @convention(c) (gpointer?, gpointer?, gpointer?) -> Void = { _, _, data in
            let box: SignalBox<@MainActor () -> Void> = Signals.box(data)
            MainActor.assumeIsolated { box.handler() }
        }
        connect(instance, "notify::\(property)", SignalBox(handler), unsafeBitCast(trampoline, to: GCallback.self))
    }

    /// `gboolean handler(GtkWidget*, GdkEvent*, gpointer)`: delete-event.
    static func onEvent(_ instance: UnsafeMutableRawPointer, _ signal: String, _ handler: @escaping @MainActor () -> Bool) {
        let trampoline: @convention(c) (gpointer?, gpointer?, gpointer?) -> gboolean = { _, _, data in
            let box: SignalBox<@MainActor () -> Bool> = Signals.box(data)
            return MainActor.assumeIsolated { box.handler() } ? 1 : 0
        }
        connect(instance, signal, SignalBox(handler), unsafeBitCast(trampoline, to: GCallback.self))
    }

    /// WebKitWebView `decide-policy`.
    static func onDecidePolicy(
        _ webView: UnsafeMutablePointer<WebKitWebView>,
        _ handler: @escaping @MainActor (UnsafeMutablePointer<WebKitPolicyDecision>, WebKitPolicyDecisionType) -> Bool
    ) {
        let trampoline: @convention(c) (UnsafeMutablePointer<WebKitWebView>?, UnsafeMutablePointer<WebKitPolicyDecision>?, WebKitPolicyDecisionType, gpointer?) -> gboolean = { _, decision, type, data in
            let box: SignalBox<@MainActor (UnsafeMutablePointer<WebKitPolicyDecision>, WebKitPolicyDecisionType) -> Bool> = Signals.box(data)
            guard let decision else { return 0 }
            return MainActor.assumeIsolated { box.handler(decision, type) } ? 1 : 0
        }
        connect(webView, "decide-policy", SignalBox(handler), unsafeBitCast(trampoline, to: GCallback.self))
    }

    /// WebKitWebView `load-changed`.
    static func onLoadChanged(_ webView: UnsafeMutablePointer<WebKitWebView>, _ handler: @escaping @MainActor (WebKitLoadEvent) -> Void) {
        let trampoline: @convention(c) (UnsafeMutablePointer<WebKitWebView>?, WebKitLoadEvent, gpointer?) -> Void = { _, event, data in
            let box: SignalBox<@MainActor (WebKitLoadEvent) -> Void> = Signals.box(data)
            MainActor.assumeIsolated { box.handler(event) }
        }
        connect(webView, "load-changed", SignalBox(handler), unsafeBitCast(trampoline, to: GCallback.self))
    }

    /// WebKitWebView `load-failed`: the failing URI and the error.
    static func onLoadFailed(_ webView: UnsafeMutablePointer<WebKitWebView>, _ handler: @escaping @MainActor (String, GLibError) -> Bool) {
        let trampoline: @convention(c) (UnsafeMutablePointer<WebKitWebView>?, WebKitLoadEvent, UnsafeMutablePointer<gchar>?, UnsafeMutablePointer<GError>?, gpointer?) -> gboolean = { _, _, uri, error, data in
            let box: SignalBox<@MainActor (String, GLibError) -> Bool> = Signals.box(data)
            let text = uri.map { String(cString: $0) } ?? ""
            let failure = GLibError(error)
            return MainActor.assumeIsolated { box.handler(text, failure) } ? 1 : 0
        }
        connect(webView, "load-failed", SignalBox(handler), unsafeBitCast(trampoline, to: GCallback.self))
    }

    /// WebKitWebView `load-failed-with-tls-errors`: the URI and the certificate problems.
    static func onTLSFailed(_ webView: UnsafeMutablePointer<WebKitWebView>, _ handler: @escaping @MainActor (String, GTlsCertificateFlags) -> Bool) {
        let trampoline: @convention(c) (UnsafeMutablePointer<WebKitWebView>?, UnsafeMutablePointer<gchar>?, OpaquePointer?, GTlsCertificateFlags, gpointer?) -> gboolean = { _, uri, _, flags, data in
            let box: SignalBox<@MainActor (String, GTlsCertificateFlags) -> Bool> = Signals.box(data)
            let text = uri.map { String(cString: $0) } ?? ""
            return MainActor.assumeIsolated { box.handler(text, flags) } ? 1 : 0
        }
        connect(webView, "load-failed-with-tls-errors", SignalBox(handler), unsafeBitCast(trampoline, to: GCallback.self))
    }

    /// WebKitWebContext `automation-started`: WebKitWebDriver opened a session.
    static func onAutomationStarted(_ context: UnsafeMutablePointer<WebKitWebContext>, _ handler: @escaping @MainActor (UnsafeMutablePointer<WebKitAutomationSession>) -> Void) {
        let trampoline: @convention(c) (UnsafeMutablePointer<WebKitWebContext>?, UnsafeMutablePointer<WebKitAutomationSession>?, gpointer?) -> Void = { _, session, data in
            let box: SignalBox<@MainActor (UnsafeMutablePointer<WebKitAutomationSession>) -> Void> = Signals.box(data)
            guard let session else { return }
            MainActor.assumeIsolated { box.handler(session) }
        }
        connect(context, "automation-started", SignalBox(handler), unsafeBitCast(trampoline, to: GCallback.self))
    }

    /// WebKitAutomationSession `create-web-view`: the view the session drives.
    static func onCreateWebView(_ session: UnsafeMutablePointer<WebKitAutomationSession>, _ handler: @escaping @MainActor () -> UnsafeMutablePointer<WebKitWebView>) {
        let trampoline: @convention(c) (UnsafeMutablePointer<WebKitAutomationSession>?, gpointer?) -> UnsafeMutablePointer<WebKitWebView>? = { _, data in
            let box: SignalBox<@MainActor () -> UnsafeMutablePointer<WebKitWebView>> = Signals.box(data)
            // The pointer crosses no thread: GLib emits on the main thread; the bit pattern carries it out.
            let address = MainActor.assumeIsolated { UInt(bitPattern: box.handler()) }
            return UnsafeMutablePointer(bitPattern: address)
        }
        connect(session, "create-web-view", SignalBox(handler), unsafeBitCast(trampoline, to: GCallback.self))
    }

    /// GtkScrolledWindow `edge-reached`.
    static func onEdgeReached(_ scrolled: UnsafeMutablePointer<GtkScrolledWindow>, _ handler: @escaping @MainActor (GtkPositionType) -> Void) {
        let trampoline: @convention(c) (UnsafeMutablePointer<GtkScrolledWindow>?, GtkPositionType, gpointer?) -> Void = { _, position, data in
            let box: SignalBox<@MainActor (GtkPositionType) -> Void> = Signals.box(data)
            MainActor.assumeIsolated { box.handler(position) }
        }
        connect(scrolled, "edge-reached", SignalBox(handler), unsafeBitCast(trampoline, to: GCallback.self))
    }
}

/// A GLib `GError`, converted once at the boundary.
public struct GLibError: Error, CustomStringConvertible, Sendable {
    public let domain: String
    public let code: Int
    public let message: String

    init(_ error: UnsafeMutablePointer<GError>?) {
        guard let error else {
            domain = ""
            code = 0
            message = "unknown error"
            return
        }
        domain = String(cString: g_quark_to_string(error.pointee.domain))
        code = Int(error.pointee.code)
        message = error.pointee.message.map { String(cString: $0) } ?? ""
    }

    public var description: String { message }
}
