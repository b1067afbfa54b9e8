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

    /// The account service is for a desktop session's bus: without one, it says so and fails
    /// (status 4, as the commands' "no keyring here"), rather than ending in silence.
    func testWithoutASessionBusTheServiceSaysSo() throws {
        for arguments in [["--service"], []] {
            let program = arguments.isEmpty ? try Repository.product("sesame-service") : try Repository.product("sesame")
            var environment = ProcessInfo.processInfo.environment
            environment["XDG_DATA_HOME"] = Repository.temporaryDirectory("sesame-no-bus").appending(path: "data").path
            for address in ["unix:path=/nonexistent", nil] {
                environment["DBUS_SESSION_BUS_ADDRESS"] = address
                environment["DISPLAY"] = nil
                let result = try ProcessRunner.run(program, arguments, environment: environment)
                XCTAssertEqual(result.status, 4, "\(program.lastPathComponent) \(arguments): \(result.stderr)")
                XCTAssertTrue(result.stderr.contains("sesame-service: there is no session bus here"), result.stderr)
            }
        }
    }

    /// `--replay` of a file that is not a saved flow says which line and fails before any window;
    /// with `--demo` it is refused as signing nobody in.
    func testReplayOfAFileThatIsNoFlowSaysWhichLine() throws {
        let file = Repository.temporaryDirectory("sesame-replay").appending(path: "notes.jsonl")
        try "{\"t\":0.1,\"event\":\"window-shown\"}\nmy notes\n".write(to: file, atomically: true, encoding: .utf8)
        let bad = try run(["--replay", file.path], removing: ["DISPLAY", "WAYLAND_DISPLAY"])
        XCTAssertEqual(bad.status, 2, bad.stderr)
        XCTAssertEqual(
            bad.stderr, "sesame: \(file.path), line 2: not a flow event (a JSON object with \"t\" seconds, \"event\", then text fields).\n")
        let missing = try run(["--replay", "/nonexistent/flow.jsonl"], removing: ["DISPLAY", "WAYLAND_DISPLAY"])
        XCTAssertEqual(missing.status, 2, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("/nonexistent/flow.jsonl cannot be read"), missing.stderr)
        let demo = try run(["--replay", file.path, "--demo"], removing: ["DISPLAY", "WAYLAND_DISPLAY"])
        XCTAssertNotEqual(demo.status, 0)
        XCTAssertTrue(demo.stderr.contains("--replay shows a saved flow and signs nobody in"), demo.stderr)
    }

    /// A flow saved again on Windows (CR LF line ends, a byte order mark first) is read like the
    /// flow itself: `--replay` gets as far as the window, which is what is missing here.
    func testReplayOfAFlowSavedOnWindowsGetsToTheWindow() throws {
        let folder = Repository.temporaryDirectory("sesame-replay-named")
        defer { try? FileManager.default.removeItem(at: folder) }
        let lines = [
            #"{"t":0.1,"event":"window-shown"}"#,
            #"{"t":0.2,"event":"navigation","method":"GET","url":"https://login.example/authorize","kind":"other","action":"show"}"#,
        ]
        let windows = folder.appending(path: "windows.jsonl")
        try Data(("\u{FEFF}" + lines.map { $0 + "\r\n" }.joined()).utf8).write(to: windows)
        let result = try run(["--replay", windows.path], removing: ["DISPLAY", "WAYLAND_DISPLAY"])
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("sesame: no display to show the flow on"), result.stderr)
    }

    /// A flow named through a symbolic link (`latest.jsonl`) is read like the flow itself, as any
    /// tool reads the name it is given; a link is followed to a regular file only, and one to a
    /// device is refused, saying so.
    func testReplayOfASymlinkedFlowGetsToTheWindow() throws {
        let folder = Repository.temporaryDirectory("sesame-replay-link")
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(#"{"t":0.1,"event":"window-shown"}"#.utf8).write(to: folder.appending(path: "flow.jsonl"))
        let link = folder.appending(path: "latest.jsonl")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "flow.jsonl")
        let result = try run(["--replay", link.path], removing: ["DISPLAY", "WAYLAND_DISPLAY"])
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("sesame: no display to show the flow on"), result.stderr)

        let device = folder.appending(path: "device.jsonl")
        try FileManager.default.createSymbolicLink(atPath: device.path, withDestinationPath: "/dev/zero")
        let refused = try run(["--replay", device.path], removing: ["DISPLAY", "WAYLAND_DISPLAY"])
        XCTAssertEqual(refused.status, 2, refused.stderr)
        XCTAssertEqual(refused.stderr, "sesame: \(device.path) cannot be read: it is not a regular file.\n")
    }

    func testTokenWithoutAnAccountExitsWithStatusTwo() throws {
        let result = try run(["token", "--account-type", "myGraphService"], removing: ["DISPLAY", "WAYLAND_DISPLAY"])
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("nobody is signed in for myGraphService"), result.stderr)
        XCTAssertTrue(result.stdout.isEmpty)
    }

    /// Run by name from a folder someone else controls, `sesame` must not take its settings or
    /// translations from `../share/sesame` relative to that folder (argv[0] is just "sesame").
    func testRunByNameFromAPlantedFolderIgnoresSettingsRelativeToIt() throws {
        let planted = Repository.temporaryDirectory("sesame-planted")
        let settings = planted.appending(path: "share/sesame/settings")
        let work = planted.appending(path: "work")
        try FileManager.default.createDirectory(at: settings, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        for name in ["directory", "tasks", "me"] {
            try Data("<plist>tokenURL=https://attacker.example/token</plist>".utf8).write(to: settings.appending(path: "\(name).plist"))
        }
        defer { try? FileManager.default.removeItem(at: planted) }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = planted.appending(path: "data").path
        environment["SESAME_REQUIRE_SECRET_SERVICE"] = nil
        environment["SESAME_DATA_DIR"] = nil
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
        environment["PATH"] = try Repository.product("sesame").deletingLastPathComponent().path + ":/usr/bin:/bin"
        // env(1) finds `sesame` on PATH and runs it with argv[0] = "sesame", as a shell does.
        let result = try ProcessRunner.run(
            URL(filePath: "/usr/bin/env"), ["sesame", "token", "--account-type", "myGraphService"], environment: environment,
            currentDirectory: work)
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("nobody is signed in for myGraphService"), result.stderr)
    }

    /// The window and the command line use one store: the first run records where sign-ins live
    /// (files, here: no session bus), says so, and a later run where the recorded keyring does not
    /// answer says what to do instead of starting a second, empty store.
    func testTheStoreIsChosenOnceAndAKeyringThatDoesNotAnswerIsNotReplacedByFiles() throws {
        let data = Repository.temporaryDirectory("sesame-choice").appending(path: "data")
        defer { try? FileManager.default.removeItem(at: data.deletingLastPathComponent()) }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = data.path
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
        let sesame = try Repository.product("sesame")

        let first = try ProcessRunner.run(sesame, ["accounts"], environment: environment)
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(first.stderr.contains("sign-ins are kept in files under \(data.appending(path: "sesame").path)"), first.stderr)
        XCTAssertEqual(try String(contentsOf: data.appending(path: "sesame/storage"), encoding: .utf8), "files\n")

        try Data("secret-service\n".utf8).write(to: data.appending(path: "sesame/storage"))
        let elsewhere = try ProcessRunner.run(sesame, ["token", "--account-type", "myGraphService"], environment: environment)
        XCTAssertEqual(
            elsewhere.status, 4, "not the status for \"no keyring here\" (2: it looked in an empty second store): \(elsewhere.stderr)")
        XCTAssertTrue(elsewhere.stderr.contains("Your sign-ins are in the desktop keyring, which does not answer here"), elsewhere.stderr)
    }

    /// A key the file's shape does not read is a warning, once, from every command (the window's
    /// too, before it finds no display); the command goes on.
    func testASettingsKeyItsShapeDoesNotReadIsAWarningOnce() throws {
        let folder = Repository.temporaryDirectory("sesame-typo")
        defer { try? FileManager.default.removeItem(at: folder) }
        let tasks = try String(contentsOf: Repository.settings("tasks.plist"), encoding: .utf8)
        let typo = folder.appending(path: "typo.plist")
        try tasks.replacingOccurrences(of: "</dict>", with: "    <key>clientid</key>\n    <string>90c0fe63</string>\n</dict>")
            .write(to: typo, atomically: true, encoding: .utf8)
        let warning =
            "sesame: warning: \(typo.path): \"clientid\" is not a key a Tasks (B2C) settings file reads; Sesame ignores it: "
            + "did you mean \"clientID\"?\n"

        let accounts = try run(["accounts", "--settings", typo.path])
        XCTAssertEqual(accounts.status, 0, accounts.stderr)
        XCTAssertEqual(accounts.stderr.components(separatedBy: warning).count - 1, 1, accounts.stderr)
        XCTAssertTrue(accounts.stdout.contains("B2C_Acccount"), accounts.stdout)

        let window = try run(["--settings", typo.path], removing: ["DISPLAY", "WAYLAND_DISPLAY"])
        XCTAssertEqual(window.stderr.components(separatedBy: warning).count - 1, 1, window.stderr)
        XCTAssertTrue(window.stderr.contains("no display"), window.stderr)

        let bundled = try run(["accounts"])
        XCTAssertFalse(bundled.stderr.contains("warning"), bundled.stderr)
    }

    func testABadEmulatorURLSaysWhatToWrite() throws {
        let result = try run(["--emulator", "not a url"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("--emulator needs an http(s) URL"), result.stderr)
    }
}
