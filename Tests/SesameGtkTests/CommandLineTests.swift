import Foundation
import XCTest

/// The `sesame` executable's contract: the window needs a display and says so when there is
/// none; the headless commands work without one and use exit status 2 for "sign in first".
final class CommandLineTests: XCTestCase {
    static var sesame: URL {
        get throws {
            let candidates = [
                URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent(),
                URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent().deletingLastPathComponent(),
                URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../.build/debug").standardized,
            ].map { $0.appending(path: "sesame") }
            return try XCTUnwrap(candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }, "sesame is not built")
        }
    }

    func run(_ arguments: [String], removing: [String] = []) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = try Self.sesame
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        for name in removing { environment[name] = nil }
        let scratch = FileManager.default.temporaryDirectory.appending(path: "sesame-cli-\(UUID().uuidString)")
        environment["XDG_DATA_HOME"] = scratch.appending(path: "data").path
        environment["SESAME_REQUIRE_SECRET_SERVICE"] = nil
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, stdout, stderr)
    }

    func testWithoutADisplayTheWindowSaysSoInOneLineAndFails() throws {
        let result = try run([], removing: ["DISPLAY", "WAYLAND_DISPLAY"])
        XCTAssertNotEqual(result.status, 0)
        let lines = result.stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("no display"), result.stderr)
    }

    func testTokenWithoutAnAccountExitsWithStatusTwo() throws {
        let result = try run(["token", "--account-type", "myGraphService"], removing: ["DISPLAY", "WAYLAND_DISPLAY"])
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("nobody is signed in for myGraphService"), result.stderr)
        XCTAssertTrue(result.stdout.isEmpty)
    }

    func testABadEmulatorURLSaysWhatToWrite() throws {
        let result = try run(["--emulator", "not a url"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("--emulator needs an http(s) URL"), result.stderr)
    }
}
