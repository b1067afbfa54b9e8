import Foundation
import IdentityEmulator
import SesameCore
import SesameGIO
import SesameSamples
import SesameService
import SesameTestSupport
import SesameWindowModel
import XCTest

@testable import SesameGtk

/// The window the account service starts for one program's call (`sesame --service-face`).
final class ServiceWindowTests: GUITestCase {
    typealias IDs = SignInPageIDs

    /// alex is signed in on the Directory. A program asks the identity broker for a token of
    /// its own app, and the window the service starts signs alex in on that app's pages. The
    /// Directory's account is no part of that call: the window neither reads its people nor
    /// gets a token for it, during the sign-in or after it.
    func testTheWindowStartedForOneBrokerCallTouchesNoOtherAccount() throws {
        try MainActor.assumeIsolated {
            let storage = Repository.temporaryDirectory("sesame-service-window")
            let emulator = try RunningEmulator.startBlocking(users: 50)
            defer { emulator.stop() }
            do {
                let first = try GUIHarness(
                    settingsFile: "directory.plist", sample: .directory, service: emulator.base, storageDirectory: storage)
                defer { first.close() }
                first.waitForSignInPage("the Directory's sign-in")
                first.signInAsAlexUpToConsent()
                first.clickInPage(IDs.primaryButton)
                XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { first.peopleRows > 0 }, "the directory never filled")
            }
            let gui = try GUIHarness(
                settingsFile: "directory.plist", sample: .directory, service: emulator.base, moreSettingsFiles: ["me.plist"],
                storageDirectory: storage, startedForAProgram: true)
            defer { gui.close() }
            // The program's own app (Me's registration, as a broker client names it), configured
            // as the service configures it for the window.
            let store = gui.window.model.store
            var configured = false
            Task { @MainActor in
                guard var app = await store.configuration(forAccountType: "msalGraph") else { return }
                app.storageGroup = BrokerService.storageGroup
                await store.setConfiguration(app, forAccountType: BrokerService.accountTypePrefix + app.clientID)
                configured = true
            }
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { configured })
            var signedIn: Account?
            var answered = false
            Task { @MainActor in
                signedIn = try? await gui.window.serviceSignIns.brokerSignIn(
                    accountType: BrokerService.accountTypePrefix + "66855f8a-60cd-445e-a9bb-8cd8eadbd3fa",
                    program: ProgramIdentity.executable("/usr/bin/python3.11")!, parameters: [:])
                answered = true
            }
            gui.waitForSignInPage("the program's sign-in")
            gui.signInAsAlexUpToConsent()
            gui.clickInPage(IDs.primaryButton)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 20) { answered }, "the broker's sign-in never answered")
            XCTAssertEqual(signedIn?.username, "alex@contoso.onmicrosoft.com")
            let directory = {
                gui.peopleRows > 0 || gui.trace.events.contains { $0.fields.contains { $0.0 == "url" && $0.1.contains("/users") } }
            }
            // A watch for what must not come, as long as the first window took to fill (a wait with
            // no event to end it: the Directory's load, had it started, ends it at once).
            XCTAssertFalse(MainLoopBridge.spin(timeout: 5, until: directory), "the window loaded the Directory's people")
        }
    }
}
