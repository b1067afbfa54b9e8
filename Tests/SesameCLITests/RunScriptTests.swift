import Foundation
import SesameTestSupport
import XCTest

/// `make run`'s script (`scripts/run-with-emulator.sh`): it starts the emulator, waits for its
/// address in the log, and opens the app on that address — never on a log that is not there yet,
/// nor on the address an earlier run left in it.
final class RunScriptTests: XCTestCase {
    func testItOpensTheAppOnTheEmulatorItStartedEveryTime() throws {
        let folder = Repository.temporaryDirectory("make-run")
        defer { try? FileManager.default.removeItem(at: folder) }
        // The real emulator, and a `sesame` that says where it was sent and ends.
        let bin = folder.appending(path: "bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            at: bin.appending(path: "identity-emulator"), withDestinationURL: try Repository.product("identity-emulator"))
        let app = bin.appending(path: "sesame")
        try "#!/bin/sh\necho \"app $*\"\n".write(to: app, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: app.path)
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = folder.appending(path: "state").path
        let log = folder.appending(path: "state/sesame/emulator/emulator.log")
        for run in 1...5 {
            if run > 1 {
                // What an earlier run leaves: an address nothing listens on any more.
                try "identity-emulator listening on http://127.0.0.1:9\n".write(to: log, atomically: true, encoding: .utf8)
            }
            let result = try ProcessRunner.run(
                URL(filePath: "/bin/bash"), [Repository.root.appending(path: "scripts/run-with-emulator.sh").path, bin.path],
                environment: environment)
            XCTAssertEqual(result.status, 0, "run \(run): \(result.stderr)")
            let address = result.stdout.split(separator: "\n").first { $0.hasPrefix("app --emulator ") }.map { String($0.dropFirst(15)) }
            XCTAssertNotNil(address, "run \(run): the app was not opened: \(result.stdout) \(result.stderr)")
            XCTAssertNotEqual(address, "http://127.0.0.1:9", "run \(run) opened the app on an earlier run's address")
            XCTAssertFalse(result.stderr.contains("can't read"), result.stderr)
        }
    }
}
