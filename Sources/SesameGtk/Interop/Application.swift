import CGtkWebKit
import SesameGIO

/// The GtkApplication: the GLib main loop, the desktop's idea of "the app".
@MainActor
public final class Application: GObjectReference {
    /// An application; several may run at once. With a reverse-DNS `id` it registers on the
    /// session bus (one round trip before it starts); without one it does not.
    public init(id: String?) {
        super.init(gtk_application_new(id, G_APPLICATION_NON_UNIQUE), .new)
    }

    private var application: UnsafeMutablePointer<GApplication> { sesame_g_application(object) }

    /// Opens the display (GTK's initialisation); false when there is none. `programName` is the
    /// name the desktop knows the windows by (their WM_CLASS, the desktop entry's
    /// `StartupWMClass`): GLib would take the executable's, `sesame-window`.
    public static func initializeDisplay(programName: String) -> Bool {
        g_set_prgname(programName)
        return gtk_init_check(nil, nil) != 0
    }

    /// Runs `action` when the app starts (and when it is started again).
    public func onActivate(_ action: @escaping @MainActor () -> Void) { Signals.void(self, "activate", action) }

    /// Keeps the app running while there is no window (setting up).
    public func hold() { g_application_hold(application) }
    /// Lets the app end once its last window closes.
    public func release() { g_application_release(application) }

    /// Ends the app: every window closes and `run()` returns.
    public func quit() { g_application_quit(application) }

    /// Runs the main loop until the app ends; returns the exit status.
    public func run() -> Int32 { g_application_run(application, 0, nil) }
}
