import ArgumentParser
import FoundationEssentials
import SesameCommandLine
import SesameCore
import SesameGIO
import SesameSamples
import SesameSystem
import SesameWindowModel

/// `sesame --demo`: the identity emulator installed with Sesame (`identity-emulator`, beside
/// `sesame`: ``SesamePrograms``), started for this window on a free port with its state under
/// `$XDG_STATE_HOME/sesame/emulator` (consents and "stay signed in" are kept between runs) — what
/// `make run` does from a checkout. Its address is read from its first line on a pipe, so there
/// is no log file to race; it holds that pipe's other end as its standard input and ends when
/// it closes, however Sesame ends.
@MainActor
final class DemoEmulator {
    /// The emulator's base URL (`http://127.0.0.1:PORT`).
    let base: URL
    private let process: ChildProcess

    /// How long the emulator may take to say where it listens.
    static let startTimeout: TimeInterval = 30

    /// Starts the emulator and waits until it listens.
    /// - Throws: `ValidationError` saying what to do when it is not installed, cannot start or
    ///   does not answer in time.
    init(environment: [String: String]) throws {
        guard let program = SesamePrograms.locate(SesamePrograms.emulator) else {
            throw ValidationError(
                "--demo needs the identity emulator: \(SesamePrograms.notFound(SesamePrograms.emulator)); it is part of the sesame package: reinstall it."
            )
        }
        let state = WindowState.defaultFile(environment: environment).deletingLastPathComponent().appending(path: "emulator")
        do {
            try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        } catch {
            // A read-only or full disk: the sentence, and the commands' status for it.
            let problem = TokenStorageError.Problem(fileError: error)
            let why =
                switch problem {
                case .diskFull: "the disk is full"
                case .readOnly: "it is read-only, or not yours to write"
                default: "\(error)"
                }
            Posix.writeStandardError(
                "sesame: --demo keeps its emulator's state in \(state.path), which cannot be created: \(why). "
                    + "Free some space, or set XDG_STATE_HOME to a folder you can write.\n")
            throw ExitCode(problem == .other ? ExitStatus.failure : ExitStatus.of(problem))
        }
        MainLoopBridge.install()
        do {
            process = try ChildProcess(
                arguments: [
                    program.path, "--port", "0", "--demo", "--state-dir", state.path, "--stop-when-input-ends",
                ], channel: .standardStreams)
        } catch {
            throw ValidationError("--demo: identity-emulator could not be started: \(error)")
        }
        var listening: URL?
        var ended = false
        process.channel.onLine = { line in
            let prefix = "identity-emulator listening on "
            if listening == nil, line.hasPrefix(prefix) { listening = URL(string: String(line.dropFirst(prefix.count))) }
        }
        process.onExit = { _ in ended = true }
        _ = MainLoopBridge.spin(timeout: Self.startTimeout) { listening != nil || ended }
        guard let listening else {
            process.terminate()
            throw ValidationError(
                ended
                    ? "--demo: identity-emulator ended before it listened; run it alone to see why: \(program.path) --port 0 --demo --state-dir \(state.path)"
                    : "--demo: identity-emulator did not say where it listens within \(Int(Self.startTimeout)) s.")
        }
        base = listening
    }

    /// Stops the emulator (the window closed).
    func stop() { process.terminate() }

    /// What to type on the demo's pages.
    nonisolated static let hint =
        "sesame: the demo's identity service is at %@. Sign in as alex@contoso.onmicrosoft.com (or megan@…, whose SMS code the page shows), password Passw0rd!\n"
}
