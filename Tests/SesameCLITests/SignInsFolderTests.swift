import Foundation
import SesameTestSupport
import Testing

/// The folder holding the sign-ins (files: no session bus) as the exit-status table promises
/// it: read-only is status 6 and its sentence. Each runs `sesame token` in a mount namespace of
/// its own (root only: `make test` runs as root), alex signed in under strict rotation, the
/// access token always due for renewal (``EndingTests/SignedIn``).
@Suite(.serialized, .enabled(if: getuid() == 0, "a mount of its own needs root (unshare --mount)"))
struct SignInsFolderTests {
    /// Runs `script` with `/bin/sh -c` in a mount namespace of its own; its `$1`… are `arguments`.
    private static func inMountNamespace(
        _ script: String, _ arguments: [String], environment: [String: String]
    ) throws
        -> ProcessRunner.Result
    {
        try ProcessRunner.run(
            URL(filePath: "/usr/bin/unshare"), ["--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh"] + arguments,
            environment: environment)
    }

    @Test("a read-only sign-ins folder is status 6, said in its sentence")
    func readOnlyFolder() async throws {
        let signedIn = try await EndingTests.SignedIn()
        let folder = try #require(signedIn.environment["XDG_DATA_HOME"]) + "/sesame"
        let sesame = try Repository.product("sesame").path
        let result = try await OwnThread.run {
            try Self.inMountNamespace(
                #"mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && exec "$2" token --account-type myGraphService --emulator "$3""#,
                [folder, sesame, signedIn.base], environment: signedIn.environment)
        }
        #expect(result.status == 6, "\(result.stderr)")
        #expect(result.stderr.contains("Your sign-ins cannot be saved in \(folder): it is read-only"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }
}
