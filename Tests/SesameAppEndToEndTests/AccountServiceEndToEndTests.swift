import Foundation
import IdentityEmulator
import SesameTestSupport
import XCTest

/// Sesame's account service on a real session bus (a `dbus-daemon` of the test's own), used by
/// other programs — copies of `gdbus` at different paths, which the service tells apart by the
/// executable the bus daemon's pid runs — while the user answers in the real window, pressed
/// through the accessibility tree. The flow is EndToEnd/service_flow.py.
final class AccountServiceEndToEndTests: XCTestCase {
    func testProgramsGetTokensOnlyWithTheUsersSayAndShareOneRefresh() throws {
        let run = try flow("service")
        let seen = run.seen
        let username = "alex@contoso.onmicrosoft.com"
        // A program nobody decided about lists nothing: no user name.
        let undecided = try XCTUnwrap(seen["list_undecided"] as? [String: Any])
        XCTAssertEqual(undecided["status"] as? Int, 0, "\(undecided)")
        XCTAssertEqual(undecided["out"] as? String, "(@aa{sv} [],)\n")
        XCTAssertFalse("\(undecided)".contains("alex"), "an undecided program saw the account")

        // The first request of each program asked, once per program, and lists what the token carries.
        let programs = try XCTUnwrap(seen["programs"] as? [String: Any])
        let tools = try XCTUnwrap(programs["tools"] as? [String])
        XCTAssertEqual(seen["asked"] as? [String], tools.map { "The program \($0)" })
        XCTAssertEqual(seen["first_question"] as? String, "Allow \u{2068}tool-1\u{2069} to use \u{2068}\(username)\u{2069}?")
        XCTAssertEqual(seen["first_permissions"] as? String, "• User.Read\n• User.ReadBasic.All")
        XCTAssertEqual(seen["first_status"] as? [Int], [0])
        let listed = try XCTUnwrap(seen["list_allowed"] as? String)
        XCTAssertTrue(listed.contains("'username': <'\(username)'>"), listed)
        XCTAssertTrue(listed.contains("'account_type': <'myGraphService'>"), listed)
        XCTAssertFalse(listed.contains("eyJ"), "a token in the list")

        // 50 requests from 5 allowed programs: all answered, one token, one refresh; Graph takes it.
        XCTAssertEqual(seen["concurrent_status"] as? [Int], [0], "\(seen["concurrent_errors"] ?? "")")
        XCTAssertEqual(seen["concurrent_distinct_tokens"] as? Int, 1)
        XCTAssertEqual(seen["concurrent_refreshes"] as? Int, 1, "50 concurrent requests did not share one refresh")
        XCTAssertEqual(seen["graph_status"] as? Int, 200, "the emulator's Graph refused the token")
        XCTAssertGreaterThan(seen["expires_at"] as? Int ?? 0, Int(Date().timeIntervalSince1970))

        // Deny: a D-Bus error that names no account, no token, and it is kept.
        let denied = try XCTUnwrap(seen["denied"] as? [String: Any])
        XCTAssertNotEqual(denied["status"] as? Int, 0)
        XCTAssertTrue((denied["error"] as? String)?.contains("org.sesame.Accounts1.Error.AccessDenied") == true, "\(denied)")
        XCTAssertFalse((denied["error"] as? String ?? "").contains("alex"), "the refusal named the account")
        XCTAssertEqual(denied["out"] as? String, "")
        let again = try XCTUnwrap(seen["denied_again"] as? [String: Any])
        XCTAssertTrue((again["error"] as? String)?.contains("AccessDenied") == true, "\(again)")

        // A caller in a mount namespace of its own, with another program over tool-1's path: an
        // unverified program, asked (never Always), refused; a fake .flatpak-info is not believed.
        XCTAssertEqual(seen["bwrap_question"] as? String, "An unverified program that claims to be \(tools[0])")
        XCTAssertEqual(seen["bwrap_always_offered"] as? Bool, false)
        XCTAssertTrue(((seen["bwrap"] as? [String: Any])?["error"] as? String)?.contains("AccessDenied") == true, "\(seen["bwrap"] ?? "")")
        XCTAssertEqual(seen["flatpak_question"] as? String, "An unverified program that claims to be \(tools[1])")
        XCTAssertTrue(((seen["flatpak"] as? [String: Any])?["error"] as? String)?.contains("AccessDenied") == true)

        // A decision taken back asks again; the same name at another path is asked about on its own.
        XCTAssertEqual(seen["asked_again"] as? String, "The program \(tools[0])")
        XCTAssertEqual((seen["after_revoke"] as? [String: Any])?["token"] as? Bool, true)
        let impostor = try XCTUnwrap(programs["impostor"] as? String)
        XCTAssertEqual(seen["impostor_question"] as? String, "The program \(impostor)")
        XCTAssertTrue(((seen["impostor"] as? [String: Any])?["error"] as? String)?.contains("AccessDenied") == true)

        // `sesame token` and `sesame accounts` went through the running service, unasked.
        let command = try XCTUnwrap(seen["sesame_token"] as? [String: Any])
        XCTAssertEqual(command["status"] as? Int, 0, "\(command)")
        XCTAssertEqual(command["jwt"] as? Bool, true)
        XCTAssertEqual(command["graph"] as? Int, 200)
        XCTAssertEqual(seen["sesame_through_service"] as? [String], ["sesame"])
        XCTAssertTrue(
            (seen["sesame_accounts"] as? String)?.contains("<\(username)>") == true, "\(seen["sesame_accounts"] ?? "")")

        // A sign-out through the bus leaves the window's menu at once.
        XCTAssertEqual((seen["sign_out"] as? [String: Any])?["status"] as? Int, 0, "\(seen["sign_out"] ?? "")")
        XCTAssertEqual(seen["menu_after_sign_out"] as? String, "Not signed in")
        XCTAssertEqual(seen["sign_in_offered"] as? Bool, true)
        XCTAssertEqual(seen["list_after_sign_out"] as? String, "(@aa{sv} [],)\n")
        XCTAssertFalse(run.traceText.contains("eyJ"), "a token reached the trace")
    }

    /// `git clone` and `git push` against `git http-backend` behind a server that takes only a
    /// token the emulator's Graph accepts as the password, with `credential.helper=sesame`: one
    /// Always, nothing typed; the decision taken back, a Deny makes git fail as git does.
    func testGitClonesAndPushesThroughSesameAfterOneAllow() throws {
        let run = try flow("git")
        let seen = run.seen
        let helper = try XCTUnwrap(seen["helper"] as? String)
        XCTAssertEqual(seen["git_question"] as? String, "The program \(helper)")
        XCTAssertEqual((seen["clone"] as? [String: Any])?["status"] as? Int, 0, "\(seen["clone"] ?? "")")
        XCTAssertEqual((seen["push"] as? [String: Any])?["status"] as? Int, 0, "\(seen["push"] ?? "")")
        XCTAssertEqual(seen["server_log"] as? String, "First\n")
        // An http:// remote of a host listed as https: no password crosses the wire, and git says why.
        let plain = try XCTUnwrap(seen["plain_http"] as? [String: Any])
        XCTAssertNotEqual(plain["status"] as? Int, 0, "git got in over plain http")
        XCTAssertTrue((plain["error"] as? String)?.contains("only over HTTPS") == true, "\(plain)")
        XCTAssertEqual((seen["plain_http_authorizations"] as? [String])?.count, 0, "git sent \(seen["plain_http_authorizations"] ?? "")")
        XCTAssertEqual(seen["plain_http_token_requests"] as? Int, 0, "the helper asked Sesame for a token for plain http")
        XCTAssertEqual(seen["git_asked_again"] as? String, "The program \(helper)")
        let refused = try XCTUnwrap(seen["push_after_revoke"] as? [String: Any])
        XCTAssertNotEqual(refused["status"] as? Int, 0)
        XCTAssertTrue((refused["error"] as? String)?.contains("Authentication failed") == true, "\(refused)")
        XCTAssertFalse(run.traceText.contains("eyJ"), "a token reached the trace")
    }

    func testAMailProgramsPasswordCommandIsAskedAboutAsThatProgramNotAsSesame() throws {
        let run = try flow("mail-command")
        let seen = run.seen
        let client = try XCTUnwrap(seen["client"] as? String)
        // The question says what Always covers: the program ran Sesame's command from its
        // settings, so whatever it runs (msmtp's passwordeval, mbsync's PassCmd).
        XCTAssertEqual(
            seen["mail_question"] as? String,
            "The program \(client)\n\u{2068}mail-client\u{2069} asked by running a command of its settings: "
                + "Always covers every command it runs.")
        XCTAssertTrue((seen["mail_question_text"] as? String)?.contains("mail-client") == true, "\(seen["mail_question_text"] ?? "")")
        let first = try XCTUnwrap(seen["mail_first"] as? [String: Any])
        XCTAssertEqual(first["status"] as? Int, 0, "\(first)")
        XCTAssertEqual(first["graph"] as? Int, 200, "the token printed is not one Graph takes")
        let again = try XCTUnwrap(seen["mail_again"] as? [String: Any])
        XCTAssertEqual(again["status"] as? Int, 0, "\(again)")
        XCTAssertEqual(again["questions"] as? Int, 0, "allowed always, the program was asked again")
        // Typed at a pseudo-terminal: the person's. The flow's python holds the terminal's master
        // and writes the command into it, as a program driving a terminal of its own would: the
        // kernel tells the two apart in nothing (docs/design/account-service.md), and this is
        // what SECURITY.md's row about it says.
        let typed = try XCTUnwrap(seen["typed"] as? [String: Any])
        XCTAssertEqual(typed["graph"] as? Int, 200, "\(typed)")
        XCTAssertEqual(typed["questions"] as? Int, 0, "the person's own command was asked about")
        // `echo "sesame token …" | bash -i` is no person typing: the program feeding the shell
        // (the flow's python) was asked about, as an interpreter; denied, no token.
        let pipedQuestion = try XCTUnwrap(seen["piped_question"] as? String)
        XCTAssertTrue(pipedQuestion.hasPrefix("The program /usr/bin/python3"), pipedQuestion)
        XCTAssertTrue(pipedQuestion.contains("runs programs it is given: Always covers every program it runs"), pipedQuestion)
        let piped = try XCTUnwrap(seen["piped"] as? [String: Any])
        XCTAssertEqual(piped["questions"] as? Int, 1, "\(piped)")
        XCTAssertEqual(piped["token"] as? Bool, false, "a shell fed through a pipe printed a token: \(piped)")
        XCTAssertTrue((piped["error"] as? String)?.contains("did not allow this program") == true, "\(piped)")
        XCTAssertFalse(run.traceText.contains("eyJ"), "a token reached the trace")
    }

    // MARK: Running a flow

    struct Run {
        let seen: [String: Any]
        let traceText: String

        /// The number of the first program the window asked about (tool-N).
        func firstToolNumber(_ seen: [String: Any]) -> String {
            ((seen["asked"] as? [String])?.first?.split(separator: "-").last).map(String.init) ?? "?"
        }
    }

    /// Runs one flow of service_flow.py: a demo-mode emulator whose access tokens live two minutes
    /// (so each request that finds no refresh under way needs one), and a session bus of its own.
    func flow(_ name: String) throws -> Run {
        XCTAssertTrue(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/WebKitWebDriver"),
            "WebKitWebDriver is missing: install webkit2gtk-driver (make test does)")
        let emulator = try RunningEmulator.startBlocking(users: 300, demo: true) { $0.accessTokenLifetime = 120 }
        defer { emulator.stop() }
        let scratch = Repository.temporaryDirectory("sesame-service-\(name)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = scratch.appending(path: "data").path
        let bus = try SessionBus(environment: environment)
        defer { bus.stop() }

        let program = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "EndToEnd/service_flow.py")
        var flowEnvironment = ProcessInfo.processInfo.environment
        flowEnvironment["SESAME_E2E_APP_BUS"] = bus.address
        let result = try ProcessRunner.run(
            try Repository.python(),
            [program.path, name, try Repository.product("sesame").path, emulator.base.absoluteString, scratch.path],
            environment: flowEnvironment)
        XCTAssertEqual(result.status, 0, "flow \(name): \(result.stderr.suffix(3000))")
        let seen = try XCTUnwrap(
            try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
            "flow \(name) printed no result: \(result.stderr.suffix(3000))")
        let trace = (try? String(contentsOf: scratch.appending(path: "trace-1.jsonl"), encoding: .utf8)) ?? ""
        return Run(seen: seen, traceText: trace)
    }
}
