import ArgumentParser
import SesameCommandLine
import SesameGIO

extension SesameCommand {
    /// `sesame [--emulator URL] [--settings FILE]… [--sample directory|tasks|me] [--trace-events FILE]`:
    /// the window, which is `sesame-window`: this process becomes it, with the same arguments,
    /// once they parse — so the commands without a window never load GTK or WebKit.
    struct Window: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "window", abstract: "Open the window (the default).", shouldDisplay: false)

        @OptionGroup var options: CommonOptions
        @OptionGroup var window: WindowCommandOptions

        func validate() throws { try window.validate(emulator: options.emulator) }

        func run() throws {
            if window.service { try ServiceProgram.exec(options: options, traceEvents: window.traceEvents) }
            guard let program = SesamePrograms.locate(SesamePrograms.window) else {
                throw ValidationError("Sesame's window: \(SesamePrograms.notFound(SesamePrograms.window)); reinstall the sesame package.")
            }
            let failure = ProgramReplacement.exec(program.path, [program.path] + CommandLine.arguments.dropFirst())
            throw ValidationError("Sesame's window (\(program.path)) could not be started: \(failure)")
        }
    }
}
