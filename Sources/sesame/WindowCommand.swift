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

extension SesameCommand {
    /// `sesame [--emulator URL] [--settings FILE]… [--sample directory|tasks|me] [--trace-events FILE]`:
    /// the window.
    struct Window: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "window", abstract: "Open the window (the default).", shouldDisplay: false)

        @OptionGroup var options: CommonOptions

        @Option(help: "The sample to open: directory, tasks, me or openid.")
        var sample: String?

        @Option(name: .customLong("trace-events"), help: ArgumentHelp("Write the flow as JSON lines to FILE.", valueName: "FILE"))
        var traceEvents: String?

        @Flag(name: .customLong("automation-mode"), help: "Let WebKitWebDriver drive the sign-in view (sesame as a WebDriver browser).")
        var automationMode = false

        @Flag(
            name: .customLong("service"),
            help:
                "Serve other programs on the session bus (org.sesame.Sesame and the identity broker) without a window until one is needed: runs sesame-service, which D-Bus activation starts."
        )
        var service = false

        /// The window `sesame-service` starts when the user must be asked or sign in.
        @Flag(name: .customLong("service-face"), help: .hidden)
        var serviceFace = false

        @Flag(
            help:
                "Try Sesame with no cloud: start the identity emulator installed with it and sign in there (alex@contoso.onmicrosoft.com, password Passw0rd!)."
        )
        var demo = false

        @Option(
            name: .customLong("replay"),
            help: ArgumentHelp(
                "Show a saved flow in the flow inspector, with no network (a file the inspector's Save the Flow… or --trace-events wrote).",
                valueName: "FILE"))
        var replay: String?

        /// WebKitWebDriver starts its browser with `--automation`; accepted as a synonym.
        @Flag(name: .customLong("automation"), help: .hidden)
        var automation = false

        func validate() throws {
            if let sample, Sample.Kind(rawValue: sample) == nil {
                throw ValidationError("--sample must be directory, tasks, me or openid, not '\(sample)'.")
            }
            if demo, options.emulator != nil { throw ValidationError("--demo starts its own emulator: leave out --emulator.") }
            if demo, service || serviceFace { throw ValidationError("--demo opens the window: leave out --service.") }
            if replay != nil, demo || service || serviceFace || options.emulator != nil {
                throw ValidationError("--replay shows a saved flow and signs nobody in: leave out --demo, --service and --emulator.")
            }
        }

        func run() throws {
            if service { try runService() }
            if let replay { try runReplay(replay) }
            // SIGTERM (the desktop logging out), Ctrl+C, SIGHUP: the window ends at once, but not
            // between a refresh's request and the store of its answer.
            Termination.shared.install { _, _ in Durability.shared.waitUntilFlushed() }
            var options = self.options
            let demoEmulator =
                try demo ? MainActor.assumeIsolated { try DemoEmulator(environment: ProcessInfo.processInfo.environment) } : nil
            defer { MainActor.assumeIsolated { demoEmulator?.stop() } }
            if let demoEmulator {
                options.emulator = MainActor.assumeIsolated { demoEmulator.base.absoluteString }
                Posix.writeStandardError(String(formatting: DemoEmulator.hint, options.emulator ?? ""))
            }
            let files = try options.loadSettings()
            let profiles = files.map(\.settings)
            let traceFile = traceEvents.map { URL(fileURLWithPath: $0) }
            let initial = sample.flatMap(Sample.Kind.init(rawValue:))
            let automation = automationMode || self.automation
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
                    Posix.writeStandardError("sesame: cannot write --trace-events \(traceFile?.path ?? ""): \(error)\n")
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
                    trusted: Set([RunningExecutable.url.flatMap { ProgramIdentity.executable($0.path) }].compactMap { $0 }))
                let makeModel: @MainActor () async -> AppModel = { @MainActor in
                    let transport = TracingTransport(base: SesameCommand.desktopTransport(), trace: trace)
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

        /// `--service`: the account service is `sesame-service`, which loads no GTK: this process
        /// becomes it, with the same settings options.
        private func runService() throws {
            let folder = RunningExecutable.url?.deletingLastPathComponent()
            let candidates = [folder?.appending(path: "sesame-service"), folder?.appending(path: "../libexec/sesame/sesame-service")]
            guard
                let program = candidates.compactMap({ $0?.standardizedFileURL }).first(where: {
                    FileManager.default.isExecutableFile(atPath: $0.path)
                })
            else {
                throw ValidationError(
                    "sesame-service was not found beside \(RunningExecutable.url?.path ?? "sesame") or in ../libexec/sesame.")
            }
            var arguments = ["sesame-service"]
            arguments += options.settingsFiles.flatMap { ["--settings", $0] }
            if let emulator = options.emulator { arguments += ["--emulator", emulator] }
            if let signInWith = options.signInWith { arguments += ["--sign-in-with", signInWith] }
            if options.verbose { arguments.append("--verbose") }
            if let traceEvents { arguments += ["--trace-events", traceEvents] }
            let failure = ProgramReplacement.exec(program.path, arguments)
            throw ValidationError("sesame-service could not be started: \(failure)")
        }
    }
}
