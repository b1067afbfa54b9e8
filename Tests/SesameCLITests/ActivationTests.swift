import Foundation
import IdentityEmulator
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

/// The service as D-Bus activation runs it all session long (`sesame --service`, which becomes
/// `sesame-service`): it loads no GTK and no WebKit, and when a program needs the user, it starts
/// a window of its own that asks and then ends by itself. The user's part is
/// EndToEnd/service_face_flow.py, pressed through the accessibility tree.
final class ServiceWithoutWindowTests: XCTestCase {
    func testTheServiceLoadsNoGTKAndItsWindowAsksThenEnds() async throws {
        let emulator = try await RunningEmulator(users: 50, demo: true)
        defer { emulator.stop() }
        let base = emulator.base.absoluteString
        let scratch = Repository.temporaryDirectory("sesame-service-face")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let data = scratch.appending(path: "data")
        try FileManager.default.createDirectory(at: data.appending(path: "sesame"), withIntermediateDirectories: true)
        try Data("files\n".utf8).write(to: data.appending(path: "sesame/storage"))
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = data.path
        environment["XDG_STATE_HOME"] = scratch.appending(path: "state").path
        environment["SESAME_REQUIRE_SECRET_SERVICE"] = nil
        environment["WEBKIT_DISABLE_COMPOSITING_MODE"] = "1"

        // alex signs in first, with the device code typed at "another device".
        var loginEnvironment = environment
        loginEnvironment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
        let login = try DeviceCodeLoginTests.RunningProgram(
            Repository.product("sesame"), ["login", "--account-type", "myGraphService", "--device-code", "--emulator", base],
            environment: loginEnvironment)
        let userCode = try login.waitForStderr(DeviceCodeLoginTests.codePattern)
        _ = try await HeadlessBrowser.sockets(base: emulator.base, codes: emulator.codes).verifyDevice(
            userCode: userCode, as: "alex@contoso.onmicrosoft.com")
        XCTAssertEqual(login.finish().status, 0)

        // The installed activation file, pointed at this build, the emulator and the test's trace.
        let services = data.appending(path: "dbus-1/services")
        try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
        let template = try String(
            contentsOf: Repository.root.appending(path: "Resources/dbus/org.sesame.Sesame.service.in"), encoding: .utf8)
        let trace = scratch.appending(path: "service.jsonl")
        let file = template.replacingOccurrences(
            of: "@bindir@/sesame --service",
            with: "\(try Repository.product("sesame").path) --service --emulator \(base) --trace-events \(trace.path)")
        try file.write(to: services.appending(path: "org.sesame.Sesame.service"), atomically: true, encoding: .utf8)
        // The desktop's accessibility bus (the test session's), where the window the service starts
        // registers and the flow looks for it.
        let accessibility = try ProcessRunner.run(
            URL(filePath: "/usr/bin/gdbus"),
            ["call", "--session", "--dest", "org.a11y.Bus", "--object-path", "/org/a11y/bus", "--method", "org.a11y.Bus.GetAddress"])
        environment["AT_SPI_BUS_ADDRESS"] = try XCTUnwrap(accessibility.stdout.split(separator: "'").dropFirst().first.map(String.init))
        let bus = try SessionBus(environment: environment)
        defer { bus.stop() }
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address

        let flow = URL(filePath: #filePath).deletingLastPathComponent().appending(
            path: "../SesameAppEndToEndTests/EndToEnd/service_face_flow.py"
        )
        .standardized
        let result = try ProcessRunner.run(
            try Repository.python(), [flow.path, try Repository.product("sesame").path, base, scratch.path], environment: environment)
        let events = (try? String(contentsOf: trace, encoding: .utf8)) ?? ""
        XCTAssertEqual(result.status, 0, result.stderr.suffix(3000) + "\nservice trace:\n" + events)
        let seen = try XCTUnwrap(
            try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.stderr.suffix(3000).description)
        XCTAssertEqual((seen["list"] as? [String: Any])?["status"] as? Int, 0, "\(seen["list"] ?? "")")
        XCTAssertEqual(seen["service_executable"] as? String, "sesame-service")
        XCTAssertEqual(seen["service_gui_libraries"] as? [String], [], "the idle service loaded GTK or WebKit")
        XCTAssertEqual(seen["window_before"] as? Int, 0, "a window started before anyone needed one")
        // `sesame doctor` lists the broker's calls when the activated service answered them.
        XCTAssertTrue((seen["broker_version"] as? String)?.contains("linuxBrokerVersion") == true, "\(seen["broker_version"] ?? "")")
        let doctor = seen["doctor_broker"] as? [String] ?? []
        XCTAssertTrue(doctor.contains { $0.contains("served by Sesame") }, "\(doctor)")
        XCTAssertTrue(doctor.contains { $0.contains("broker call") && $0.contains("gdbus") }, "\(doctor)")
        XCTAssertEqual(seen["windows_while_asking"] as? Int, 1)
        XCTAssertEqual(seen["question"] as? String, "Allow \u{2068}gdbus\u{2069} to use \u{2068}alex@contoso.onmicrosoft.com\u{2069}?")
        let token = try XCTUnwrap(seen["token"] as? [String: Any])
        XCTAssertEqual(token["status"] as? Int, 0, "\(token)")
        XCTAssertEqual(token["jwt"] as? Bool, true)
        XCTAssertEqual(seen["service_gui_libraries_after"] as? [String], [], "the service loaded GTK to ask")
        XCTAssertLessThanOrEqual(seen["window_ended_after"] as? Int ?? 99, 15)
        XCTAssertEqual(seen["service_still_running"] as? Bool, true)
        // Another program's forged answers changed nothing: it could open none of the window's
        // sockets or pipes to write (its files — /dev/null, its trace — are no channel); what it sent on the window's own channel, taken with
        // pidfd_getfd, was dropped (the kernel named its sender); the question stayed until the
        // user answered, and "Allow once" kept nothing.
        let forged = try XCTUnwrap(seen["forged"] as? [String: String])
        XCTAssertFalse(
            forged.contains { $0.value.hasPrefix("socket:") || $0.value.hasPrefix("pipe:") ? $0.value.hasSuffix(": written") : false },
            "another program wrote into one of the window's channels: \(forged)")
        XCTAssertNotNil(seen["question_after_forgery"] as? String, "a forged answer closed the question: \(forged)")
        XCTAssertEqual(seen["asked_before_answer"] as? Bool, true, "a forged answer got the program its token")
        if forged["taken channel"] == "sent" { XCTAssertGreaterThan(seen["foreign_dropped"] as? Int ?? 0, 0, "\(forged)") }
        XCTAssertFalse((seen["decisions_kept"] as? String ?? "").contains("gdbus"), "a forged Always was kept")
        XCTAssertEqual(seen["face_holds_of_service"] as? [String], [], "the window holds the service's descriptors")
        XCTAssertEqual(seen["face_children_hold"] as? [String], [], "the window's children hold its descriptors")
        XCTAssertEqual(seen["inheritable"] as? [String], [], "the service or its window holds descriptors a child would inherit")
        // A new script's `sesame token`: with no Sesame running and with the window open, the same —
        // asked about python (whose Always would cover every program it runs), "Allow once", a
        // token; the command said it waited for the answer.
        for case_ in ["script_without_sesame", "script_with_window"] {
            let run = try XCTUnwrap(seen[case_] as? [String: Any], case_)
            XCTAssertEqual(run["status"] as? Int, 0, "\(case_): \(run)")
            XCTAssertEqual(run["jwt"] as? Bool, true, "\(case_): \(run)")
            XCTAssertEqual(run["waited"] as? Bool, true, "\(case_) did not say it waited: \(run)")
            let asked = run["where"] as? String ?? ""
            XCTAssertTrue(asked.hasPrefix("The program /usr/bin/python3"), "\(case_): \(asked)")
            XCTAssertTrue(asked.contains("Always covers every program it runs"), "\(case_): \(asked)")
        }
        XCTAssertTrue(events.contains("\"service-window-started\""), events)
        XCTAssertFalse(events.contains("eyJ"), "a token reached the trace")
    }
}
