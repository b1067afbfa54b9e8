import Foundation
import SesameTestSupport
import XCTest

/// `make bench`'s figures whose set-up rests on how Sesame names a program — the D-Bus token for an
/// allowed program, the mail program's password command — and on the device protocol (a
/// registered device's PRT), and the number-matching sign-in's phone, run here once, one round each
/// (`SESAME_BENCH_SMOKE`), on the debug build: a change to program identity that would break the
/// bench is seen in `make test`, not only when someone next measures.
final class BenchSetUpTests: XCTestCase {
    func testTheBenchsProgramFiguresStillRun() throws {
        let scratch = Repository.temporaryDirectory("sesame-bench-smoke")
        defer { try? FileManager.default.removeItem(at: scratch) }
        var environment = ProcessInfo.processInfo.environment
        environment["SESAME_BENCH_SMOKE"] = "1"
        // A bus of the test's own: the service's name is free on it.
        let bus = try SessionBus(environment: environment)
        defer { bus.stop() }
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        let results = scratch.appending(path: "results.json")
        let run = try ProcessRunner.run(
            try Repository.python(),
            [
                Repository.root.appending(path: "bench/bench.py").path, try Repository.product("sesame").deletingLastPathComponent().path,
                try Repository.product("sesame").deletingLastPathComponent().path, results.path, "dbus", "mail", "device", "push",
            ], environment: environment)
        XCTAssertEqual(run.status, 0, "the bench's set-up broke: \(run.stderr.suffix(2000))\n\(run.stdout.suffix(2000))")
        let figures = (try? JSONSerialization.jsonObject(with: Data(contentsOf: results)) as? [[String: Any]]) ?? []
        XCTAssertEqual(
            figures.compactMap { $0["figure"] as? String },
            [
                "token through D-Bus (allowed program, warm), p95", "mail token for a password command (process, warm), p95",
                "a new app's token from the PRT",
                "sign-in approved with Microsoft Authenticator's number (the phone answering at once)",
            ])
    }
}
