import ArgumentParser
import FoundationEssentials
import SesameCommandLine
import SesameCore
import SesameGIO
import SesameKeyring
import SesameService
import SesameSystem

/// `sesame-service`: Sesame's account service (`org.sesame.Sesame`) and the desktop's identity
/// broker (`com.microsoft.identity.broker1`, when nobody else owns it), as D-Bus activation starts
/// them for the session: GLib's main loop, the store, the bus — no GTK and no WebKit, which load
/// only in the window it starts when the user must be asked or sign in (`sesame --service-face`,
/// ``FaceClient``). `sesame --service` runs this program.
@main
struct SesameServiceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sesame-service",
        abstract: "Serve Sesame's accounts and the identity broker on the session bus (D-Bus activation starts this).",
        version: SesameVersion.current)

    @OptionGroup var options: CommonOptions

    @Option(name: .customLong("trace-events"), help: ArgumentHelp("Write the flow as JSON lines to FILE.", valueName: "FILE"))
    var traceEvents: String?

    func run() throws {
        // The session ending (SIGTERM), Ctrl+C in a terminal: at once, but never between a
        // refresh's request and the store of its answer.
        Termination.shared.install { signal, _ in
            Posix.writeStandardError("sesame-service: ending (\(Termination.name(of: signal))).\n")
            // An answer given just before (a refresh the signal waited for) reaches its caller.
            DBusService.flushSessionBus()
            Durability.shared.waitUntilFlushed()
        }
        // What it is for is the session bus: without one, say so rather than end in silence.
        guard MainActor.assumeIsolated({ DBusClient() != nil }) else {
            Posix.writeStandardError(
                "sesame-service: there is no session bus here (DBUS_SESSION_BUS_ADDRESS is unset, or nothing answers at it). "
                    + "The account service serves the programs of a desktop session on its bus: run it in your desktop session, "
                    + "where D-Bus starts it by itself.\n")
            throw ExitCode(Self.noSessionBus)
        }
        options.bootstrapLogging()
        let profiles = try options.profiles()
        let storage: any TokenStorage
        do {
            let chosen = try SecretServiceTokenStorage.chosen()
            storage = chosen.storage
            if let notice = chosen.notice { Posix.writeStandardError("sesame-service: note: \(notice)\n") }
        } catch {
            throw ValidationError("\(error)")
        }
        guard let window = SesamePrograms.locate(SesamePrograms.window) else {
            throw ValidationError("Sesame's window program: \(SesamePrograms.notFound(SesamePrograms.window)).")
        }
        // The window it starts reads the same settings and writes its own trace beside this one.
        var faceArguments = [window.path, FaceProtocol.flag]
        faceArguments += options.settingsFiles.flatMap { ["--settings", URL(fileURLWithPath: $0).standardizedFileURL.path] }
        if let emulator = options.emulator { faceArguments += ["--emulator", emulator] }
        if let signInWith = options.signInWith { faceArguments += ["--sign-in-with", signInWith] }
        if let traceEvents { faceArguments += ["--trace-events", traceEvents + ".window"] }
        let traceFile = traceEvents.map { URL(fileURLWithPath: $0) }
        MainActor.assumeIsolated {
            MainLoopBridge.install()
            let service = Served()
            Task { @MainActor in
                do {
                    try await service.start(
                        profiles: profiles, storage: storage, traceFile: traceFile, faceArguments: faceArguments,
                        trusted: SesamePrograms.own())
                } catch {
                    Posix.writeStandardError("sesame-service: \(error)\n")
                    MainLoop.quit()
                }
            }
            // Served until the session ends (its bus goes, or SIGTERM).
            MainLoop.run()
            withExtendedLifetime(service) {}
        }
        Durability.shared.waitUntilFlushed()
    }

    /// The exit status without a session bus (the commands' "no keyring here" status:
    /// docs/COMMAND-LINE.md, "Exit status").
    static let noSessionBus: Int32 = 4
}

/// What the service holds while it runs.
@MainActor
final class Served {
    private var store: AccountStore?
    private var following: Task<Void, Never>?
    private var accounts: AccountBus?
    private var broker: BrokerBus?
    private var face: FaceClient?

    func start(
        profiles: [SampleSettings], storage: any TokenStorage, traceFile: URL?, faceArguments: [String], trusted: Set<ProgramIdentity>
    ) async throws {
        let trace = try FlowTrace(file: traceFile)
        let transport = TracingTransport(base: CommonOptions.desktopTransport(), trace: trace)
        let store = AccountStore(storage: storage, transport: transport, device: DeviceIdentity.desktop(for: storage, transport: transport))
        await store.setConfigurations(Dictionary(profiles.map { ($0.accountType, $0.accountConfiguration) }) { _, last in last })
        self.store = store
        following = await trace.follow(store)
        let accountTypes = profiles.map(\.accountType)
        let environment = ProcessInfo.processInfo.environment
        let service = AccountService(
            store: store, accountTypes: accountTypes, trace: trace,
            access: ProgramAccess(file: ProgramAccess.defaultFile(environment: environment)), trusted: trusted)
        let face = FaceClient(arguments: faceArguments, store: store, trace: trace)
        self.face = face
        service.questioner = face
        service.signer = face
        let bus = AccountBus(service: service, trace: trace)
        // Another Sesame serves the session, or the session ended (its bus went): nothing to do.
        bus.onNameLost = { MainLoop.quit() }
        accounts = bus
        let hosts = await BrokerService.settingsHosts(of: store, accountTypes: accountTypes)
        let brokerService = BrokerService(
            service: service, store: store, trace: trace, version: SesameVersion.current, extraHosts: hosts,
            callLog: BrokerCallLog.defaultFile(environment: environment))
        brokerService.signer = face
        broker = BrokerBus(broker: brokerService, callers: bus.callers, trace: trace)
    }
}
