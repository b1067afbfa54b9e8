import FoundationEssentials
import SesameCore
import SesameGIO
import SesameSamples
import SesameService

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
        /// `sesame --service`: no window until a program needs one (a question, a sign-in), and
        /// the app keeps running when it closes.
        public var windowOnDemand: Bool

        /// Options; see each property.
        public init(accessFile: URL?, trusted: Set<ProgramIdentity>, windowOnDemand: Bool) {
            self.accessFile = accessFile
            self.trusted = trusted
            self.windowOnDemand = windowOnDemand
        }
    }

    /// Whether a display can be opened (GTK initialised).
    public static func initializeDisplay() -> Bool {
        Application.initializeDisplay()
    }

    /// Runs the app until its window closes (or, serving without a window, until it is ended);
    /// returns the exit status.
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
                let openWindow: @MainActor () -> MainWindow = { @MainActor in
                    if let window = holder.window { return window }
                    let window = MainWindow(application: app, model: model, options: options)
                    holder.window = window
                    if let accountService = holder.bus?.service { window.serve(accountService) }
                    holder.broker?.broker.signer = window.serviceSignIns
                    window.window.onDestroy {
                        holder.window = nil
                        if let onDemand = holder.onDemand, let accountService = holder.bus?.service {
                            // Serving on without a window: the next sign-in opens a new one.
                            accountService.signer = onDemand
                            holder.broker?.broker.signer = onDemand
                        } else {
                            // The app ends with its window: no question outlives it.
                            holder.questions.dismissAll()
                        }
                    }
                    onWindow?(window)
                    return window
                }
                if let service {
                    let accountService = AccountService(
                        store: model.store, accountTypes: model.samples.map(\.accountType), trace: model.trace,
                        access: ProgramAccess(file: service.accessFile), trusted: service.trusted)
                    let bus = AccountBus(service: accountService, trace: model.trace)
                    holder.bus = bus
                    // The desktop's identity broker too, for the programs that ask Microsoft's
                    // (MSAL with the broker on, Edge, Git Credential Manager): their own apps.
                    var hosts: Set<String> = []
                    for sample in model.samples {
                        if let host = await model.store.configuration(forAccountType: sample.accountType)?.authorizationURL.host {
                            hosts.insert(host)
                        }
                    }
                    let broker = BrokerService(
                        service: accountService, store: model.store, trace: model.trace, version: SesameVersion.current, extraHosts: hosts)
                    holder.broker = BrokerBus(broker: broker, callers: bus.callers, trace: model.trace)
                    // Questions are a dialog of their own: over the window when it is on screen,
                    // alone when the service runs without one.
                    accountService.questioner = holder.questions
                    holder.questions.parent = { holder.window?.window.isVisible == true ? holder.window?.window : nil }
                    holder.questions.knownPrograms = { accountService.access.all.map(\.program) }
                    if service.windowOnDemand {
                        let onDemand = WindowOnDemand(open: openWindow)
                        holder.onDemand = onDemand
                        accountService.signer = onDemand
                        broker.signer = onDemand
                        // Served until the session ends: the hold is never released.
                        return
                    }
                }
                _ = openWindow()
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
        var onDemand: WindowOnDemand?
        let questions = AccessDialog()
        var starting = false
    }
}

/// The service's window when it runs without one: opened when a program needs a sign-in.
@MainActor
private final class WindowOnDemand: ServiceSignIn, BrokerSignIn {
    private let open: @MainActor () -> MainWindow

    init(open: @escaping @MainActor () -> MainWindow) { self.open = open }

    func serviceSignIn(accountType: String) async -> Account? {
        await open().serviceSignIns.serviceSignIn(accountType: accountType)
    }

    func brokerSignIn(
        accountType: String, program: ProgramIdentity, parameters: [String: String]
    ) async throws(AccountStoreError)
        -> Account
    {
        try await open().serviceSignIns.brokerSignIn(accountType: accountType, program: program, parameters: parameters)
    }

    func cancelBrokerSignIn() {}
}
