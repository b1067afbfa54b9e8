import ArgumentParser
import FoundationEssentials
import SesameCommandLine
import SesameCore
import SesameGIO
import SesameGtk
import SesameKeyring
import SesameSamples
import SesameService
import SesameSystem
import SesameWindowModel

/// `sesame-window`: Sesame's window, the one program that loads GTK and WebKit. `sesame` starts
/// it with its own arguments when a window is wanted (its default command); `sesame-service` starts
/// it as the face that asks the user (`--service-face`). It takes the window's options only.
@main
struct SesameWindowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sesame window", abstract: "Sesame's window (`sesame` starts it).", version: SesameVersion.current)

    @OptionGroup var options: CommonOptions
    @OptionGroup var window: WindowCommandOptions

    /// `sesame window …`, as `sesame` passes it on: the first word is the command's name.
    static func main() {
        Termination.installForCommand()
        var arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "window" { arguments.removeFirst() }
        main(arguments)
    }

    func validate() throws { try window.validate(emulator: options.emulator) }

    func run() throws {
        if window.service { try ServiceProgram.exec(options: options, traceEvents: window.traceEvents) }
        if let replay = window.replay { try runReplay(replay) }
        // SIGTERM (the desktop logging out), Ctrl+C, SIGHUP: the window ends at once, but not
        // between a refresh's request and the store of its answer.
        Termination.shared.install { _, _ in Durability.shared.waitUntilFlushed() }
        var options = self.options
        let (demo, sample, serviceFace) = (window.demo, window.sample, window.serviceFace)
        let demoEmulator =
            try demo ? MainActor.assumeIsolated { try DemoEmulator(environment: ProcessInfo.processInfo.environment) } : nil
        defer { MainActor.assumeIsolated { demoEmulator?.stop() } }
        if let demoEmulator {
            options.emulator = MainActor.assumeIsolated { demoEmulator.base.absoluteString }
            Posix.writeStandardError(String(formatting: DemoEmulator.hint, options.emulator ?? ""))
        }
        let files = try options.loadSettings()
        let profiles = files.map(\.settings)
        let traceFile = window.traceEvents.map { URL(fileURLWithPath: $0) }
        let initial = sample.flatMap(Sample.Kind.init(rawValue:))
        let automation = window.automationMode || window.automation
        options.bootstrapLogging()
        Localization.setUp(
            executable: RunningExecutable.url,
            sourceRoot: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "../..").standardizedFileURL)
        let status = MainActor.assumeIsolated { () -> Int32 in
            guard SesameApplication.initializeDisplay() else {
                let message =
                    "sesame: no display to open a window on (set DISPLAY or WAYLAND_DISPLAY, or run under xvfb-run); "
                    + "`sesame accounts`, `sesame token` and `sesame signout` work without one.\n"
                Posix.writeStandardError(message)
                return 1
            }
            let storage: any TokenStorage
            do {
                let chosen = try SecretServiceTokenStorage.chosen()
                storage = chosen.storage
                if let notice = chosen.notice { Posix.writeStandardError("sesame: note: \(notice)\n") }
            } catch {
                Posix.writeStandardError("sesame: \(error)\n")
                return 1
            }
            let trace: FlowTrace
            do {
                trace = try FlowTrace(file: traceFile)
            } catch {
                Posix.writeStandardError("sesame: cannot write --trace-events \(DisplayText.escaped(traceFile?.path ?? "")): \(error)\n")
                return 1
            }
            let webData = FileTokenStorage.defaultDirectory(environment: ProcessInfo.processInfo.environment).appending(
                path: "web-data")
            let options = MainWindow.Options(
                webDataDirectory: webData, automation: automation, initialSample: initial,
                filesStorage: (storage as? FileTokenStorage)?.directory, reportStalls: traceFile != nil,
                settingsWarnings: files.flatMap(\.warnings),
                stateFile: WindowState.defaultFile(environment: ProcessInfo.processInfo.environment),
                documentation: BundledResources.userGuide(),
                tryDemo: demo || options.emulator != nil || automation ? nil : Self.restartAsDemo(sample: sample))
            let environment = ProcessInfo.processInfo.environment
            let serving = SesameApplication.ServiceOptions(
                accessFile: ProgramAccess.defaultFile(environment: environment),
                trusted: SesamePrograms.own())
            let makeModel: @MainActor () async -> AppModel = { @MainActor in
                let transport = TracingTransport(base: CommonOptions.desktopTransport(), trace: trace)
                let model = await AppModel(
                    store: AccountStore(
                        storage: storage, transport: transport, device: DeviceIdentity.desktop(for: storage, transport: transport)),
                    settings: profiles, trace: trace, transport: transport)
                if storage is SecretServiceTokenStorage {
                    // The keyring's own prompt, waited for off the main loop.
                    model.unlockKeyring = { await Task.detached { SecretServiceTokenStorage.unlock() }.value }
                }
                return model
            }
            if serviceFace { return SesameApplication.runFace(makeModel: makeModel, options: options) }
            return SesameApplication.run(makeModel: makeModel, options: options, service: serving)
        }
        // What the window stored is on the disk before the process ends.
        Durability.shared.waitUntilFlushed()
        if status != 0 { throw ExitCode(status) }
    }

    /// `--replay FILE`: the saved flow in the inspector; no store, no keyring, no network.
    private func runReplay(_ file: String) throws -> Never {
        let events: [FlowTrace.Event]
        do { events = try FlowReplay.events(fromFile: file) } catch {
            Posix.writeStandardError("sesame: \(error)\n")
            throw ExitCode(2)
        }
        Localization.setUp(
            executable: RunningExecutable.url,
            sourceRoot: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "../..").standardizedFileURL)
        let status = MainActor.assumeIsolated { () -> Int32 in
            guard SesameApplication.initializeDisplay() else {
                Posix.writeStandardError(
                    "sesame: no display to show the flow on (set DISPLAY or WAYLAND_DISPLAY, or run under xvfb-run).\n")
                return 1
            }
            return SesameApplication.runReplay(events, file: file)
        }
        throw ExitCode(status)
    }

    /// "Try the Demo Instead": this process becomes `sesame --demo` on the same sample (the
    /// window closes as the process is replaced, and the demo's opens).
    private static func restartAsDemo(sample: String?) -> @MainActor () -> Void {
        {
            guard let program = RunningExecutable.url?.path else { return }
            let failure = ProgramReplacement.exec(program, ["sesame", "--demo"] + (sample.map { ["--sample", $0] } ?? []))
            Posix.writeStandardError("sesame: the demo could not be started: \(failure)\n")
        }
    }
}
