import Foundation
import SesameTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Whatever ends `sesame token`, a refresh that was sent is stored or the old token still works:
/// under strict rotation (`--refresh-token-reuse revoke-family`: a refresh token works once, and
/// a second use revokes the sign-in) the command is ended by SIGTERM and SIGINT at random moments
/// of its refresh, two at a time, and its disk is filled while it refreshes; after each run the
/// account still gives a token (Tests/SesameCLITests/Ending/rotation_stress.py).
@Suite(.serialized) struct EndingTests {
    /// An emulator with strict rotation, whose access tokens are always due for renewal (they
    /// live 60 s, under the five minutes before expiry at which Sesame renews them) and whose
    /// token answers take 200 ms (a refresh is a window a signal can land in), and a store of
    /// the test's own (files: no session bus, so the command refreshes by itself) with alex
    /// signed in by the device code flow.
    final class SignedIn: @unchecked Sendable {
        let emulator: EmulatorProcess
        let base: String
        let folder: URL
        var environment: [String: String]

        init() async throws {
            emulator = try EmulatorProcess([
                "--port", "0", "--users", "10", "--device-code-interval", "1", "--refresh-token-reuse", "revoke-family",
                "--access-token-lifetime", "60", "--faults", "token:latency=200ms",
            ])
            base = String(try #require(emulator.readLine()).split(separator: " ").last!)
            let codes = OneTimeCodes()
            Thread.detachNewThread { [emulator] in
                while let line = emulator.readLine() { codes.record(line) }
            }
            folder = Repository.temporaryDirectory("sesame-ending")
            let runtime = folder.appending(path: "runtime")
            try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            environment = ProcessInfo.processInfo.environment
            environment["XDG_DATA_HOME"] = folder.appending(path: "data").path
            environment["XDG_STATE_HOME"] = folder.appending(path: "state").path
            environment["XDG_RUNTIME_DIR"] = runtime.path
            environment["SESAME_REQUIRE_SECRET_SERVICE"] = nil
            environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
            let login = try DeviceCodeLoginTests.RunningProgram(
                Repository.product("sesame"), ["login", "--account-type", "myGraphService", "--device-code", "--emulator", base],
                environment: environment)
            let userCode = try login.waitForStderr(DeviceCodeLoginTests.codePattern)
            _ = try await HeadlessBrowser.sockets(base: URL(string: base)!, codes: codes)
                .verifyDevice(userCode: userCode, as: "alex@contoso.onmicrosoft.com")
            let ended = login.finish()
            try #require(ended.status == 0, "\(ended.stderr)")
        }

        /// Runs the stress script in `mode` for `runs` runs (through `launcher`: `unshare`).
        func stress(_ mode: String, runs: Int, launcher: [String] = []) throws -> ProcessRunner.Result {
            let script = Repository.root.appending(path: "Tests/SesameCLITests/Ending/rotation_stress.py")
            let arguments = [script.path, try Repository.product("sesame").path, base, mode, String(runs)]
            if let first = launcher.first {
                return try ProcessRunner.run(
                    URL(filePath: first), Array(launcher.dropFirst()) + ["/usr/bin/python3"] + arguments, environment: environment)
            }
            return try ProcessRunner.run(URL(filePath: "/usr/bin/python3"), arguments, environment: environment)
        }

        /// Replaces the emulator's faults (`POST /.emulator/faults`; empty: none).
        func setFaults(_ spec: String) throws {
            var request = URLRequest(url: URL(string: base + "/.emulator/faults")!)
            request.httpMethod = "POST"
            request.httpBody = Data(spec.utf8)
            let done = DispatchSemaphore(value: 0)
            final class Box: @unchecked Sendable { var status = 0 }
            let box = Box()
            URLSession.shared.dataTask(with: request) { _, response, _ in
                box.status = (response as? HTTPURLResponse)?.statusCode ?? 0
                done.signal()
            }.resume()
            _ = done.wait(timeout: .now() + 30)
            guard box.status == 200 else { throw TestSupportError("the emulator refused the faults \(spec): HTTP \(box.status)") }
        }

        deinit {
            emulator.stop()
            try? FileManager.default.removeItem(at: folder)
        }
    }

    @Test func signalsAtRandomMomentsOfTheRefreshLoseNothing() async throws {
        let signedIn = try await SignedIn()
        let result = try await OwnThread.run { try signedIn.stress("signals", runs: 20) }
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        print(result.stdout)
    }

    /// The store's folder is a 2 MiB tmpfs in a mount namespace of the script's own (root only:
    /// `make test` runs as root).
    @Test(.enabled(if: getuid() == 0, "a tmpfs of its own needs root (unshare --mount)"))
    func aDiskFilledDuringTheRefreshLosesNothing() async throws {
        let signedIn = try await SignedIn()
        let result = try await OwnThread.run {
            try signedIn.stress("disk-full", runs: 10, launcher: ["/usr/bin/unshare", "--mount", "--propagation", "private"])
        }
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        print(result.stdout)
    }
}

/// `sesame token` whose account service ends while it answers: a service ended by SIGTERM
/// mid-refresh stores the answer and gives it to the command first; one killed outright is said
/// in one sentence with its own status (7), never GDBus's "Message recipient disconnected from
/// message bus without replying".
@Suite(.serialized) struct ServiceEndingTests {
    @Test func aServiceEndedMidRefreshIsSaidAndLosesNothing() async throws {
        let signedIn = try await EndingTests.SignedIn()
        let bus = try SessionBus(environment: signedIn.environment)
        defer { bus.stop() }
        var environment = signedIn.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        try Self.allowThisProgram(signedIn)
        for signal in [SIGTERM, SIGKILL] {
            // Waiting on programs, on a thread of its own (``OwnThread``).
            let ending = try await OwnThread.run { [environment] in
                try Self.endTheService(with: signal, signedIn: signedIn, environment: environment)
            }
            #expect(ending.serviceStarted, "the service did not start")
            #expect(ending.refreshBegan, "no refresh began")
            // A mail program runs `sesame token` on every sync: the window's libraries stay out.
            #expect(ending.tokenWindowLibraries == [], "sesame token loaded \(ending.tokenWindowLibraries)")
            #expect(!ending.token.stderr.contains("disconnected from message bus"), "\(ending.token.stderr)")
            if signal == SIGKILL {
                #expect(ending.token.status == 7, "\(ending.token.stderr)")
                #expect(ending.token.stderr.contains("Sesame's account service ended before it answered."), "\(ending.token.stderr)")
            } else {
                // The refresh it waited for is stored, and its client answered, before it ends.
                #expect(ending.token.status == 0, "the client was not answered: \(ending.token.stderr)")
                #expect(ending.token.stdout.hasPrefix("eyJ"), "\(ending.token.stdout)")
                #expect(ending.service.stderr.contains("sesame-service: ending (SIGTERM)."), "\(ending.service.stderr)")
                // Ended once the refresh it had sent was stored: the account still gives a token.
                let after = try #require(ending.afterwards)
                #expect(after.status == 0, "the account was lost: \(after.stderr)")
            }
        }
    }

    /// The user's Always for this test's process (the program that runs `sesame token`) to use
    /// alex's account, on file from an earlier day: the service asks nobody, and refreshes.
    static func allowThisProgram(_ signedIn: EndingTests.SignedIn) throws {
        let folder = try #require(signedIn.environment["XDG_DATA_HOME"]) + "/sesame"
        let cacheFile = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix(".json") })
        let cache = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(filePath: folder + "/" + cacheFile))) as? [String: Any])
        let account = try #require((cache["Account"] as? [String: Any])?.values.first as? [String: Any])
        let homeAccountID = try #require(account["home_account_id"] as? String)
        let program = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let decision: [String: Any] = [
            "version": 2,
            "decisions": [
                [
                    "program": ["kind": "executable", "id": program], "accountType": "myGraphService", "homeAccountID": homeAccountID,
                    "username": "alex@contoso.onmicrosoft.com", "resource": "", "scopes": ["User.Read", "User.ReadBasic.All"],
                    "allowed": true, "decidedAt": "2026-11-20T09:00:00Z",
                ]
            ],
        ]
        let file = folder + "/program-access.json"
        try JSONSerialization.data(withJSONObject: decision).write(to: URL(filePath: file))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
    }

    /// What one ending showed: the service answering, the refresh sent, what `sesame token`
    /// and the service printed, and (after SIGTERM) a `sesame token` of its own afterwards.
    struct Ending: Sendable {
        var serviceStarted = false
        var refreshBegan = false
        /// GTK's, GDK's, WebKit's and JavaScriptCore's files in the waiting `sesame token`'s
        /// `/proc/PID/maps`.
        var tokenWindowLibraries: [String] = []
        var token: (status: Int32, stdout: String, stderr: String)
        var service: (status: Int32, stdout: String, stderr: String)
        var afterwards: ProcessRunner.Result?
    }

    /// Starts the service, holds its refresh at the identity service (5 s an answer), asks it
    /// for a token and ends it with `signal` while it waits.
    static func endTheService(with signal: Int32, signedIn: EndingTests.SignedIn, environment: [String: String]) throws -> Ending {
        let sesame = try Repository.product("sesame")
        let bus = environment["DBUS_SESSION_BUS_ADDRESS"] ?? ""
        let service = try DeviceCodeLoginTests.RunningProgram(sesame, ["--service", "--emulator", signedIn.base], environment: environment)
        let serviceStarted = Eventually.holdsBlocking { SessionBus.hasOwner("org.sesame.Sesame", address: bus) }
        try signedIn.setFaults("token:latency=5s")
        let before = DeviceCodeLoginTests.tokenRequests(signedIn.base)
        let token = try DeviceCodeLoginTests.RunningProgram(
            sesame, ["token", "--account-type", "myGraphService", "--emulator", signedIn.base], environment: environment)
        let refreshBegan = Eventually.holdsBlocking { DeviceCodeLoginTests.tokenRequests(signedIn.base) > before }
        let maps = (try? String(contentsOfFile: "/proc/\(token.process.processIdentifier)/maps", encoding: .utf8)) ?? ""
        let windowLibraries = Set(
            maps.split(separator: "\n").compactMap { $0.split(separator: "/").last.map(String.init) }
                .filter { ["libgtk", "libgdk", "libwebkit", "libjavascriptcore"].contains(where: $0.hasPrefix) })
        kill(service.process.processIdentifier, signal)
        var ending = Ending(
            serviceStarted: serviceStarted, refreshBegan: refreshBegan, tokenWindowLibraries: windowLibraries.sorted(),
            token: token.finish(timeout: 120), service: service.finish(timeout: 120))
        try signedIn.setFaults("")
        if signal == SIGTERM {
            var alone = signedIn.environment
            alone["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
            ending.afterwards = try ProcessRunner.run(
                sesame, ["token", "--account-type", "myGraphService", "--emulator", signedIn.base], environment: alone)
        }
        return ending
    }
}
