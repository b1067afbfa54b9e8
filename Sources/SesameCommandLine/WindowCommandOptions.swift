import ArgumentParser
import SesameGIO

/// What `sesame` (the window, its default command) takes besides ``CommonOptions``: parsed by the
/// command line, which loads no GTK, and again by `sesame-window`, which it starts with the same
/// arguments — so `sesame window --help`, the manual and the completions know every option.
public struct WindowCommandOptions: ParsableArguments {
    /// The samples `--sample` names (`Sample.Kind`'s raw values, checked by a test).
    public static let samples = ["directory", "tasks", "me", "openid"]

    @Option(help: "The sample to open: directory, tasks, me or openid.")
    public var sample: String?

    @Option(name: .customLong("trace-events"), help: ArgumentHelp("Write the flow as JSON lines to FILE.", valueName: "FILE"))
    public var traceEvents: String?

    @Flag(name: .customLong("automation-mode"), help: "Let WebKitWebDriver drive the sign-in view (sesame as a WebDriver browser).")
    public var automationMode = false

    @Flag(
        name: .customLong("service"),
        help:
            "Serve other programs on the session bus (org.sesame.Sesame and the identity broker) without a window until one is needed: runs sesame-service, which D-Bus activation starts."
    )
    public var service = false

    /// The window `sesame-service` starts when the user must be asked or sign in.
    @Flag(name: .customLong("service-face"), help: .hidden)
    public var serviceFace = false

    @Flag(
        help:
            "Try Sesame with no cloud: start the identity emulator installed with it and sign in there (alex@contoso.onmicrosoft.com, password Passw0rd!)."
    )
    public var demo = false

    @Option(
        name: .customLong("replay"),
        help: ArgumentHelp(
            "Show a saved flow in the flow inspector, with no network (a file the inspector's Save the Flow… or --trace-events wrote).",
            valueName: "FILE"))
    public var replay: String?

    /// WebKitWebDriver starts its browser with `--automation`; accepted as a synonym.
    @Flag(name: .customLong("automation"), help: .hidden)
    public var automation = false

    public init() {}

    /// The checks that need both option groups (`emulator` is ``CommonOptions/emulator``).
    public func validate(emulator: String?) throws {
        if let sample, !Self.samples.contains(sample) {
            throw ValidationError("--sample must be directory, tasks, me or openid, not '\(sample)'.")
        }
        if demo, emulator != nil { throw ValidationError("--demo starts its own emulator: leave out --emulator.") }
        if demo, service || serviceFace { throw ValidationError("--demo opens the window: leave out --service.") }
        if replay != nil, demo || service || serviceFace || emulator != nil {
            throw ValidationError("--replay shows a saved flow and signs nobody in: leave out --demo, --service and --emulator.")
        }
    }
}

/// `sesame --service`: the account service is `sesame-service`, which loads no GTK: the process
/// becomes it, with the same settings options.
public enum ServiceProgram {
    /// Replaces the process with `sesame-service`; returns only by throwing.
    public static func exec(options: CommonOptions, traceEvents: String?) throws -> Never {
        guard let program = SesamePrograms.locate(SesamePrograms.service) else {
            throw ValidationError("\(SesamePrograms.notFound(SesamePrograms.service)).")
        }
        var arguments = [SesamePrograms.service]
        arguments += options.settingsFiles.flatMap { ["--settings", $0] }
        if let emulator = options.emulator { arguments += ["--emulator", emulator] }
        if let signInWith = options.signInWith { arguments += ["--sign-in-with", signInWith] }
        if options.verbose { arguments.append("--verbose") }
        if let traceEvents { arguments += ["--trace-events", traceEvents] }
        let failure = ProgramReplacement.exec(program.path, arguments)
        throw ValidationError("sesame-service could not be started: \(failure)")
    }
}
