import Foundation
import IdentityEmulator
import SesameGIO
import SesameSamples
import SesameTestSupport
import SesameWindowModel
import XCTest

@testable import SesameGtk

/// A laptop that loses its network and finds it again. The test plays the desktop's network
/// monitor (GIO's `GNetworkMonitor` says when a default route comes and goes; here the test says
/// it through the window's ``NetworkStatus``) and takes the service away for real (the emulator
/// stops, its port refuses), so every request fails as it would; what the window does about it
/// is the real window's.
final class OfflineTests: GUITestCase {
    /// The window opens while the computer is offline: the sign-in page cannot load, and the
    /// window says "You are offline". When the network is back the page loads by itself — nobody
    /// presses Retry — and alex signs in.
    func testASignInPageThatCouldNotLoadOfflineLoadsByItselfWhenTheNetworkIsBack() throws {
        try MainActor.assumeIsolated {
            let service = try Service()
            defer { service.end() }
            let network = NetworkStatus(isOnline: false)
            service.stop()
            let gui = try GUIHarness(
                settingsFile: "directory.plist", sample: .directory, screenshotPrefix: "offline-", service: service.base, network: network)
            defer { gui.close() }

            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 15) { gui.signInPage?.title == "Can’t reach 127.0.0.1" }, "the unreachable page was not told")
            XCTAssertEqual(gui.offlineBar, UserMessage.offline)
            // A page that never loaded came over no connection: the bar says nothing of encryption.
            XCTAssertEqual(gui.hostBar, "127.0.0.1:\(service.base.port ?? 0)", "the host bar speaks of a connection that never was")
            gui.screenshot("offline")

            try service.start()
            let before = gui.pagesLoaded
            network.update(isOnline: true)
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 15) { gui.pagesLoaded > before && gui.signInPage?.title == "Sign in to your account" },
                "the sign-in page did not load again when the network came back: '\(gui.signInPage?.title ?? "no view")'")
            XCTAssertNil(gui.offlineBar, "the window still says it is offline")
            XCTAssertTrue(gui.hostBar.hasSuffix(L("not encrypted")), "the loaded page's bar: \(gui.hostBar)")
            XCTAssertTrue(gui.has("page-reloaded"))
            gui.waitForSignInPage("the user name page")
            gui.signInAsAlexUpToConsent()
            gui.clickInPage(SignInPageIDs.primaryButton)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.peopleRows > 0 }, "the directory never filled")
        }
    }

    /// Signed in, the user searches while the network is gone: the page says "You are offline"
    /// (not "connection refused"), and when the network is back the same search runs by itself.
    func testASearchThatFailedOfflineRunsAgainByItselfWhenTheNetworkIsBack() throws {
        try MainActor.assumeIsolated {
            let service = try Service()
            defer { service.end() }
            let network = NetworkStatus()
            let gui = try GUIHarness(settingsFile: "directory.plist", sample: .directory, service: service.base, network: network)
            defer { gui.close() }
            gui.waitForSignInPage("sign-in")
            gui.signInAsAlexUpToConsent()
            gui.clickInPage(SignInPageIDs.primaryButton)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.peopleRows > 0 }, "the directory never filled")
            XCTAssertNil(gui.offlineBar)

            network.update(isOnline: false)
            service.stop()
            XCTAssertEqual(gui.offlineBar, UserMessage.offline)
            gui.search("meg")
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 15) { gui.directorySays == UserMessage.offline }, "the page said: \(gui.directorySays)")
            // The rows of the earlier search do not stay under the failed one's sentence.
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { gui.peopleRows == 0 }, "the earlier rows stayed: \(gui.peopleRows)")

            try service.start()
            network.update(isOnline: true)
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 15) { gui.people?.text(row: 0, column: 0)?.hasPrefix("Meg") == true },
                "the search did not run again when the network came back: \(gui.directorySays)")
            XCTAssertTrue(
                gui.trace.events.map(\.name).lastIndex(of: "list-rendered") ?? 0 > gui.trace.events.map(\.name).lastIndex(
                    of: "network-online") ?? .max)
            XCTAssertNil(gui.offlineBar)
        }
    }

    /// The identity service as a process of its own on a fixed port, which the test stops and
    /// starts again (its state directory keeps its signing key, sessions and refresh tokens).
    /// Not in the test process: the window's WebKit processes inherit the test process's
    /// sockets (SwiftNIO does not open them close-on-exec), so a listener of the test's would
    /// outlive its stop in them.
    final class Service {
        let port: Int
        let base: URL
        private let state = Repository.temporaryDirectory("sesame-offline")
        private var process: EmulatorProcess?

        init() throws {
            port = try FreePort.pick()
            base = URL(string: "http://127.0.0.1:\(port)")!
            try start()
        }

        func start() throws {
            let process = try EmulatorProcess(["--port", String(port), "--users", "50", "--state-dir", state.path])
            self.process = process
            guard process.readLine()?.hasSuffix(base.absoluteString) == true else {
                throw TestSupportError("the emulator did not start at \(base): \(process.standardError)")
            }
            Thread.detachNewThread { while process.readLine() != nil {} }
        }

        /// Ends the process: its port refuses from now on.
        func stop() {
            process?.stop()
            process = nil
        }

        func end() {
            stop()
            try? FileManager.default.removeItem(at: state)
        }
    }
}

extension GUIHarness {
    /// The "You are offline" bar's text while it shows.
    var offlineBar: String? {
        window.window.find(Label.self, named: L("Offline")).flatMap { $0.isMapped ? $0.text : nil }
    }
}
