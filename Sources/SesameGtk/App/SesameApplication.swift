import FoundationEssentials
import SesameCore
import SesameGIO
import SesameSamples
import SesameService
import SesameSystem
import SesameWindowModel

/// The desktop app's entry point: the GtkApplication on the GLib main loop, the main-actor
/// bridge, the window once the store is configured, and the account service on the session bus.
@MainActor
public enum SesameApplication {
    /// How the app serves other programs on the session bus (`org.sesame.Sesame`).
    public struct ServiceOptions: Sendable {
        /// Where the user's decisions about programs are kept (nil: in memory).
        public var accessFile: URL?
        /// Programs that are never asked about: Sesame's own executable.
        public var trusted: Set<ProgramIdentity>

        /// Options; see each property.
        public init(accessFile: URL?, trusted: Set<ProgramIdentity>) {
            self.accessFile = accessFile
            self.trusted = trusted
        }
    }

    /// Whether a display can be opened (GTK initialised). The windows are `sesame`'s to the
    /// desktop (WM_CLASS, the desktop entry's `StartupWMClass`), whichever program shows them.
    public static func initializeDisplay() -> Bool {
        Application.initializeDisplay(programName: "sesame")
    }

    /// Runs the app until its window closes; returns the exit status. (Serving without a window
    /// is `sesame-service`'s, with ``runFace(makeModel:options:)`` as its window.)
    /// - Parameter service: how to serve the bus; nil: not at all.
    /// - Parameter onWindow: called once the window is up (`make demo` plays its tour there).
    public static func run(
        makeModel: @escaping @MainActor () async -> AppModel, options: MainWindow.Options, service: ServiceOptions? = nil,
        onWindow: (@MainActor (MainWindow) -> Void)? = nil
    ) -> Int32 {
        MainLoopBridge.install()
        // No id: several windows may run at once, and registering the application on the bus
        // would delay the window by a round trip; the account service owns its own name
        // asynchronously (the desktop file matches the window by its WM class, `sesame`).
        let app = Application(id: nil)
        let holder = Holder()
        app.onActivate {
            guard holder.model == nil, !holder.starting else { return }
            holder.starting = true
            app.hold()
            Task { @MainActor in
                let model = await makeModel()
                holder.model = model
                // The window first (the launch is its sign-in page), then the service's names:
                // nothing a program asks for can be answered before the window exists anyway.
                let window = MainWindow(application: app, model: model, options: options)
                holder.window = window
                window.window.onDestroy {
                    holder.window = nil
                    // The app ends with its window: no question outlives it.
                    holder.questions.dismissAll()
                }
                onWindow?(window)
                if let service {
                    let accountService = AccountService(
                        store: model.store, accountTypes: model.samples.map(\.accountType), trace: model.trace,
                        access: ProgramAccess(file: service.accessFile), trusted: service.trusted)
                    let bus = AccountBus(service: accountService, trace: model.trace)
                    holder.bus = bus
                    // The desktop's identity broker too, for the programs that ask Microsoft's
                    // (MSAL with the broker on, Edge, Git Credential Manager): their own apps.
                    let hosts = await BrokerService.settingsHosts(of: model.store, accountTypes: model.samples.map(\.accountType))
                    let broker = BrokerService(
                        service: accountService, store: model.store, trace: model.trace, version: SesameVersion.current, extraHosts: hosts,
                        callLog: BrokerCallLog.defaultFile(environment: ProcessInfo.processInfo.environment))
                    holder.broker = BrokerBus(broker: broker, callers: bus.callers, trace: model.trace)
                    // Questions are a dialog of their own, over the window when it is on screen.
                    accountService.questioner = holder.questions
                    holder.questions.parent = { holder.window?.window.isVisible == true ? holder.window?.window : nil }
                    holder.questions.knownPrograms = { accountService.access.all.map(\.program) }
                    window.serve(accountService)
                    holder.broker?.broker.signer = window.serviceSignIns
                }
                app.release()
            }
        }
        let status = app.run()
        holder.bus?.stop()
        holder.broker?.stop()
        withExtendedLifetime(holder) {}
        return status
    }

    @MainActor
    private final class Holder {
        var model: AppModel?
        var window: MainWindow?
        var bus: AccountBus?
        var broker: BrokerBus?
        let questions = AccessDialog()
        var starting = false
    }
}
