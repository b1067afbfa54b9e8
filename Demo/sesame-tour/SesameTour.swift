import Foundation
import IdentityEmulator
import SesameCore
import SesameGtk
import SesameSamples
import SesameService
import SesameSystem
import SesameWindowModel

/// `make demo`: an identity emulator in-process, the real window against it, and the tour
/// playing the tutorial flow, saving numbered screenshots into the folder given (default `demo`).
@main
enum SesameTour {
    final class Codes: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func record(_ line: String) { lock.withLock { lines.append(line) } }
        func code(for user: String) -> String? {
            lock.withLock { lines.last { $0.hasPrefix("mfa-code \(user) ") }.map { String($0.split(separator: " ")[2]) } }
        }
    }

    static func main() {
        let output = URL(fileURLWithPath: CommandLine.arguments.dropFirst().first ?? "demo")
        try? FileManager.default.removeItem(at: output)
        try? FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "../..").standardizedFileURL

        let codes = Codes()
        var configuration = EmulatorConfiguration()
        configuration.userCount = 300
        configuration.announce = { codes.record($0) }
        final class Started: @unchecked Sendable {
            var base: URL?
            var error: (any Error)?
        }
        let started = Started()
        let ready = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                let emulator = try await IdentityEmulator(configuration: configuration)
                try await emulator.run { url, _ in
                    started.base = url
                    ready.signal()
                }
            } catch {
                started.error = error
                ready.signal()
            }
        }
        ready.wait()
        guard let base = started.base else {
            FileHandle.standardError.write(Data("sesame-tour: the emulator did not start: \(started.error.map { "\($0)" } ?? "?")\n".utf8))
            exit(1)
        }

        Localization.setUp(executable: RunningExecutable.url, sourceRoot: root)
        MainActor.assumeIsolated {
            guard SesameApplication.initializeDisplay() else {
                FileHandle.standardError.write(Data("sesame-tour: no display (make demo runs it under xvfb-run)\n".utf8))
                exit(1)
            }
            let trace: FlowTrace
            let settings: [SampleSettings]
            do {
                settings = try ["directory", "tasks", "me"].map {
                    try SampleSettings.load(contentsOf: root.appending(path: "Resources/settings/\($0).plist")).pointed(at: base)
                }
                trace = try FlowTrace(file: output.appending(path: "trace.jsonl"))
            } catch {
                FileHandle.standardError.write(Data("sesame-tour: \(error)\n".utf8))
                exit(1)
            }
            // The app's own loop and window, as `sesame` runs them; the tour plays in it.
            let status = SesameApplication.run(
                makeModel: {
                    let transport = TracingTransport(trace: trace)
                    let storage = FileTokenStorage(
                        directory: FileManager.default.temporaryDirectory.appending(path: "sesame-tour-\(UUID().uuidString)"))
                    return await AppModel(
                        store: AccountStore(storage: storage, transport: transport), settings: settings, trace: trace, transport: transport)
                }, options: MainWindow.Options(webDataDirectory: nil, initialSample: .directory)
            ) { window in
                Task { @MainActor in
                    do {
                        let tour = Tour(window: window, trace: trace, screenshots: output, smsCode: { codes.code(for: $0) })
                        try await tour.run()
                        for file in tour.files { print(file.path) }
                        window.window.destroy()
                    } catch {
                        FileHandle.standardError.write(Data("sesame-tour: \(error)\n".utf8))
                        exit(1)
                    }
                }
            }
            exit(status)
        }
    }
}
