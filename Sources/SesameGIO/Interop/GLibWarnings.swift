import CGio
import Foundation

/// Records GLib's critical warnings (`Gtk-CRITICAL **: gtk_widget_show: assertion
/// 'GTK_IS_WIDGET (widget)' failed`) while still printing them, so that a test can fail when one
/// is emitted: each means code touched an object in a state it must not be touched in.
public enum GLibWarnings {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var recorded: [String] = []
    nonisolated(unsafe) private static var installed = false

    /// The domains whose critical warnings count: GLib's, GObject's, GIO's, GDK's and GTK's.
    static let domains = ["GLib", "GLib-GObject", "GLib-GIO", "Gdk", "Gtk"]

    /// Starts recording (once per process).
    public static func startRecording() {
        lock.lock()
        defer { lock.unlock() }
        guard !installed else { return }
        installed = true
        let handler: GLogFunc = { domain, level, message, _ in
            let text = "\(domain.map { String(cString: $0) } ?? "")-CRITICAL: \(message.map { String(cString: $0) } ?? "")"
            GLibWarnings.lock.withLock { GLibWarnings.recorded.append(text) }
            g_log_default_handler(domain, level, message, nil)
        }
        let levels = GLogLevelFlags(rawValue: G_LOG_LEVEL_CRITICAL.rawValue | G_LOG_FLAG_FATAL.rawValue | G_LOG_FLAG_RECURSION.rawValue)
        for domain in domains {
            g_log_set_handler(domain, levels, handler, nil)
        }
    }

    /// Everything recorded since the last call, and forgets it.
    public static func take() -> [String] {
        lock.withLock {
            defer { recorded = [] }
            return recorded
        }
    }
}
