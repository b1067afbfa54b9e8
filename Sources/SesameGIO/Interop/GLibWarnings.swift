import CGio
import FoundationEssentials
import Synchronization

/// Records GLib's critical warnings (`Gtk-CRITICAL **: gtk_widget_show: assertion
/// 'GTK_IS_WIDGET (widget)' failed`) while still printing them, so that a test can fail when one
/// is emitted: each means code touched an object in a state it must not be touched in.
public enum GLibWarnings {
    private static let state = Mutex(State())

    private struct State {
        var recorded: [String] = []
        var installed = false
    }

    /// The domains whose critical warnings count: GLib's, GObject's, GIO's, GDK's and GTK's.
    static let domains = ["GLib", "GLib-GObject", "GLib-GIO", "Gdk", "Gtk"]

    /// Starts recording (once per process).
    public static func startRecording() {
        let first = state.withLock { state in
            defer { state.installed = true }
            return !state.installed
        }
        guard first else { return }
        let handler: GLogFunc = { domain, level, message, _ in
            let text = "\(domain.map { String(cString: $0) } ?? "")-CRITICAL: \(message.map { String(cString: $0) } ?? "")"
            GLibWarnings.state.withLock { $0.recorded.append(text) }
            g_log_default_handler(domain, level, message, nil)
        }
        let levels = GLogLevelFlags(rawValue: G_LOG_LEVEL_CRITICAL.rawValue | G_LOG_FLAG_FATAL.rawValue | G_LOG_FLAG_RECURSION.rawValue)
        for domain in domains {
            g_log_set_handler(domain, levels, handler, nil)
        }
    }

    /// Everything recorded since the last call, and forgets it.
    public static func take() -> [String] {
        state.withLock { state in
            defer { state.recorded = [] }
            return state.recorded
        }
    }
}
