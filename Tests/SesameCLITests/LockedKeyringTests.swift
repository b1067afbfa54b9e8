import Foundation
import SesameTestSupport
import XCTest

/// A keyring holding the sign-ins that is locked is said as locked (status 3 and its sentence),
/// never as "nobody is signed in": also the one every fresh login finds, whose daemon loaded it
/// locked (gnome-keyring matches no `xdg:schema` there); and typed at a terminal with no display,
/// where no unlock prompt can show, the command says so at once instead of waiting for one.
final class LockedKeyringTests: XCTestCase {
    /// The storage group of the bundled `myGraphService` (directory.plist's `keychain`).
    static let group = "com.microsoft.azureactivedirectory.samples.graph.QuickStart"

    /// A keyring of the test's own whose login collection holds a token cache for `myGraphService`
    /// as Sesame stores it (schema `org.sesame.TokenCache`, `group`, `kind`), and a data folder
    /// that records the keyring as the store.
    private func keyringWithASignIn(_ name: String) throws -> (PrivateKeyring, URL) {
        let home = Repository.temporaryDirectory(name)
        let keyring = try PrivateKeyring(home: home)
        let data = URL(filePath: keyring.environment["XDG_DATA_HOME"]!)
        try FileManager.default.createDirectory(at: data.appending(path: "sesame"), withIntermediateDirectories: true)
        try Data("secret-service\n".utf8).write(to: data.appending(path: "sesame/storage"))
        let cache = FileManager.default.temporaryDirectory.appending(path: "\(name)-cache.json")
        defer { try? FileManager.default.removeItem(at: cache) }
        try Data(#"{"Account":{},"AccessToken":{},"RefreshToken":{},"IdToken":{}}"#.utf8).write(to: cache)
        let stored = try ProcessRunner.run(
            URL(filePath: "/bin/sh"),
            [
                "-c",
                "exec /usr/bin/secret-tool store --label \"Sesame token cache ($0)\" group \"$0\" kind cache "
                    + "xdg:schema org.sesame.TokenCache < \"$1\"", Self.group, cache.path,
            ], environment: keyring.environment)
        XCTAssertEqual(stored.status, 0, stored.stderr)
        XCTAssertNotNil(try keyring.lookup(group: Self.group, kind: "cache"), "the item was not stored")
        return (keyring, home)
    }

    /// The environment of a terminal with no display: an SSH login, a text console.
    private static func withoutDisplay(_ environment: [String: String]) -> [String: String] {
        var environment = environment
        environment["DISPLAY"] = nil
        environment["WAYLAND_DISPLAY"] = nil
        environment["SESAME_REQUIRE_SECRET_SERVICE"] = nil
        return environment
    }

    private static func expectSaidLocked(_ status: Int32, _ said: String, _ what: String) {
        XCTAssertEqual(status, 3, "\(what): \(said)")
        XCTAssertTrue(said.contains("Your keyring is locked, and your sign-ins are inside it."), "\(what): \(said)")
        XCTAssertFalse(said.contains("nobody is signed in"), "\(what): \(said)")
    }

    /// As at every fresh login: the keyring's daemon starts with the collection locked. A program's
    /// `sesame accounts` and the person's `sesame token` say it is locked, not that nobody is
    /// signed in.
    func testAKeyringLockedSinceItsDaemonStartedIsSaidAsLocked() throws {
        let (keyring, home) = try keyringWithASignIn("sesame-locked-at-start")
        defer {
            keyring.stop()
            try? FileManager.default.removeItem(at: home)
        }
        try keyring.restartLocked()
        let sesame = try Repository.product("sesame")
        let environment = Self.withoutDisplay(keyring.environment)
        let accounts = try ProcessRunner.run(sesame, ["accounts"], environment: environment)
        Self.expectSaidLocked(accounts.status, accounts.stderr, "sesame accounts run by a program")
        let typed = try Terminal.type("\(sesame.path) token --account-type myGraphService", environment: environment)
        Self.expectSaidLocked(typed.status, typed.shown, "sesame token typed at a terminal")
    }

    /// Locked while the session runs (the Secret Service's Lock, as the screen locking does), and
    /// typed at a terminal with no display: no unlock prompt can show there, so the command says
    /// the keyring is locked at once rather than waiting, silent, for a prompt nobody sees.
    func testTypedWithNoDisplayALockedKeyringIsSaidAtOnce() throws {
        let (keyring, home) = try keyringWithASignIn("sesame-locked-no-display")
        defer {
            keyring.stop()
            try? FileManager.default.removeItem(at: home)
        }
        let collection = try ProcessRunner.run(
            URL(filePath: "/usr/bin/gdbus"),
            [
                "call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", "/org/freedesktop/secrets", "--method",
                "org.freedesktop.Secret.Service.ReadAlias", "login",
            ], environment: keyring.environment)
        let path = try XCTUnwrap(collection.stdout.firstMatch(of: /'([^']+)'/)?.1, collection.stdout + collection.stderr)
        let locked = try ProcessRunner.run(
            URL(filePath: "/usr/bin/gdbus"),
            [
                "call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", "/org/freedesktop/secrets", "--method",
                "org.freedesktop.Secret.Service.Lock", "['\(path)']",
            ], environment: keyring.environment)
        XCTAssertEqual(locked.status, 0, locked.stderr)
        let sesame = try Repository.product("sesame")
        let typed = try Terminal.type(
            "\(sesame.path) token --account-type myGraphService", environment: Self.withoutDisplay(keyring.environment))
        Self.expectSaidLocked(typed.status, typed.shown, "sesame token typed at a terminal with no display")
        XCTAssertTrue(typed.shown.contains("no display here for the keyring's unlock prompt"), typed.shown)
    }
}
