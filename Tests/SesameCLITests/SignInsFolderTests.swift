import Foundation
import SesameTestSupport
import Testing

/// The folder holding the sign-ins (files: no session bus) as the exit-status table promises
/// it: read-only is status 6 and its sentence; short of room, a refresh is refused only when its
/// answer could not be stored — the cache with the answer's tokens, not twice the cache. Each
/// runs `sesame token` in a mount namespace of its own (root only: `make test` runs as root),
/// alex signed in under strict rotation, the access token always due for renewal
/// (``EndingTests/SignedIn``).
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

    /// The cache also holds 64 KiB of another program's (an MSAL-based tool sharing it keeps
    /// sections of its own), and the disk has less free than twice the cache: the refresh's
    /// answer still fits (it replaces alex's tokens), so the refresh is made and stored.
    @Test("a refresh needs no more room than the cache with its answer: less free than twice the cache still refreshes")
    func roomForTheAnswer() async throws {
        let signedIn = try await EndingTests.SignedIn()
        let folder = try #require(signedIn.environment["XDG_DATA_HOME"]) + "/sesame"
        let cacheFile = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix(".json") }, "no cache file in \(folder)")
        let path = folder + "/" + cacheFile
        var cache = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(filePath: path))) as? [String: Any])
        cache["AnotherProgram"] = ["kept": String(repeating: "x", count: 64 * 1024)]
        try JSONSerialization.data(withJSONObject: cache).write(to: URL(filePath: path))
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        // Between what the answer needs (the cache with it: its size and 64 KiB) and twice the cache.
        let free = size + 64 * 1024 + size / 2
        let sesame = try Repository.product("sesame").path
        let script = #"""
            folder="$1" sesame="$2" base="$3" free="$4"
            disk=$(mktemp -d) && mount -t tmpfs -o size=8m tmpfs "$disk" && cp -a "$folder"/. "$disk"/ && mount --bind "$disk" "$folder" || exit 99
            set -- $(stat -f -c '%a %S' "$folder")
            fallocate -l $(( $1 * $2 - free )) "$folder/.filler" || exit 99
            exec "$sesame" token --account-type myGraphService --emulator "$base"
            """#
        let result = try await OwnThread.run {
            try Self.inMountNamespace(script, [folder, sesame, signedIn.base, String(free)], environment: signedIn.environment)
        }
        #expect(result.status == 0, "with \(free) bytes free for a cache of \(size): \(result.stderr)")
        #expect(result.stdout.hasPrefix("eyJ"), "\(result.stdout)")
    }
}
