import Foundation
import SesameTestSupport
import XCTest

/// The `sesame` executable's contract: the window needs a display and says so when there is
/// none; the headless commands work without one and use exit status 2 for "sign in first".
final class CommandLineTests: XCTestCase {
    func run(_ arguments: [String], removing: [String] = []) throws -> ProcessRunner.Result {
        var environment = ProcessInfo.processInfo.environment
        for name in removing { environment[name] = nil }
        environment["XDG_DATA_HOME"] = Repository.temporaryDirectory("sesame-cli").appending(path: "data").path
        environment["SESAME_REQUIRE_SECRET_SERVICE"] = nil
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
        return try ProcessRunner.run(try Repository.product("sesame"), arguments, environment: environment)
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
