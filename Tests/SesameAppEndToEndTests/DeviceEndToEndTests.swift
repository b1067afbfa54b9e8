import Foundation
import IdentityEmulator
import SesameTestSupport
import XCTest

/// This computer registered from the window (docs/DEVICE.md), as a person does it: a policy that
/// asks for a registered device refuses alex's Directory, the refusal offers "Register This
/// Computer…", the question is answered and alex signs in on the registration's page; then the
/// Directory signs in with no page, the Me console's page (an app alex must consent to) asks for
/// no password, a program's tokens name the device, and the account menu removes it; registered
/// and removed again at a terminal, the open window's menu says so. gnome-keyring on a bus of the test's own keeps it. The flow is
/// EndToEnd/device_flow.py.
final class DeviceEndToEndTests: XCTestCase {
    func testTheWindowRegistersThisComputerAndItsSamplesSignInWithNoPassword() throws {
        let emulator = try RunningEmulator.startBlocking(users: 50, demo: true)
        defer { emulator.stop() }
        let scratch = Repository.temporaryDirectory("sesame-device-window")
        defer { try? FileManager.default.removeItem(at: scratch) }
        var busEnvironment = ProcessInfo.processInfo.environment
        busEnvironment["XDG_DATA_HOME"] = scratch.appending(path: "data").path
        let bus = try SessionBus(environment: busEnvironment)
        defer { bus.stop() }
        let program = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "EndToEnd/device_flow.py")
        var environment = ProcessInfo.processInfo.environment
        environment["SESAME_E2E_APP_BUS"] = bus.address
        let result = try ProcessRunner.run(
            try Repository.python(), [program.path, try Repository.product("sesame").path, emulator.base.absoluteString, scratch.path],
            environment: environment)
        XCTAssertEqual(result.status, 0, "device flow: \(result.stderr.suffix(3000))")
        let seen = try XCTUnwrap(
            try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
            "the flow printed no result: \(result.stderr.suffix(3000))")
        // The screenshots, kept where the GUI tests keep theirs, to be looked at.
        let screenshots = Repository.root.appending(path: ".build/screenshots")
        try FileManager.default.createDirectory(at: screenshots, withIntermediateDirectories: true)
        for name in ["device-question", "device-registered"] {
            let target = screenshots.appending(path: "window-\(name).png")
            try? FileManager.default.removeItem(at: target)
            try FileManager.default.copyItem(at: scratch.appending(path: "\(name).png"), to: target)
        }

        // Refused first: the organization asks for a registered device (and the refusal offered to register).
        XCTAssertEqual(seen["refused"] as? String, "AADSTS50097")
        // The question: what registering means, with the host name offered as the name.
        XCTAssertEqual(seen["question"] as? String, "Register this computer with your organization?")
        XCTAssertTrue((seen["question_text"] as? String)?.contains("You can remove it any time") == true, "\(seen)")
        XCTAssertFalse((seen["name_offered"] as? String ?? "").isEmpty)
        // The registration signed in as Microsoft's broker app, on the window's page.
        XCTAssertTrue(
            (seen["registration_page"] as? String)?.contains("client_id=29d9ed98-a469-4536-ade2-f981bc1d605e") == true,
            "\(seen["registration_page"] ?? "")")
        let deviceID = try XCTUnwrap(seen["device_id"] as? String)
        XCTAssertEqual(seen["outcome"] as? String, "This computer is registered")
        XCTAssertTrue((seen["outcome_text"] as? String)?.contains("“alex-laptop”") == true, "\(seen["outcome_text"] ?? "")")

        // The Directory signed in by the PRT with no page; the Me console's page, with the
        // device's credential, asked only for alex's consent; both tokens name the device.
        XCTAssertEqual(seen["directory_device_sign_in"] as? [String], ["myGraphService"])
        XCTAssertEqual(seen["directory_pages"] as? Int, 0, "a sign-in page was asked for after registering")
        XCTAssertEqual(seen["me_credential_sent"] as? Int, 1)
        XCTAssertEqual(seen["me_first_page"] as? String, "consent", "the page asked for more than the consent")
        for accountType in ["myGraphService", "msalGraph"] {
            let token = try XCTUnwrap(seen["token_\(accountType)"] as? [String: Any], accountType)
            XCTAssertEqual(token["status"] as? Int, 0, "\(accountType): \(token)")
            XCTAssertEqual(token["device"] as? String, deviceID, accountType)
        }
        XCTAssertEqual(
            seen["menu_device"] as? String, "This computer is registered with your organization by alex@contoso.onmicrosoft.com.")

        // Removed from the menu: gone here and in the organization.
        XCTAssertEqual(seen["remove_question"] as? String, "Remove this computer from your organization?")
        XCTAssertEqual(seen["menu_after_removal"] as? String, "This computer is not registered with your organization.")
        XCTAssertTrue(
            (seen["status_after_removal"] as? String)?.contains("This computer is not registered with an organization.") == true,
            "\(seen["status_after_removal"] ?? "")")
        // Registered, then removed, at a terminal while the window is open: its menu says each as it opens.
        XCTAssertEqual(seen["terminal_register"] as? Int, 0, "\(seen["terminal_register_output"] ?? "")")
        XCTAssertEqual(
            seen["menu_after_terminal_register"] as? String,
            "This computer is registered with your organization by alex@contoso.onmicrosoft.com.")
        XCTAssertEqual(seen["terminal_remove"] as? Int, 0)
        XCTAssertEqual(seen["menu_after_terminal_removal"] as? String, "This computer is not registered with your organization.")
        // Ids, never a token, a key or a cookie, in the flow's trace.
        let trace = seen["trace"] as? String ?? ""
        XCTAssertTrue(trace.contains(deviceID))
        for secret in ["eyJ", "BEGIN", "x-ms-RefreshTokenCredential", "session_key"] {
            XCTAssertFalse(trace.contains(secret), "the trace holds \(secret)")
        }
    }
}
