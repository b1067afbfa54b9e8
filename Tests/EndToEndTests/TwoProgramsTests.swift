import Foundation
import IdentityEmulator
import SesameCore
import SesameTestSupport
import Testing

/// Two real `sesame` processes sharing one token cache refresh at the same moment against an
/// emulator with strict rotation (a refresh token redeemed twice revokes its whole family):
/// the refresh lock lets one redeem, the other uses what it stored, and nobody is signed out.
@Suite("Two programs, one cache")
struct TwoProgramsTests {
    @Test("two `sesame token` at once under strict rotation: both print a token, the account stays signed in")
    func twoTokenCommands() async throws {
        let emulator = try await RunningEmulator(users: 20) {
            $0.refreshTokenReuse = .revokeFamily
            // Below the 5-minute margin: every `sesame token` refreshes.
            $0.accessTokenLifetime = 120
        }
        defer { emulator.stop() }
        let home = Repository.temporaryDirectory("sesame-two")
        defer { try? FileManager.default.removeItem(at: home) }
        let data = home.appending(path: "data")
        let settings = try SampleSettings.load(contentsOf: Repository.settings("directory.plist")).pointed(at: emulator.base)
        let storage = FileTokenStorage(directory: data.appending(path: "sesame"))
        let store = AccountStore(storage: storage)
        await store.setConfiguration(settings.accountConfiguration, forAccountType: settings.accountType)
        _ = try await store.signIn(
            accountType: settings.accountType, using: HeadlessUserAgent.entra("alex@contoso.onmicrosoft.com", emulator: emulator))
        try Data("files\n".utf8).write(to: data.appending(path: "sesame/storage"))

        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = data.path
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
        let sesame = try Repository.product("sesame")
        let shared = environment
        let arguments = ["token", "--account-type", settings.accountType, "--emulator", emulator.base.absoluteString]
        for round in 1...5 {
            async let first = Self.run(sesame, arguments, environment: shared)
            async let second = Self.run(sesame, arguments, environment: shared)
            for result in try await [first, second] {
                #expect(result.status == 0, "round \(round): \(result.stderr)")
                #expect(!result.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
            }
        }
        // Still signed in: one more refresh works.
        #expect(try await Self.run(sesame, arguments, environment: shared).status == 0)
    }

    /// Runs a program without holding a task thread (``OwnThread``): this process's emulator needs them.
    static func run(_ program: URL, _ arguments: [String], environment: [String: String]) async throws -> ProcessRunner.Result {
        try await OwnThread.run { try ProcessRunner.run(program, arguments, environment: environment) }
    }
}
