import Foundation
import SesameCore
import SesameSamples

/// The desktop app's entry point: the GtkApplication on the GLib main loop, the main-actor
/// bridge, and the window once the store is configured.
@MainActor
public enum SesameApplication {
    /// Whether a display can be opened (GTK initialised).
    public static func initializeDisplay() -> Bool {
        Application.initializeDisplay()
    }

    /// Runs the app until its window closes; returns the exit status.
    /// - Parameter onWindow: called once the window is up (`make demo` plays its tour there).
    public static func run(
        makeModel: @escaping @MainActor () async -> AppModel, options: MainWindow.Options,
        onWindow: (@MainActor (MainWindow) -> Void)? = nil
    ) -> Int32 {
        MainLoopBridge.install()
        // No id: several windows may run at once, and nothing is offered on the session bus, so
        // registering there would only delay the window (the desktop file matches the window by
        // its WM class, `sesame`).
        let app = Application(id: nil)
        final class Holder {
            var window: MainWindow?
            var starting = false
        }
        let holder = Holder()
        app.onActivate {
            guard holder.window == nil, !holder.starting else { return }
            holder.starting = true
            app.hold()
            Task { @MainActor in
                let model = await makeModel()
                let window = MainWindow(application: app, model: model, options: options)
                holder.window = window
                app.release()
                onWindow?(window)
            }
        }
        let status = app.run()
        withExtendedLifetime(holder) {}
        return status
    }
}
