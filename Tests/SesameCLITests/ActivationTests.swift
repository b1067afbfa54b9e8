import Foundation
import SesameTestSupport
import XCTest

/// D-Bus activation: with no Sesame running, a call to `org.sesame.Sesame` makes the bus daemon
/// start the service from the `.service` file `make install` writes (here in the test bus's
/// `$XDG_DATA_HOME/dbus-1/services`, pointing at the built `sesame`), which answers without
/// showing a window.
final class ActivationTests: XCTestCase {
    func testACallWithNothingRunningStartsTheServiceWithoutAWindow() throws {
        let scratch = Repository.temporaryDirectory("sesame-activation")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let data = scratch.appending(path: "data")
        let services = data.appending(path: "dbus-1/services")
        try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
        let trace = scratch.appending(path: "trace.jsonl")
        let template = try String(
            contentsOf: Repository.root.appending(path: "Resources/dbus/org.sesame.Sesame.service.in"), encoding: .utf8)
        let sesame = try Repository.product("sesame").path
        // The installed file, its Exec given the test's trace (D-Bus activation passes no arguments).
        let file = template.replacingOccurrences(of: "@bindir@/sesame --service", with: "\(sesame) --service --trace-events \(trace.path)")
        XCTAssertNotEqual(file, template, "the template's Exec line changed: update the test")
        try file.write(to: services.appending(path: "org.sesame.Sesame.service"), atomically: true, encoding: .utf8)

        // Sign-ins in files: this bus has no unlocked keyring (one activated on it would wait for a prompt).
        try FileManager.default.createDirectory(at: data.appending(path: "sesame"), withIntermediateDirectories: true)
        try Data("files\n".utf8).write(to: data.appending(path: "sesame/storage"))
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = data.path
        environment["SESAME_REQUIRE_SECRET_SERVICE"] = nil
        let bus = try SessionBus(environment: environment)
        defer { bus.stop() }
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        let before = try ProcessRunner.run(
            URL(filePath: "/usr/bin/gdbus"),
            [
                "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus", "--method",
                "org.freedesktop.DBus.NameHasOwner", "org.sesame.Sesame",
            ], environment: environment)
        XCTAssertEqual(before.stdout, "(false,)\n", "something already serves the name")

        let list = try ProcessRunner.run(
            URL(filePath: "/usr/bin/gdbus"),
            [
                "call", "--session", "--dest", "org.sesame.Sesame", "--object-path", "/org/sesame/Sesame", "--method",
                "org.sesame.Accounts1.ListAccounts",
            ], environment: environment)
        XCTAssertEqual(list.status, 0, list.stderr)
        XCTAssertEqual(list.stdout, "(@aa{sv} [],)\n")
        let events = (try? String(contentsOf: trace, encoding: .utf8)) ?? ""
        XCTAssertTrue(events.contains("\"service-started\""), events)
        XCTAssertFalse(events.contains("\"window-shown\""), "the service showed a window nobody asked for: \(events)")
    }
}
