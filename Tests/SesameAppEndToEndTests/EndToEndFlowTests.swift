import Foundation
import IdentityEmulator
import SesameTestSupport
import XCTest

/// Every tutorial flow through the real app, driven from outside as a user's CI would drive it:
/// WebKitWebDriver starts `sesame --automation-mode` as its browser and Selenium fills the
/// identity service's pages; the GTK widgets are read and pressed through the accessibility tree
/// (AT-SPI); `--trace-events` says what happened underneath. Each flow runs against its own
/// in-process emulator (demo mode, so SMS and e-mail codes are on the pages) and its own storage,
/// so each starts signed out. The flows are in EndToEnd/e2e_flow.py.
final class EndToEndFlowTests: XCTestCase {
    // MARK: Directory

    func testAlexSignsInTheDirectoryFillsAndSigningOutAsksWhoSignsInNext() throws {
        let run = try flow("alex")
        XCTAssertEqual(
            run.seen["first_page"] as? String, run.base.appending(path: "contoso.onmicrosoft.com/oauth2/v2.0/authorize").absoluteString)
        XCTAssertEqual(run.seen["title"] as? String, "Sign in to your account")
        XCTAssertTrue((run.seen["consent"] as? [String])?.contains("Read all users’ basic profiles") == true)
        XCTAssertTrue(run.has("automation-session"), "WebDriver did not drive the sign-in view")
        XCTAssertTrue(run.has("redirect-intercepted"))
        XCTAssertTrue(run.has("token-acquired", ["accountType": "myGraphService"]))
        XCTAssertGreaterThan(run.seen["rows"] as? Int ?? 0, 0, "the people list (accessibility tree) is empty")
        XCTAssertEqual(run.seen["sign_in_visible_after"] as? Bool, false, "the sign-in view stays on screen after the redirect")
        XCTAssertFalse(run.traceText.contains("Passw0rd"), "the password reached the trace")
        // Signed out, the list empties; "Sign in" asks for an account again, and megan signs in.
        XCTAssertEqual(run.seen["rows_after_sign_out"] as? Int, 0)
        XCTAssertEqual(run.seen["asked_again"] as? Bool, true)
        XCTAssertGreaterThan(run.seen["rows_after_switch"] as? Int ?? 0, 0)
        XCTAssertEqual(run.count("token-acquired", ["accountType": "myGraphService"]), 2)
    }

    func testMeganSignsInWithTheSMSCode() throws {
        let run = try flow("megan")
        XCTAssertTrue((run.seen["sms_page"] as? String)?.contains("+X XXXXXXX99") == true)
        XCTAssertTrue(run.has("token-acquired", ["accountType": "myGraphService"]))
        XCTAssertTrue(run.has("list-rendered", ["view": "directory"]))
    }

    func testSearchingMegShowsMeganAndAnApostropheWorks() throws {
        let run = try flow("search")
        let meg = try XCTUnwrap(run.seen["meg"] as? [String])
        XCTAssertTrue(meg.contains("Megan Bowen"), "\(meg)")
        XCTAssertTrue(meg.allSatisfy { $0.lowercased().hasPrefix("meg") }, "\(meg)")
        let apostrophe = try XCTUnwrap(run.seen["apostrophe"] as? [String])
        XCTAssertTrue(apostrophe.contains("Seán O'Brien"), "\(apostrophe)")
        XCTAssertTrue(apostrophe.allSatisfy { $0.contains("O'Brien") }, "\(apostrophe)")
        XCTAssertEqual(run.seen["nobody"] as? [String], [])
        // No one matching is a status page in the list's place, naming what was searched.
        XCTAssertTrue(
            (run.seen["status"] as? [String])?.contains { $0.hasPrefix("No one matches") && $0.contains("zzzq") } == true,
            "\(run.seen["status"] ?? "")")
        XCTAssertFalse(run.events.contains { $0["event"] as? String == "api-call" && ($0["status"] as? Int ?? 0) >= 400 })
    }

    func testScrollingLoadsTheNextPageOfATenThousandUserDirectory() throws {
        let run = try flow("paging", users: 10_000)
        let first = try XCTUnwrap(run.seen["first_rows"] as? Int)
        XCTAssertGreaterThan(first, 0)
        XCTAssertEqual(run.seen["first_table_rows"] as? Int, first)
        XCTAssertEqual(run.seen["after_scroll_rows"] as? Int, 2 * first, "scrolling to the end did not load one more page")
        XCTAssertEqual(run.seen["after_scroll_table_rows"] as? Int, 2 * first)
        XCTAssertEqual(run.seen["distinct_user_names"] as? Int, 2 * first, "the second page repeats people")
        XCTAssertTrue(
            run.events.contains { ($0["url"] as? String)?.contains("skiptoken") == true }, "the next page did not follow @odata.nextLink")
    }

    // MARK: Errors

    func testAWrongPasswordShowsTheInlineErrorThenTheRightOneSignsIn() throws {
        let run = try flow("wrong-password")
        XCTAssertEqual(
            run.seen["inline_error"] as? String, "Your account or password is incorrect. If you don't remember your password, reset it now."
        )
        XCTAssertEqual(
            run.seen["still_on"] as? String, run.base.appending(path: "contoso.onmicrosoft.com/login").absoluteString,
            "a wrong password must not redirect")
        XCTAssertEqual(run.count("redirect-intercepted"), 1)
        XCTAssertFalse(run.has("sign-in-failed"), "a wrong password is not a failed sign-in")
        XCTAssertTrue(run.has("list-rendered", ["view": "directory"]))
        XCTAssertFalse(run.traceText.contains("not-the-password"))
    }

    func testDeclinedConsentShowsTheErrorWithRetryAndRetrySignsIn() throws {
        let run = try flow("consent-retry")
        XCTAssertEqual(
            run.seen["error"] as? String,
            "You did not give this app the permissions it asks for. To use it, sign in again and accept them. (AADSTS65004)")
        XCTAssertEqual(run.seen["retry_visible"] as? Bool, true)
        XCTAssertEqual(run.seen["list_before_retry"] as? Bool, false)
        XCTAssertEqual(run.seen["sign_in_visible_on_retry"] as? Bool, true, "Retry did not bring sign-in back")
        XCTAssertTrue(run.has("sign-in-failed", ["error": "AADSTS65004"]))
        XCTAssertEqual(run.count("redirect-intercepted"), 2)
        XCTAssertTrue(run.has("token-acquired", ["accountType": "myGraphService"]))
        XCTAssertTrue(run.has("list-rendered", ["view": "directory"]))
        XCTAssertEqual(run.seen["error_visible_after"] as? Bool, false)
    }

    // MARK: Federation

    /// pat's domain, fabrikam.example, is federated: Entra sends the view to his organisation's
    /// own AD FS on another host (the emulator's federation host, `localhost` beside its
    /// `127.0.0.1`), which takes his password and posts its signed answer back to Entra. The view
    /// follows, the host bar shows where he is, and only the redirect to the app is intercepted.
    func testPatSignsInThroughHisOrganisationsOwnSignInPage() throws {
        let run = try flow("federated")
        let port = try XCTUnwrap(run.base.port)
        XCTAssertEqual(run.seen["organisation_page"] as? String, "http://localhost:\(port)/adfs/ls/")
        XCTAssertEqual(run.seen["organisation_title"] as? String, "Sign In")
        // The authorize URL's state, nonce and PKCE challenge never reach the other host: at most
        // Entra's origin is its Referer (WebKit's strict-origin-when-cross-origin).
        let referrer = try XCTUnwrap(run.seen["organisation_referrer"] as? String)
        for secret in ["state=", "nonce=", "code_challenge", "?"] {
            XCTAssertFalse(referrer.contains(secret), "the organisation's page was told \(referrer)")
        }
        XCTAssertEqual(run.seen["organisation_host"] as? String, "localhost:\(port) — not encrypted", "the host bar at AD FS")
        XCTAssertEqual(run.seen["back_at"] as? String, run.base.appending(path: "login.srf").absoluteString)
        let navigations = run.matching("navigation", [:]).compactMap { $0["url"] as? String }
        let there = try XCTUnwrap(navigations.firstIndex { $0.hasPrefix("http://localhost:\(port)/adfs/ls/") }, "\(navigations)")
        let back = try XCTUnwrap(navigations.firstIndex { $0 == run.base.appending(path: "login.srf").absoluteString }, "\(navigations)")
        XCTAssertLessThan(there, back, "\(navigations)")
        XCTAssertEqual(run.count("redirect-intercepted"), 1)
        XCTAssertEqual(run.count("navigation", ["action": "intercept"]), 1)
        XCTAssertTrue(run.has("token-acquired", ["accountType": "myGraphService"]))
        XCTAssertGreaterThan(run.seen["rows"] as? Int ?? 0, 0)
        let names = run.events.compactMap { $0["event"] as? String }
        XCTAssertLessThan(
            try XCTUnwrap(names.firstIndex(of: "redirect-intercepted")), try XCTUnwrap(names.firstIndex(of: "list-rendered")), "\(names)")
        XCTAssertFalse(run.traceText.contains("Passw0rd"), "the password reached the trace")
        // WebKit's processes — one of which ran the organisation's pages — hold nothing of the app's.
        let children = try XCTUnwrap(run.seen["children"] as? [String])
        XCTAssertTrue(children.contains { $0.hasPrefix("WebKitWebProces") }, "\(children)")
        XCTAssertEqual(run.seen["children_hold"] as? [String], [], "a process the app started holds the app's descriptors")
        XCTAssertEqual(run.seen["inheritable"] as? [String], [], "the app holds descriptors a program it starts would inherit")
    }

    // MARK: Tasks (B2C)

    func testSamAddsTwoTasksSignsOutAndKimSeesNoneOfThem() throws {
        let run = try flow("tasks")
        XCTAssertEqual(run.seen["sam"] as? String, "Signed in as Sam Carter")
        XCTAssertEqual(run.seen["sam_before"] as? [String], [])
        XCTAssertEqual(run.seen["sam_tasks"] as? [String], ["Water the plants", "Call the bank"])
        XCTAssertEqual(run.seen["after_sign_out"] as? [String], [])
        XCTAssertEqual(run.seen["action_after_sign_out"] as? Bool, true, "signed out, the page did not offer \"Sign in\"")
        XCTAssertEqual(run.seen["kim"] as? String, "Signed in as Kim Abercrombie")
        XCTAssertEqual(run.seen["kim_tasks"] as? [String], [], "kim sees sam's tasks")
        XCTAssertEqual(
            run.events.filter { $0["event"] as? String == "api-call" && $0["method"] as? String == "POST" }.map { $0["status"] as? Int },
            [204, 204])
        XCTAssertEqual(run.count("token-acquired", ["accountType": "B2C_Acccount"]), 2)
        XCTAssertFalse(run.traceText.contains("Water the plants"), "task texts do not belong in the trace")
    }

    func testForgotPasswordLeadsIntoThePasswordResetPolicy() throws {
        let run = try flow("forgot-password")
        XCTAssertTrue(run.has("sign-in-failed", ["error": "AADB2C90118"]))
        XCTAssertEqual(run.seen["reset_page"] as? String, "Reset your password")
        XCTAssertEqual((run.seen["reset_policy"] as? [String])?.first?.lowercased(), "b2c_1_passwordreset")
        XCTAssertEqual(run.seen["after_reset"] as? String, "Signed in as Kim Abercrombie")
        XCTAssertEqual(run.seen["new_password_signs_in"] as? String, "Signed in as Kim Abercrombie")
        XCTAssertFalse(run.traceText.contains("N3w-Passw0rd"))
    }

    func testSignUpCreatesAUserWhoCanThenSignIn() throws {
        let run = try flow("sign-up")
        XCTAssertEqual(run.seen["sign_up_page"] as? String, "Sign up")
        XCTAssertEqual(run.seen["after_sign_up"] as? String, "Signed in as Robin Ortiz")
        XCTAssertEqual(run.seen["signs_in_again"] as? String, "Signed in as Robin Ortiz")
        XCTAssertEqual(run.count("token-acquired", ["accountType": "B2C_Acccount"]), 2)
    }

    // MARK: Me (MSAL)

    /// Access tokens live 2 minutes here, less than the 5 minutes before expiry at which a client
    /// refreshes, so every silent call uses the refresh token, and its revocation is noticed.
    func testMeIsInteractiveThenSilentThenInteractiveAfterTheRevocation() throws {
        let run = try flow("me", accessTokenLifetime: 120)
        XCTAssertGreaterThan(run.seen["first_navigations"] as? Int ?? 0, 0, "the first call was not interactive")
        XCTAssertEqual(run.seen["second_navigations"] as? Int, 0, "the second call navigated: it was not silent")
        XCTAssertEqual(run.seen["second_sign_in_visible"] as? Bool, false)
        let second = try XCTUnwrap(run.seen["second_token_requests"] as? [Int])
        XCTAssertFalse(second.isEmpty, "the silent call did not use the refresh token")
        XCTAssertTrue(second.allSatisfy { $0 == 200 })
        XCTAssertEqual(run.seen["revoke_status"] as? Int, 200)
        XCTAssertEqual((run.seen["third_token_requests"] as? [Int])?.first, 400, "the revoked refresh token was not refused")
        XCTAssertEqual(run.seen["third_sign_in_visible"] as? Bool, true, "no interactive sign-in after the revocation")
        XCTAssertGreaterThan(run.seen["third_navigations"] as? Int ?? 0, 0)
        let log = try XCTUnwrap(run.seen["log"] as? String)
        XCTAssertEqual(log.components(separatedBy: "acquireToken (interactive)").count - 1, 2, log)
        XCTAssertTrue(log.contains("acquireTokenSilent"), log)
        XCTAssertTrue(log.contains("interaction required: Your sign-in has expired or was revoked; sign in again. (AADSTS50173)"), log)
        XCTAssertEqual(log.components(separatedBy: "→ 200").count - 1, 3, log)
    }

    // MARK: The keyboard alone

    func testMeganSignsInWithTheKeyboardAloneEnterGoesForwardEscapeGoesBack() throws {
        let run = try flow("keyboard-megan")
        XCTAssertEqual(
            run.seen["steps"] as? [String], ["i0118", "i0116", "i0118", "idTxtBx_SAOTCC_OTC", "idSIButton9", "idSIButton9"],
            "where Enter and Escape went")
        XCTAssertEqual(run.seen["name_kept"] as? String, "megan@contoso.onmicrosoft.com", "Escape lost the user name")
        XCTAssertEqual(run.seen["kmsi_title"] as? String, "Stay signed in?")
        XCTAssertEqual(run.seen["consent_title"] as? String, "Permissions requested")
        XCTAssertEqual(run.seen["redirect"] as? Bool, true)
        XCTAssertTrue(run.has("token-acquired", ["accountType": "myGraphService"]))
        XCTAssertTrue(run.has("list-rendered", ["view": "directory"]))
    }

    func testSamSignsInToB2CWithTheKeyboardAlone() throws {
        let run = try flow("keyboard-sam")
        XCTAssertEqual(run.seen["redirect"] as? Bool, true, "Enter after the password did not sign in")
        XCTAssertEqual(run.seen["sam"] as? String, "Signed in as Sam Carter")
        XCTAssertFalse(run.has("sign-in-failed", ["error": "AADB2C90118"]), "Enter asked to reset the password")
    }

    // MARK: The system browser

    /// The desktop's default browser — WebKitGTK's MiniBrowser under WebDriver, registered in the
    /// test's XDG folders by a .desktop file and mimeapps.list — gets the sign-in; the answer
    /// comes back on the app's loopback listener.
    func testAlexSignsInThroughTheSystemBrowserAndTheDirectoryFills() throws {
        let run = try flow("setting", script: "system_browser_flow.py")
        XCTAssertEqual(run.seen["waiting"] as? Bool, true, "the window did not say the sign-in is in the browser")
        let browser = try XCTUnwrap(run.seen["browser"] as? [String: Any])
        XCTAssertEqual(
            browser["opened"] as? String, run.base.appending(path: "contoso.onmicrosoft.com/oauth2/v2.0/authorize").absoluteString)
        XCTAssertEqual(browser["title"] as? String, "You can close this tab – Sesame")
        XCTAssertEqual(
            browser["pages"] as? [String],
            ["Sign in to your account", "Sign in to your account", "Stay signed in?", "Permissions requested"],
            "the pages the browser went through")
        let answeredAt = try XCTUnwrap(browser["answered_at"] as? String)
        XCTAssertTrue(answeredAt.hasPrefix("http://127.0.0.1:") && answeredAt.hasSuffix("/"), answeredAt)
        XCTAssertTrue(run.has("browser-opened"))
        XCTAssertTrue(run.has("loopback-redirect-received", ["answer": "received"]))
        XCTAssertTrue(run.has("token-acquired", ["accountType": "myGraphService"]))
        XCTAssertTrue(run.has("list-rendered", ["view": "directory"]))
        XCTAssertFalse(run.has("redirect-intercepted"), "the embedded view took part")
        let names = run.events.compactMap { $0["event"] as? String }
        let order = ["browser-opened", "loopback-redirect-received", "token-acquired", "list-rendered"].map {
            names.firstIndex(of: $0) ?? -1
        }
        XCTAssertEqual(order, order.sorted(), "out of order: \(names)")
        XCTAssertGreaterThan(run.seen["rows"] as? Int ?? 0, 0)
        XCTAssertEqual(run.seen["people"] as? Int, run.seen["rows"] as? Int)
        XCTAssertEqual(run.seen["waiting_after"] as? Bool, false, "the window still waits for the browser")
        XCTAssertFalse(run.traceText.contains("Passw0rd"))
    }

    /// The sign-in starts in the window's own view; "Continue in your browser" moves it to the
    /// default browser, where it finishes.
    func testContinueInYourBrowserMovesASignInToTheSystemBrowser() throws {
        let run = try flow("button", script: "system_browser_flow.py")
        XCTAssertEqual(run.seen["button_in_view"] as? Bool, true, "no Continue in your browser while the view is up")
        XCTAssertEqual(run.seen["waiting"] as? Bool, true)
        let names = run.events.compactMap { $0["event"] as? String }
        let order = [
            "page-loaded", "continue-in-browser", "sign-in-moved-to-browser", "browser-opened", "loopback-redirect-received",
            "token-acquired", "list-rendered",
        ].map { names.firstIndex(of: $0) ?? -1 }
        XCTAssertFalse(order.contains(-1), "missing events: \(names)")
        XCTAssertEqual(order, order.sorted(), "out of order: \(names)")
        XCTAssertFalse(run.has("redirect-intercepted"), "the embedded view finished the sign-in")
        XCTAssertEqual(run.count("token-acquired", ["accountType": "myGraphService"]), 1)
        XCTAssertGreaterThan(run.seen["people"] as? Int ?? 0, 0)
        XCTAssertFalse(run.has("sign-in-failed"), "moving to the browser showed an error")
    }

    // MARK: Any OpenID provider

    /// oidc-provider-mock (from PyPI; authlib inside) with a settings file that names only its
    /// discovery URL, a client id and a secret: through the window, then `sesame token`.
    func testAThirdPartyOpenIDProviderSignsInThroughTheWindowAndSesameToken() throws {
        let run = try flow("openid", script: "openid_flow.py")
        XCTAssertNil(run.seen["provider_auth_methods"] as? [String], "the provider now names its methods; the test expected the default")
        XCTAssertTrue((run.seen["provider_page"] as? String)?.hasSuffix("/oauth2/authorize") == true, "\(run.seen)")
        XCTAssertTrue(run.has("token-acquired", ["accountType": "openid"]))
        let log = try XCTUnwrap(run.seen["log"] as? String)
        XCTAssertTrue(log.contains("acquireToken (interactive)"), log)
        XCTAssertTrue(log.contains("/userinfo → 200"), log)
        XCTAssertTrue(log.contains("\"email\" : \"alice@example.com\""), log)
        XCTAssertTrue((run.seen["accounts"] as? String)?.contains("alice@example.com") == true, "\(run.seen["accounts"] ?? "")")
        XCTAssertEqual(run.seen["token_status"] as? [Int], [0, 0], run.seen["token_errors"] as? String ?? "")
        // The provider answered the code's redemption, then the refresh of its minute-long token
        // (HTTP Basic: the provider refuses refreshes any other way), each 200.
        XCTAssertEqual(run.seen["token_requests"] as? [String], ["200", "200"], "the provider's token requests")
        // `sesame token` prints the token the window refreshed (the log shows its last four characters).
        let tokens = try XCTUnwrap(run.seen["tokens"] as? [String])
        XCTAssertEqual(tokens.count, 2)
        XCTAssertEqual(tokens.first, tokens.last)
        let masked = try XCTUnwrap(log.split(separator: "\n").first { $0.hasPrefix("token: ") })
        XCTAssertTrue(
            masked.contains(String(tokens[0].suffix(4))) && masked.contains("(\(tokens[0].count) chars)"),
            "\(masked) vs \(tokens[0].count) chars")
        XCTAssertFalse(run.traceText.contains("not-a-real-secret-4711"), "the client secret reached the trace")
    }

    /// The issue's case: the B2C sample's keys plus `discoveryURL` sign in against a provider that
    /// is not Microsoft's. Before, the file's `discoveryURL` was ignored and discovery was fetched
    /// from a path derived from `authURL` (`/v2.0/.well-known/openid-configuration`), which this
    /// provider does not serve, so the sign-in failed. The provider has no task API: the Tasks
    /// page's list fails after the sign-in, and nothing here asserts on it.
    func testATasksShapedFileWithDiscoveryURLSignsInAtAThirdPartyOpenIDProvider() throws {
        let run = try flow("openid-tasks", script: "openid_flow.py")
        XCTAssertTrue((run.seen["provider_page"] as? String)?.hasSuffix("/oauth2/authorize") == true, "\(run.seen)")
        XCTAssertTrue(run.has("token-acquired", ["accountType": "tasks-oidc"]), "\(run.events.compactMap { $0["event"] })")
        XCTAssertFalse(run.has("sign-in-failed"), "\(run.matching("sign-in-failed", [:]))")
        XCTAssertEqual(run.seen["accounts_status"] as? Int, 0, run.seen["accounts_errors"] as? String ?? "")
        let accounts = try XCTUnwrap(run.seen["accounts"] as? String)
        XCTAssertTrue(accounts.contains("tasks-oidc") && accounts.contains("alice@example.com"), accounts)
        // Every key of the file is one a Tasks file reads.
        XCTAssertFalse((run.seen["accounts_errors"] as? String ?? "").contains("warning"), "\(run.seen["accounts_errors"] ?? "")")
        // Discovery came from the file's discoveryURL, never from the path derived from authURL.
        let discoveries = try XCTUnwrap(run.seen["discovery_requests"] as? [String])
        XCTAssertTrue(discoveries.contains { $0.hasPrefix("GET /.well-known/openid-configuration") }, "\(discoveries)")
        XCTAssertFalse(discoveries.contains { $0.contains("/v2.0/") }, "\(discoveries)")
        // The code's redemption, with the secret in HTTP Basic as discovery's default says.
        XCTAssertEqual((run.seen["token_requests"] as? [String])?.first, "200", "\(run.seen)")
        XCTAssertFalse(run.traceText.contains("not-a-real-secret-4711"), "the client secret reached the trace")
    }

    // MARK: Restart

    func testTheAppRestartedWithTheSameStorageSignsInSilently() throws {
        let run = try flow("restart")
        let second = try XCTUnwrap(run.traces.dropFirst().first, "no second run")
        XCTAssertEqual(run.seen["second_sign_in_visible"] as? Bool, false, "the sign-in view was shown after the restart")
        XCTAssertEqual(run.seen["second_rows"] as? Int, run.seen["first_rows"] as? Int)
        XCTAssertEqual(run.seen["second_rows_in_table"] as? Int, run.seen["second_rows"] as? Int)
        let names = second.compactMap { $0["event"] as? String }
        XCTAssertFalse(names.contains("navigation"), "the restarted app navigated: \(names)")
        XCTAssertFalse(names.contains("page-loaded"))
        XCTAssertFalse(names.contains("redirect-intercepted"))
        XCTAssertTrue(names.contains("list-rendered"))
    }

    func testKilledWhileItsFirstGraphCallIsUnderWayTheAppComesBackSignedIn() throws {
        let run = try flow("crash")
        XCTAssertEqual(run.seen["rendered_before_kill"] as? Bool, false, "the Graph call had ended before the kill")
        let first = try XCTUnwrap(run.traces.first)
        XCTAssertTrue(first.contains { $0["event"] as? String == "redirect-intercepted" })
        let second = try XCTUnwrap(run.traces.dropFirst().first, "no second run")
        XCTAssertEqual(run.seen["second_sign_in_visible"] as? Bool, false, "the sign-in was lost with the process")
        XCTAssertGreaterThan(run.seen["second_rows"] as? Int ?? 0, 0)
        let names = second.compactMap { $0["event"] as? String }
        XCTAssertFalse(names.contains("redirect-intercepted"), "the restarted app signed in again: \(names)")
        XCTAssertFalse(names.contains("page-loaded"))
    }

    // MARK: Running a flow

    struct Run {
        let seen: [String: Any]
        /// One list of events per run of the app (the restart flow has two).
        let traces: [[[String: Any]]]
        let traceText: String
        let base: URL
        var events: [[String: Any]] { traces.first ?? [] }

        func matching(_ event: String, _ fields: [String: String]) -> [[String: Any]] {
            events.filter { candidate in
                candidate["event"] as? String == event && fields.allSatisfy { key, value in candidate[key].map { "\($0)" } == value }
            }
        }
        func has(_ event: String, _ fields: [String: String] = [:]) -> Bool { !matching(event, fields).isEmpty }
        func count(_ event: String, _ fields: [String: String] = [:]) -> Int { matching(event, fields).count }
    }

    /// Runs one flow of e2e_flow.py against a fresh demo-mode emulator.
    func flow(_ name: String, script: String = "e2e_flow.py", users: Int = 300, accessTokenLifetime: Int? = nil) throws -> Run {
        XCTAssertTrue(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/WebKitWebDriver"),
            "WebKitWebDriver is missing: install webkit2gtk-driver (make test does)")
        let emulator = try RunningEmulator.startBlocking(users: users, demo: true) { $0.accessTokenLifetime = accessTokenLifetime }
        defer { emulator.stop() }
        let scratch = Repository.temporaryDirectory("sesame-e2e-\(name)")
        defer { try? FileManager.default.removeItem(at: scratch) }

        let program = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "EndToEnd/\(script)")
        let result = try ProcessRunner.run(
            try Repository.python(),
            [program.path, name, try Repository.product("sesame").path, emulator.base.absoluteString, scratch.path])
        XCTAssertEqual(result.status, 0, "flow \(name): \(result.stderr.suffix(3000))")

        let seen = try XCTUnwrap(
            try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
            "flow \(name) printed no result: \(result.stderr.suffix(3000))")
        var traces: [[[String: Any]]] = []
        var text = ""
        for index in 1... {
            guard let contents = try? String(contentsOf: scratch.appending(path: "trace-\(index).jsonl"), encoding: .utf8) else { break }
            text += contents
            traces.append(
                contents.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        }
        return Run(seen: seen, traces: traces, traceText: text, base: emulator.base)
    }
}
