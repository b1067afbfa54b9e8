import Foundation
import IdentityEmulator

/// An identity emulator serving on a free loopback port inside the test process, stopped when
/// the value goes. Its announcements (one-time codes) are collected in ``codes``.
public final class RunningEmulator: Sendable {
    /// Where clients reach it.
    public let base: URL
    /// The emulator (its directories, for tests that look inside).
    public let emulator: IdentityEmulator
    /// The one-time codes it sent.
    public let codes: OneTimeCodes
    private let task: Task<Void, any Error>

    /// Starts an emulator with `configure` applied to the default configuration.
    public init(users: Int = 300, demo: Bool = false, configure: (inout EmulatorConfiguration) -> Void = { _ in }) async throws {
        let codes = OneTimeCodes()
        var configuration = EmulatorConfiguration()
        configuration.userCount = users
        configuration.demoMode = demo
        configuration.announce = { codes.record($0) }
        configure(&configuration)
        let emulator = try await IdentityEmulator(configuration: configuration)
        let (stream, continuation) = AsyncStream<URL>.makeStream()
        task = Task {
            defer { continuation.finish() }
            try await emulator.run { url, _ in continuation.yield(url) }
        }
        var iterator = stream.makeAsyncIterator()
        guard let base = await iterator.next() else {
            let failure = await task.result
            throw TestSupportError("the identity emulator did not start: \(failure)")
        }
        self.base = base
        self.emulator = emulator
        self.codes = codes
    }

    /// Starts one from synchronous code (XCTest's GUI tests, which own the main thread).
    public static func startBlocking(
        users: Int = 300, demo: Bool = false, configure: @escaping @Sendable (inout EmulatorConfiguration) -> Void = { _ in }
    ) throws -> RunningEmulator {
        final class Outcome: @unchecked Sendable { var result: Result<RunningEmulator, any Error>? }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do { outcome.result = .success(try await RunningEmulator(users: users, demo: demo, configure: configure)) } catch {
                outcome.result = .failure(error)
            }
            done.signal()
        }
        guard done.wait(timeout: .now() + 60) == .success, let result = outcome.result else {
            throw TestSupportError("the identity emulator did not start within 60 s")
        }
        return try result.get()
    }

    /// Stops serving (gracefully: cancelling the serving task can trap in NIO, see
    /// ``IdentityEmulator/stop()``).
    public func stop() {
        let emulator = emulator
        Task { await emulator.stop() }
    }

    /// Stops serving and waits until it has.
    public func stopAndWait() async {
        await emulator.stop()
        _ = await task.result
    }

    deinit { stop() }
}

/// The real `identity-emulator` executable, started as a tool would start it.
public final class EmulatorProcess: @unchecked Sendable {
    private let process = Process()
    private let output = Pipe()
    private let errors = Pipe()

    /// Starts `identity-emulator` with `arguments`, through `launcher` when there is one
    /// (`ip netns exec NAME`: in a network namespace).
    public init(_ arguments: [String], launcher: [String] = []) throws {
        let product = try Repository.product("identity-emulator")
        if let first = launcher.first {
            process.executableURL = URL(filePath: first)
            process.arguments = Array(launcher.dropFirst()) + [product.path] + arguments
        } else {
            process.executableURL = product
            process.arguments = arguments
        }
        process.standardOutput = output
        process.standardError = errors
        try process.start()
    }

    /// The next line on stdout (nil at end of output).
    public func readLine() -> String? {
        var line = Data()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
            if byte == Data("\n".utf8) { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }

    /// Everything written to stderr (after the process ended).
    public var standardError: String { String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }

    /// The exit status (after it ended).
    public var terminationStatus: Int32 { process.terminationStatus }

    /// Whether it still runs.
    public var isRunning: Bool { process.isRunning }

    /// Its process id (to send it a signal).
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Ends it and waits.
    public func stop() { process.end() }

    /// Waits for it to end by itself.
    public func waitUntilExit() { process.waitUntilExit() }

    deinit { stop() }
}
