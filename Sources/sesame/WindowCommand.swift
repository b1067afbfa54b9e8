import ArgumentParser
import FoundationEssentials
import SesameCore
import SesameGtk
import SesameKeyring
import SesameSamples
import SesameService
import SesameSystem

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
                "Serve other programs on the session bus (org.sesame.Sesame) without a window until one is needed; D-Bus activation starts this."
        )
        var service = false

        /// WebKitWebDriver starts its browser with `--automation`; accepted as a synonym.
        @Flag(name: .customLong("automation"), help: .hidden)
        var automation = false

        func validate() throws {
            if let sample, Sample.Kind(rawValue: sample) == nil {
                throw ValidationError("--sample must be directory, tasks, me or openid, not '\(sample)'.")
            }
        }

        func run() throws {
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
                    documentation: BundledResources.userGuide())
                let environment = ProcessInfo.processInfo.environment
                let serving = SesameApplication.ServiceOptions(
                    accessFile: ProgramAccess.defaultFile(environment: environment),
                    trusted: Set([RunningExecutable.url.flatMap { ProgramIdentity.executable($0.path) }].compactMap { $0 }),
                    windowOnDemand: service)
                return SesameApplication.run(
                    makeModel: {
                        let transport = TracingTransport(base: SesameCommand.desktopTransport(), trace: trace)
                        return await AppModel(
                            store: AccountStore(storage: storage, transport: transport), settings: profiles,
                            trace: trace, transport: transport)
                    }, options: options, service: serving)
            }
            // What the window stored is on the disk before the process ends.
            Durability.shared.waitUntilFlushed()
            if status != 0 { throw ExitCode(status) }
        }
    }
}
