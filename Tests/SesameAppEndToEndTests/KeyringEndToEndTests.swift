import Foundation
import IdentityEmulator
import SesameTestSupport
import XCTest

/// A locked keyring is not "nobody is signed in": gnome-keyring on a session bus of the test's
/// own holds alex's sign-in, and its collection is locked. The commands and `sesame doctor` say
/// so with their own status; the window offers Unlock (the keyring's own prompt, answered as a
/// person does) instead of a sign-in, and alex is back with no second copy. So again after a
/// fresh login, whose keyring daemon loads the collection locked. The flow is
/// EndToEnd/keyring_flow.py.
final class KeyringEndToEndTests: XCTestCase {
    func testALockedKeyringIsSaidAndUnlockedNeverSignedInAgain() throws {
        let emulator = try RunningEmulator.startBlocking(users: 50, demo: true)
        defer { emulator.stop() }
        let scratch = Repository.temporaryDirectory("sesame-keyring")
        defer { try? FileManager.default.removeItem(at: scratch) }
        // The account service as installed (D-Bus activation), pointed at the emulator: a
        // program's `sesame token` goes through it.
        let data = scratch.appending(path: "data")
        let services = data.appending(path: "dbus-1/services")
        try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
        let template = try String(
            contentsOf: Repository.root.appending(path: "Resources/dbus/org.sesame.Sesame.service.in"), encoding: .utf8)
        let file = template.replacingOccurrences(
            of: "@bindir@/sesame --service",
            with: "\(try Repository.product("sesame").path) --service --emulator \(emulator.base.absoluteString) --trace-events "
                + scratch.appending(path: "service-trace.jsonl").path)
        XCTAssertNotEqual(file, template, "the template's Exec line changed: update the test")
        try file.write(to: services.appending(path: "org.sesame.Sesame.service"), atomically: true, encoding: .utf8)
        var busEnvironment = ProcessInfo.processInfo.environment
        busEnvironment["XDG_DATA_HOME"] = data.path
        let bus = try SessionBus(environment: busEnvironment)
        defer { bus.stop() }
        let program = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "EndToEnd/keyring_flow.py")
        var environment = ProcessInfo.processInfo.environment
        environment["SESAME_E2E_APP_BUS"] = bus.address
        let result = try ProcessRunner.run(
            try Repository.python(), [program.path, try Repository.product("sesame").path, emulator.base.absoluteString, scratch.path],
            environment: environment)
        XCTAssertEqual(result.status, 0, "keyring flow: \(result.stderr.suffix(3000))")
        let seen = try XCTUnwrap(
            try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
            "the flow printed no result: \(result.stderr.suffix(3000))")
        let signedIn = try XCTUnwrap(seen["items_signed_in"] as? [String])
        XCTAssertEqual(signedIn.count, 1, "\(signedIn)")

        // The commands: the keyring's own status (3) and sentence; nothing read as "nobody".
        for name in ["token", "accounts", "login"] {
            let run = try XCTUnwrap(seen[name] as? [String: Any], name)
            XCTAssertEqual(run["status"] as? Int, 3, "\(name): \(run)")
            let said = run["stderr"] as? String ?? ""
            XCTAssertTrue(said.contains("Your keyring is locked, and your sign-ins are inside it."), "\(name): \(said)")
            XCTAssertFalse(said.contains("nobody is signed in"), "\(name): \(said)")
        }
        let doctor = try XCTUnwrap(seen["doctor"] as? [String: Any])
        let report = doctor["stdout"] as? String ?? ""
        XCTAssertTrue(report.contains("which is locked: Sesame cannot read them until you unlock it"), report)
        XCTAssertNotEqual(doctor["status"] as? Int, 0, report)

        // The window: Unlock, not a sign-in; the keyring's prompt, then alex's people.
        XCTAssertEqual(seen["sign_in_requested_while_locked"] as? Bool, false)
        let labels = try XCTUnwrap(seen["window_labels"] as? [String])
        XCTAssertTrue(labels.contains { $0.hasPrefix("Your keyring is locked, and your sign-ins are inside it.") }, "\(labels)")
        XCTAssertEqual(seen["unlock"] as? String, "yes")
        XCTAssertEqual(seen["sign_in_requested"] as? Bool, false, "the window asked for a sign-in after unlocking")
        XCTAssertEqual(seen["items_after"] as? [String], signedIn, "a second copy of the sign-in was stored")
        let after = try XCTUnwrap(seen["token_after"] as? [String: Any])
        XCTAssertEqual(after["status"] as? Int, 0, "\(after)")

        // A fresh login (the daemon loads the collection locked): the same, not "nobody".
        let fresh = try XCTUnwrap(seen["token_fresh_login"] as? [String: Any])
        XCTAssertEqual(fresh["status"] as? Int, 3, "\(fresh)")
        let freshSaid = fresh["stderr"] as? String ?? ""
        XCTAssertTrue(freshSaid.contains("Your keyring is locked, and your sign-ins are inside it."), freshSaid)
        let freshLabels = try XCTUnwrap(seen["window_labels_fresh_login"] as? [String])
        XCTAssertTrue(freshLabels.contains { $0.hasPrefix("Your keyring is locked, and your sign-ins are inside it.") }, "\(freshLabels)")
        XCTAssertEqual(seen["unlock_offered_fresh_login"] as? Bool, true)
        XCTAssertEqual(seen["sign_in_requested_fresh_login"] as? Bool, false)
    }
}
