import CGtkWebKit
import Foundation
import SesameCore

/// The desktop app's entry point: GtkApplication on the GLib main loop, the main-actor bridge,
/// and the window once the store is configured.
@MainActor
public enum SesameApplication {
    /// Whether a display can be opened (GTK initialised).
    public static func initializeDisplay() -> Bool {
        gtk_init_check(nil, nil) != 0
    }

    /// Runs the app until its window closes; returns the exit status.
    public static func run(makeModel: @escaping @MainActor () async -> AppModel, initialSample: AppModel.Sample.Kind?) -> Int32 {
        MainLoopBridge.install()
        let app = sesame_application_new("org.sesame.Sesame")!
        final class Holder { var window: MainWindow?; var starting = false }
        let holder = Holder()
        Signals.onVoid(app, "activate") {
            guard holder.window == nil, !holder.starting else { return }
            holder.starting = true
            g_application_hold(sesame_g_application(app))
            Task { @MainActor in
                let model = await makeModel()
                holder.window = MainWindow(application: app, model: model, initialSample: initialSample)
                g_application_release(sesame_g_application(app))
            }
        }
        let status = g_application_run(sesame_g_application(app), 0, nil)
        withExtendedLifetime(holder) {}
        return status
    }
}
