import Foundation
import IdentityEmulator
import SesameTestSupport
import XCTest

/// Sesame as the desktop's identity broker (`com.microsoft.identity.broker1`), used by programs
/// built on Microsoft's MSAL for Python, unchanged (`enable_broker_on_linux=True`, through
/// Microsoft's pymsalruntime), while the user answers in the real window: the sign-in pages
/// through WebDriver, the question about the program through the accessibility tree.
///
/// MSAL and pymsalruntime know the identity platform only as `https://login.microsoftonline.com`,
/// so the identity emulator serves that name on port 443 with TLS, at a loopback address of the
/// test's own; the flow and all it starts (Sesame too) run in a private mount namespace whose
/// `/etc/hosts` leads Microsoft's names there and whose `/etc/ssl/certs` trusts the emulator's CA
/// (EndToEnd/microsoft_hosts.sh). The flow is EndToEnd/broker_flow.py; the programs are
/// EndToEnd/msal_broker_app.py, msal_second_app.py and msal_third_app.py.
final class BrokerEndToEndTests: XCTestCase {
    /// Where Microsoft's host names lead in the flow's namespace: the emulator listens here (all
    /// of 127.0.0.0/8 is this machine's, so port 443 here is free of whatever serves 127.0.0.1).
    static let address = "127.0.84.43"
    /// The two programs' app registrations (multi-tenant, with MSAL's broker redirect URI).
    static let firstClient = "5b0a2c1d-8f3e-4a6b-9c7d-1e2f3a4b5c6d"
    static let secondClient = "c7e4a9d2-3b1f-4e6a-8d5c-2f9b0a7e6d13"
    static let thirdClient = "0e8d7c6b-5a49-4382-9170-f6e5d4c3b2a1"
    /// The emulator's workforce tenant (contoso.onmicrosoft.com) by its id.
    static let tenantID = Tenant.contoso.id
    static let username = "megan@contoso.onmicrosoft.com"

    func testMSALProgramsSignInThroughSesameWithTheUsersSay() throws {
        let started = Date()
        let run = try flow()
        let seen = run.seen
        print("BrokerEndToEndTests: the flow took \(Int(Date().timeIntervalSince(started))) s")
        XCTAssertNil(seen["failed"], "the flow stopped: \(seen["failed"] ?? "")\n\(run.stderr.suffix(3000))")

        // 1. The first program's interactive sign-in: Sesame showed its sign-in page and asked about
        // the program (once, Always offered); megan's sign-in asked for her SMS code (MFA); MSAL got
        // a token for her, from the broker, that Graph takes.
        let first = step(seen, "first")
        XCTAssertEqual(first["broker_enabled"] as? Bool, true, "MSAL found no broker: \(first)")
        XCTAssertEqual(first["token_source"] as? String, "broker", "\(first)")
        XCTAssertEqual(first["graph"] as? Int, 200, "the first program got no token Graph takes: \(first)")
        XCTAssertEqual(first["graph_user"] as? String, Self.username)
        XCTAssertEqual(claims(first)["appid"] as? String, Self.firstClient, "the token is not for the program's client")
        XCTAssertEqual((first["sign_ins"] as? [Any])?.count, 1, "the sign-in page did not show once: \(first)")
        let pages = (first["sign_ins"] as? [[String: Any]])?.first ?? [:]
        XCTAssertNotNil(pages["sms_page"], "megan's sign-in through the broker asked for no SMS code: \(pages)")
        let firstQuestions = questions(first)
        XCTAssertEqual(firstQuestions.count, 1, "the program was not asked about once: \(first)")
        XCTAssertEqual(firstQuestions.first?["always_offered"] as? Bool, true, "Always was not offered: \(firstQuestions)")
        XCTAssertTrue(methods(first).contains("acquireTokenInteractively"), "\(first)")

        // 2. It lists megan.
        XCTAssertEqual(step(seen, "accounts")["accounts"] as? [String], [Self.username])

        // 3. Its token expired, a new one silently: no page, no question.
        XCTAssertEqual(seen["silent_after_expiry"] as? Bool, true, "the silent sign-in did not wait for the token to expire")
        let silent = step(seen, "silent")
        XCTAssertEqual(silent["token_source"] as? String, "broker", "\(silent)")
        XCTAssertEqual(silent["graph"] as? Int, 200, "the silent sign-in got no token Graph takes: \(silent)")
        XCTAssertNotNil(digest(silent))
        XCTAssertNotEqual(digest(silent), digest(first), "the silent sign-in returned the first token again")
        XCTAssertEqual(silent["shown"] as? [String], [], "a silent sign-in showed something: \(silent)")
        XCTAssertTrue(methods(silent).contains("acquireTokenSilently"), "\(silent)")

        // The question names the program as the kernel identifies it — python, whose Always covers
        // every program it runs, as the question says — the script as the program's own claim,
        // and the app it signs in as.
        let firstProgram = firstQuestions.first?["program"] as? String ?? ""
        XCTAssertTrue(firstProgram.hasPrefix("The program /usr/bin/python3"), "\(firstProgram)")
        XCTAssertTrue(firstProgram.contains("runs programs it is given: Always covers every program it runs"), "\(firstProgram)")
        XCTAssertTrue(firstProgram.contains("It says it runs"), "\(firstProgram)")
        XCTAssertTrue(firstProgram.contains("msal_broker_app.py"), "\(firstProgram)")
        XCTAssertTrue(firstProgram.contains("It signs in as the app \(Self.firstClient)"), "\(firstProgram)")

        // 3b. Every authority form developers write signs in and then gets a token silently through
        // Sesame, MSAL's instance discovery on: the tenant's domain name (discovery names its
        // endpoints by the tenant's id, as Entra does: pymsalruntime refuses a "non-canonical
        // realm"), its id, and `common`.
        for form in ["domain", "tenant_id", "common"] {
            let run = step(seen, "form_\(form)")
            let interactive = run["interactive"] as? [String: Any] ?? [:]
            let silent = run["silent"] as? [String: Any] ?? [:]
            XCTAssertEqual(interactive["graph"] as? Int, 200, "\(form): \(interactive)")
            XCTAssertEqual(silent["token_source"] as? String, "broker", "\(form): no silent token: \(silent)")
            XCTAssertEqual(silent["graph"] as? Int, 200, "\(form): \(silent)")
            XCTAssertEqual(silent["shown"] as? [String], [], "\(form): a silent token showed something: \(silent)")
            let issuer = ((silent["token"] as? [String: Any])?["claims"] as? [String: Any])?["tid"] as? String
            XCTAssertEqual(issuer, Self.tenantID, "\(form)")
        }

        // 4. Another program, with another app, is asked about on its own: a token for its client.
        let second = step(seen, "second")
        XCTAssertEqual(questions(second).count, 1, "the second program was not asked about: \(second)")
        XCTAssertTrue((questions(second).first?["program"] as? String ?? "").contains("msal_second_app.py"))
        XCTAssertTrue((questions(second).first?["program"] as? String ?? "").contains("It signs in as the app \(Self.secondClient)"))
        XCTAssertEqual(second["graph"] as? Int, 200, "the second program got no token Graph takes: \(second)")
        XCTAssertEqual(claims(second)["appid"] as? String, Self.secondClient)

        // 4b. azure-identity-broker: its AuthenticationRecord names the authority host with no port
        // (it failed as "'login.microsoftonline.com:443' is an invalid authority") and round-trips:
        // the next run's credential gets a token silently from it.
        let azure = step(seen, "azure_identity")
        let authenticated = azure["authenticate"] as? [String: Any] ?? [:]
        let record = authenticated["record"] as? [String: Any] ?? [:]
        XCTAssertEqual(record["authority"] as? String, "login.microsoftonline.com", "\(authenticated)")
        XCTAssertEqual(record["tenant_id"] as? String, Self.tenantID, "\(authenticated)")
        XCTAssertEqual(authenticated["graph"] as? Int, 200, "\(authenticated)")
        let fromRecord = azure["silent"] as? [String: Any] ?? [:]
        XCTAssertNil(fromRecord["error"], "\(fromRecord)")
        XCTAssertEqual(fromRecord["graph"] as? Int, 200, "\(fromRecord)")
        XCTAssertEqual(fromRecord["shown"] as? [String], [], "azure-identity silent credential showed something: \(fromRecord)")
        XCTAssertEqual((fromRecord["claims"] as? [String: Any])?["appid"] as? String, Self.secondClient)

        // 4c. Plain MSAL (no broker), each authority form, instance discovery on: signed in, an
        // issuer with no port, a silent token from the identity provider.
        let plain = step(seen, "plain_msal")
        for tenant in ["organizations", "common", "contoso.onmicrosoft.com", Self.tenantID] {
            let run = plain[tenant] as? [String: Any] ?? [:]
            XCTAssertEqual(run["signed_in"] as? String, "alex@contoso.onmicrosoft.com", "\(tenant): \(run)")
            XCTAssertEqual(run["issuer"] as? String, "https://login.microsoftonline.com/\(Self.tenantID)/v2.0", "\(tenant): \(run)")
            XCTAssertEqual(run["silent"] as? String, "identity_provider", "\(tenant): \(run)")
        }

        // 5. A third script with the first one's app is python too: what the first Always covered,
        // by its own words — a token, no page, no question. With an app nobody decided about it is
        // asked; denied, it gets MSAL's error and no token; asking again, no page and no question.
        let sameApp = step(seen, "third_same_app")
        XCTAssertEqual(sameApp["graph"] as? Int, 200, "\(sameApp)")
        XCTAssertEqual(sameApp["shown"] as? [String], [], "python's Always did not cover another script: \(sameApp)")
        let denied = step(seen, "third_denied")
        XCTAssertEqual(questions(denied).count, 1, "the third program was not asked about: \(denied)")
        XCTAssertNil(denied["token"], "a denied program got a token: \(denied)")
        XCTAssertTrue("\(denied)".contains("You did not allow this program"), "\(denied)")
        let again = step(seen, "third_again")
        XCTAssertEqual(again["shown"] as? [String], [], "a denied program was shown a page or asked again: \(again)")
        XCTAssertNil(again["token"], "a denied program got a token: \(again)")

        // 6. The first program signs out (MSAL forgets it); the second one's sign-in stays.
        XCTAssertEqual(step(seen, "removed")["removed"] as? [String], [Self.username])
        XCTAssertEqual(step(seen, "accounts_after_remove")["accounts"] as? [String], [])
        let kept = step(seen, "second_silent")
        XCTAssertEqual(kept["graph"] as? Int, 200, "the second program had no token after the first one signed out: \(kept)")
        XCTAssertEqual(kept["shown"] as? [String], [], "\(kept)")

        // Sesame kept its sign-ins in its files: the keyring holds only what pymsalruntime put there.
        let keyring = seen["keyring_items"] as? [String] ?? []
        XCTAssertFalse(keyring.contains { $0.hasPrefix("Sesame") }, "Sesame's tokens went to the programs' keyring: \(keyring)")
        XCTAssertFalse(run.traceText.contains("eyJ"), "a token reached the trace")
    }

    // MARK: Reading what the flow saw

    private func step(_ seen: [String: Any], _ name: String) -> [String: Any] { seen[name] as? [String: Any] ?? [:] }
    private func questions(_ step: [String: Any]) -> [[String: Any]] { step["questions"] as? [[String: Any]] ?? [] }
    private func claims(_ step: [String: Any]) -> [String: Any] { (step["token"] as? [String: Any])?["claims"] as? [String: Any] ?? [:] }
    private func digest(_ step: [String: Any]) -> String? { (step["token"] as? [String: Any])?["digest"] as? String }
    private func methods(_ step: [String: Any]) -> [String] {
        (step["broker_calls"] as? [[String: Any]] ?? []).compactMap { $0["method"] as? String }
    }

    /// On a computer megan registered from the window (docs/DEVICE.md), MSAL's broker client gets
    /// its program's token with the question and the app's consent page only — the page got the
    /// device's credential, so no password and no SMS code — and for an app an administrator
    /// consented to, with the question only; the tokens name the device.
    func testAnMSALProgramOnARegisteredComputerNeedsNoPassword() throws {
        let run = try flow("device")
        let seen = run.seen
        XCTAssertNil(seen["failed"], "the flow stopped: \(seen["failed"] ?? "")\n\(run.stderr.suffix(3000))")
        let deviceID = try XCTUnwrap(seen["device_id"] as? String)
        let first = step(seen, "first")
        XCTAssertEqual(first["broker_enabled"] as? Bool, true, "MSAL found no broker: \(first)")
        let signIns = first["sign_ins"] as? [[String: Any]] ?? []
        XCTAssertEqual(signIns.count, 1, "\(first)")
        XCTAssertEqual(signIns.first?["shown"] as? [String], ["consent"], "a page asked for more than the consent: \(signIns)")
        XCTAssertEqual(claims(first)["deviceid"] as? String, deviceID, "\(first)")
        XCTAssertEqual(first["graph"] as? Int, 200, "\(first)")
        // A program whose app an administrator consented to: the question, and no page at all.
        let second = step(seen, "second")
        XCTAssertEqual(second["shown"] as? [String], ["question"], "\(second)")
        XCTAssertEqual(questions(second).count, 1, "\(second)")
        XCTAssertEqual(claims(second)["deviceid"] as? String, deviceID, "\(second)")
        XCTAssertEqual(second["graph"] as? Int, 200, "\(second)")
        // Later, silently: no page, no question, the device still named.
        let silent = step(seen, "silent")
        XCTAssertEqual((silent["shown"] as? [String]) ?? [], [], "\(silent)")
        XCTAssertEqual(claims(silent)["deviceid"] as? String, deviceID, "\(silent)")
        for secret in ["x-ms-RefreshTokenCredential", "eyJ"] {
            XCTAssertFalse(run.traceText.contains(secret), "the trace holds \(secret)")
        }
    }

    // MARK: Running the flow

    struct Run {
        let seen: [String: Any]
        let stdout: String
        let stderr: String
        let traceText: String
    }

    /// The emulator as `login.microsoftonline.com:443` (access tokens that live 6 s, well inside
    /// the five minutes before expiry at which MSAL, pymsalruntime and Sesame renew them, so each
    /// silent request needs a new one, and the flow can wait for one to expire), a session bus of
    /// the test's own, and the flow in its namespace.
    func flow(_ name: String = "programs") throws -> Run {
        try XCTSkipUnless(getuid() == 0, "Microsoft's host names on this machine need root (a mount namespace)")
        XCTAssertTrue(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/WebKitWebDriver"),
            "WebKitWebDriver is missing: install webkit2gtk-driver (make test does)")
        let python = try Repository.python()
        let broker = try ProcessRunner.run(python, ["-c", "import importlib.util as u; print(bool(u.find_spec('pymsalruntime')))"])
        guard broker.stdout.hasPrefix("True") else {
            throw TestSupportError("\(python.path) has no pymsalruntime: run `make test` (its venv installs msal[broker])")
        }
        let scratch = Repository.temporaryDirectory("sesame-broker")
        // What the flow saw, whole, when something failed.
        final class Printed: @unchecked Sendable { var text = "" }
        let printed = Printed()
        addTeardownBlock { [weak self] in
            if (self?.testRun?.totalFailureCount ?? 0) > 0 { print("BrokerEndToEndTests: the flow saw \(printed.text)") }
        }
        defer { try? FileManager.default.removeItem(at: scratch) }
        let redirect = "https://login.microsoftonline.com/common/oauth2/nativeclient"
        let emulator = try EmulatorProcess(
            [
                "--host", Self.address, "--hostname", "login.microsoftonline.com", "--port", "443", "--tls", "--users", "50",
                "--device-registration-hostname", "enterpriseregistration.windows.net",
                "--state-dir", scratch.appending(path: "emulator").path, "--demo", "--access-token-lifetime", "6",
                "--client", "\(Self.firstClient)=\(redirect)", "--client", "\(Self.secondClient)=\(redirect)",
                "--client", "\(Self.thirdClient)=\(redirect)",
                "--multi-tenant", Self.firstClient, "--multi-tenant", Self.secondClient, "--multi-tenant", Self.thirdClient,
            ])
        defer { emulator.stop() }
        guard emulator.readLine()?.hasPrefix("identity-emulator listening on ") == true, let caLine = emulator.readLine(),
            caLine.hasPrefix("ca-certificate ")
        else {
            emulator.stop()
            throw TestSupportError(
                "The identity emulator could not serve login.microsoftonline.com on \(Self.address):443 (does another server "
                    + "listen on port 443 there, or on every address?): \(emulator.standardError)")
        }
        let certificateAuthority = String(caLine.dropFirst("ca-certificate ".count))
        // Its one-time codes are shown on the pages (--demo); its output is read so it never blocks.
        Thread.detachNewThread { [emulator] in
            while emulator.readLine() != nil {}
        }

        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = scratch.appending(path: "data").path
        let bus = try SessionBus(environment: environment)
        defer { bus.stop() }

        let endToEnd = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "EndToEnd")
        var flowEnvironment = ProcessInfo.processInfo.environment
        flowEnvironment["SESAME_E2E_APP_BUS"] = bus.address
        flowEnvironment["REQUESTS_CA_BUNDLE"] = certificateAuthority
        let result = try ProcessRunner.run(
            endToEnd.appending(path: "microsoft_hosts.sh"),
            [
                Self.address, certificateAuthority, "--", python.path, endToEnd.appending(path: "broker_flow.py").path,
                try Repository.product("sesame").path, scratch.path, Self.firstClient, Self.secondClient, Self.thirdClient,
                Self.tenantID, name,
            ],
            environment: flowEnvironment)
        printed.text = result.stdout
        let seen = try XCTUnwrap(
            try? JSONSerialization.jsonObject(with: Data((result.stdout.split(separator: "\n").last ?? "").utf8)) as? [String: Any],
            "the flow printed no result: \(result.stderr.suffix(3000))")
        XCTAssertEqual(result.status, 0, "the flow failed: \(result.stderr.suffix(3000))")
        let trace = (try? String(contentsOf: scratch.appending(path: "trace-1.jsonl"), encoding: .utf8)) ?? ""
        return Run(seen: seen, stdout: result.stdout, stderr: result.stderr, traceText: trace)
    }
}
