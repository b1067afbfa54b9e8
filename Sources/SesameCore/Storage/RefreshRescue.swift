import Crypto
import FoundationEssentials
import Glibc
import SesameSystem

/// Where a rotated refresh token waits when the cache could not store it, until the next process
/// that refreshes the account puts it in the cache. With strict rotation the token a refresh
/// spent may already be dead: losing its successor would sign the user out.
///
/// One file per storage group, `rescue-<group>.json`, in `$XDG_RUNTIME_DIR/sesame/` (memory,
/// 0700, this user's alone, gone at logout). Room for it is reserved before each refresh is sent
/// (`rescue-<group>.reserve`), so that a disk that fills meanwhile cannot refuse it. Each kept
/// token carries the SHA-256 of the token it replaced: it is put in the cache only while the
/// cache still holds that one (a later sign-in or refresh has moved on otherwise, and it is
/// dropped). The file holds a live refresh token, so it lives no longer than that.
public struct RefreshRescue: Sendable {
    /// The folder, or nil where there is no runtime folder (nothing is rescued).
    let directory: URL?

    /// Room reserved for a rescue file: a refresh token is a few kilobytes at most.
    static let reservedSize = 64 * 1024

    /// `$XDG_RUNTIME_DIR/sesame`, when the session has a runtime folder.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL? {
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else { return nil }
        return URL(fileURLWithPath: runtime, isDirectory: true).appending(path: "sesame", directoryHint: .isDirectory)
    }

    /// One rotated refresh token, as kept.
    struct Kept: Codable, Sendable, Equatable {
        /// `home_account_id`.
        var homeAccountID: String
        /// `environment`.
        var environment: String
        /// `client_id`.
        var clientID: String
        /// The new refresh token.
        var refreshToken: String
        /// The SHA-256 (base64url) of the refresh token it replaces.
        var replaces: String
        /// When it was kept, seconds since 1970.
        var keptAt: Int

        enum CodingKeys: String, CodingKey {
            case homeAccountID = "home_account_id"
            case environment
            case clientID = "client_id"
            case refreshToken = "refresh_token"
            case replaces
            case keptAt = "kept_at"
        }
    }

    /// The fingerprint of a refresh token that ``Kept/replaces`` holds.
    static func fingerprint(of token: Secret) -> String {
        Base64URL.encode(SHA256.hash(data: Data(token.revealed.utf8)))
    }

    private func path(_ group: String, _ suffix: String) -> String? {
        guard let directory, !group.isEmpty, !group.contains("/"), group != ".", group != ".." else { return nil }
        return directory.appending(path: "rescue-\(group).\(suffix)").path
    }

    /// Reserves room for a rescue of `group` (before a refresh is sent). A failure is not the
    /// refresh's: the cache's own write may well succeed.
    func prepare(group: String) {
        guard let reserve = path(group, "reserve"), makeDirectory() else { return }
        try? Posix.reserve(reserve, size: Self.reservedSize)
    }

    /// Lets go of the room ``prepare(group:)`` reserved (the refresh is over).
    func release(group: String) {
        if let reserve = path(group, "reserve") { Posix.removeFile(reserve) }
    }

    /// Keeps `kept` for `group`, beside any kept before, in the room reserved for it.
    /// - Throws: ``TokenStorageError`` when it could not be written either.
    func keep(_ kept: Kept, group: String) throws {
        guard let file = path(group, "json"), let reserve = path(group, "reserve"), makeDirectory() else {
            throw TokenStorageError(location: "the runtime folder", reason: "there is no runtime folder ($XDG_RUNTIME_DIR) to keep it in")
        }
        let entries = read(group: group) + [kept]
        let data: Data
        do {
            data = try JSONEncoder().encode(entries)
        } catch {
            throw TokenStorageError(location: file, reason: "cannot encode: \(error)")
        }
        Posix.removeFile(reserve)
        let temporary = file + ".tmp"
        do {
            let descriptor = try Posix.openOwnFileForWriting(temporary)
            defer { Posix.close(descriptor) }
            try Posix.writeAll(descriptor, data)
            try Posix.rename(temporary, to: file)
        } catch {
            Posix.removeFile(temporary)
            throw TokenStorageError(location: file, reason: "cannot write: \(error)", problem: .init(errorNumber: error.code))
        }
    }

    /// Whether anything is kept for `group` (one `lstat`: on every refresh's path).
    func holds(group: String) -> Bool {
        guard let file = path(group, "json") else { return false }
        return (try? Posix.linkStatus(file)) != nil
    }

    /// What is kept for `group`; an unreadable file holds nothing usable.
    func read(group: String) -> [Kept] {
        guard let file = path(group, "json"), let bytes = Posix.readRegularFileOfThisUser(file, limit: 1 << 20) else { return [] }
        return (try? JSONDecoder().decode([Kept].self, from: Data(bytes))) ?? []
    }

    /// Puts what is kept into `cache`: each token whose account still holds the one it replaced
    /// (the newest kept first wins over older ones for the same account and client).
    /// - Returns: how many were put in.
    static func apply(_ kept: [Kept], to cache: inout TokenCache, now: Int) -> Int {
        var applied = 0
        for entry in kept.sorted(by: { $0.keptAt < $1.keptAt }) {
            guard
                let current = cache.refreshToken(
                    homeAccountID: entry.homeAccountID, environment: entry.environment, clientID: entry.clientID),
                fingerprint(of: current.secret) == entry.replaces
            else { continue }
            cache.replaceRefreshToken(
                Secret(entry.refreshToken), homeAccountID: entry.homeAccountID, environment: entry.environment, clientID: entry.clientID,
                now: now)
            applied += 1
        }
        return applied
    }

    /// Deletes what is kept for `group` (it is in the cache now, or stale).
    func clear(group: String) {
        if let file = path(group, "json") { Posix.removeFile(file) }
    }

    private func makeDirectory() -> Bool {
        guard let directory else { return false }
        return
            (try? FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])) != nil
    }
}
