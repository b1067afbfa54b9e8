import Foundation
import SesameTestSupport
import XCTest

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `sesame --demo` (what `make run` runs, and what an installed Sesame offers someone who cannot
/// reach Microsoft): it starts the installed identity emulator, opens the window on its sign-in
/// page — every time, however busy the machine, since the address comes on a pipe and no log
/// file is read — and when Sesame ends, however it ends, the emulator ends with it.
final class DemoTests: XCTestCase {
    func testTheDemoOpensOnItsOwnEmulatorEveryTimeAndTakesItAlongWhenItEnds() throws {
        let folder = Repository.temporaryDirectory("sesame-demo")
        defer { try? FileManager.default.removeItem(at: folder) }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = folder.appending(path: "state").path
        environment["XDG_DATA_HOME"] = folder.appending(path: "data").path
        for (run, signal) in [(1, SIGTERM), (2, SIGKILL)] {
            let trace = folder.appending(path: "trace-\(run).jsonl")
            let sesame = try DeviceCodeLoginTests.RunningProgram(
                try Repository.product("sesame"), ["--demo", "--trace-events", trace.path], environment: environment)
            let base = try sesame.waitForStderr("demo's identity service is at (http://127\\.0\\.0\\.1:[0-9]+)")
            XCTAssertTrue(sesame.stderr.contains("Passw0rd!"), "the demo does not say how to sign in: \(sesame.stderr)")
            XCTAssertTrue(
                Eventually.holdsBlocking(within: .seconds(60), every: .milliseconds(100)) {
                    let events = (try? String(contentsOf: trace, encoding: .utf8)) ?? ""
                    return events.contains("\"window-shown\"") && events.contains("\"page-loaded\"") && events.contains(base)
                }, "run \(run): the window did not open on the demo's sign-in page: \(sesame.stderr)")
            if run == 1 { try Self.expectTheDesktopKnowsTheWindow(environment: environment) }
            // Killed outright (run 2) as much as ended: the emulator goes with it.
            kill(sesame.process.processIdentifier, signal)
            sesame.process.waitUntilExit()
            XCTAssertTrue(
                Eventually.holdsBlocking(within: .seconds(10), every: .milliseconds(100)) { !Self.answers(base) },
                "run \(run): the emulator at \(base) outlived sesame (signal \(signal))")
        }
    }

    /// The desktop ties a window to Sesame's desktop entry (its icon, its name in the dock) by
    /// the window's WM_CLASS and the entry's `StartupWMClass`: the window `sesame` starts is
    /// `sesame-window`'s, and must still be `sesame`'s to the desktop.
    static func expectTheDesktopKnowsTheWindow(environment: [String: String]) throws {
        let entry = try String(
            contentsOf: Repository.root.appending(path: "Resources/desktop/org.sesame.Sesame.desktop"), encoding: .utf8)
        let wanted = try XCTUnwrap(entry.split(separator: "\n").first { $0.hasPrefix("StartupWMClass=") }?.dropFirst(15))
        let tree = try ProcessRunner.run(URL(filePath: "/usr/bin/xwininfo"), ["-root", "-tree"], environment: environment)
        XCTAssertEqual(tree.status, 0, tree.stderr)
        // Each window's line holds its WM_CLASS, ("res_name" "res_class"); WebKit's process has its own.
        let names = Set(tree.stdout.split(separator: "\n").compactMap { $0.firstMatch(of: /\("([^"]*)" "[^"]*"\)/)?.1 })
        XCTAssertTrue(names.contains(wanted), "no window's WM_CLASS is the desktop entry's StartupWMClass \(wanted): \(names)")
        XCTAssertFalse(names.contains("sesame-window"), "a window is sesame-window's to the desktop: \(names)")
    }

    /// The demo's state folder on a read-only disk (a tmpfs mounted read-only in a mount namespace
    /// of its own: root only, as `make test` runs): one sentence that names the folder and what
    /// to do, the read-only status (6), no `CocoaError`.
    func testAReadOnlyStateFolderIsSaidInOneSentence() throws {
        try XCTSkipUnless(getuid() == 0, "a read-only mount of its own needs root (unshare --mount)")
        let folder = Repository.temporaryDirectory("sesame-demo-ro")
        defer { try? FileManager.default.removeItem(at: folder) }
        let state = folder.appending(path: "state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = state.path
        environment["XDG_DATA_HOME"] = folder.appending(path: "data").path
        let sesame = try Repository.product("sesame").path
        let result = try ProcessRunner.run(
            URL(filePath: "/usr/bin/unshare"),
            [
                "--mount", "--propagation", "private", "/bin/sh", "-c",
                "mount -t tmpfs -o ro tmpfs \"$0\" && exec \"$1\" --demo", state.path, sesame,
            ], environment: environment)
        XCTAssertEqual(result.status, 6, result.stderr)
        XCTAssertTrue(
            result.stderr.contains("--demo keeps its emulator's state in \(state.path)/sesame/emulator, which cannot be created"),
            result.stderr)
        XCTAssertTrue(result.stderr.contains("it is read-only"), result.stderr)
        XCTAssertFalse(result.stderr.contains("CocoaError"), result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
    }

    /// Whether something answers HTTP at `base` (its OpenID configuration).
    private static func answers(_ base: String) -> Bool {
        let done = DispatchSemaphore(value: 0)
        final class Box: @unchecked Sendable { var answered = false }
        let box = Box()
        let url = URL(string: base + "/common/v2.0/.well-known/openid-configuration")!
        URLSession.shared.dataTask(with: url) { _, response, _ in
            box.answered = response != nil
            done.signal()
        }.resume()
        _ = done.wait(timeout: .now() + 5)
        return box.answered
    }
}
