import Foundation
import Testing

/// The real `identity-emulator` executable, started as a tool would start it.
final class EmulatorProcess: @unchecked Sendable {
    let process = Process()
    private let output = Pipe()
    private let errors = Pipe()

    /// Where `swift build` put the executable: next to the test bundle.
    static var executable: URL {
        get throws {
            let candidates = [
                URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent(),
                URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent().deletingLastPathComponent(),
                repositoryRoot.appending(path: ".build/debug"),
            ].map { $0.appending(path: "identity-emulator") }
            return try #require(candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) },
                                "identity-emulator is not built: run `swift build` (make test does).")
        }
    }

    static let repositoryRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    init(_ arguments: [String]) throws {
        process.executableURL = try Self.executable
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    /// The next line on stdout (nil at end of output).
    func readLine() -> String? {
        var line = Data()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
            if byte == Data("\n".utf8) { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }

    /// Everything written to stderr (after the process ended).
    var standardError: String { String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    deinit { stop() }
}
