import CLibSecret
import FoundationEssentials
import Glibc
import SesameCore
import SesameSystem

/// Token caches in the desktop's Secret Service (GNOME Keyring, KWallet's bridge, KeePassXC)
/// through libsecret: one item per storage group, schema `org.sesame.TokenCache`, attributes
/// `group` = the group and `kind` = `cache`, in the default collection (the login keyring).
///
/// The Secret Service has no transactions, so read-modify-write cycles of processes sharing a
/// group are serialised by an advisory lock file in `$XDG_RUNTIME_DIR` (else the user's own
/// `$XDG_DATA_HOME/sesame`, never a directory other users can write to), as ``FileTokenStorage``
/// does for its files; after each write Sesame replaces the group's *stamp file* beside it.
///
/// That is the shape of msal-extensions' `LibsecretPersistence` (a schema name, attributes, and
/// a signal file touched after each save, whose `.lockfile` its writers hold): an MSAL-based tool
/// given ``msalExtensionsPersistence(group:)`` — the stamp file as its signal file, this schema
/// and these attributes — reads and writes the very item Sesame does. Sesame takes that tool's
/// lock too (the stamp file's `.lockfile`, inside its own lock, as ``FileTokenStorage`` does), and
/// notices the tool's touch of the stamp file as a change. An MSAL-based tool with a shape of its
/// own (azure-identity's `msal.cache.nocae`, say) keeps a separate cache: docs/SHARING.md.
public struct SecretServiceTokenStorage: TokenStorage {
    /// Whether reading a locked keyring shows the keyring's own unlock prompt and waits for it (a
    /// command a person typed), or says at once that it is locked (the window, which offers
    /// Unlock; a program's password command, which no dialog should surprise).
    public let promptsToUnlock: Bool
    /// Told when a read finds the sign-ins behind the lock, before anything else happens: `true`
    /// when the keyring's prompt is about to show and the read waits for it, `false` when no
    /// prompt will (a command says what it waits for, or why nothing shows).
    private let onLocked: (@Sendable (_ prompting: Bool) -> Void)?
    private let lockDirectory: URL
    /// `lockDirectory.path`, worked out once: ``version(group:)`` is on every silent token's path.
    private let lockDirectoryPath: String

    /// Storage in the session's Secret Service.
    public init(
        environment: [String: String] = ProcessInfo.processInfo.environment, promptsToUnlock: Bool = false,
        onLocked: (@Sendable (_ prompting: Bool) -> Void)? = nil
    ) {
        self.promptsToUnlock = promptsToUnlock
        self.onLocked = onLocked
        lockDirectory =
            environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? URL(fileURLWithPath: $0, isDirectory: true) : nil }
            ?? FileTokenStorage.defaultDirectory(environment: environment)
        lockDirectoryPath = lockDirectory.path
    }

    public var location: String { "Secret Service" }

    /// Whether a Secret Service answers on the session bus (a lookup succeeds, found or not).
    /// Without one (no session bus, no keyring daemon) the caller falls back to files.
    public static func isAvailable() -> Bool {
        var result = sesame_secret_lookup("org.sesame.probe", "probe", 0)
        defer { sesame_secret_result_free(&result) }
        return result.ok != 0
    }

    /// The Secret Service when one answers, else files under `$XDG_DATA_HOME/sesame/`.
    public static func preferred(environment: [String: String] = ProcessInfo.processInfo.environment) -> any TokenStorage {
        isAvailable() ? SecretServiceTokenStorage(environment: environment) : FileTokenStorage(environment: environment)
    }

    /// Where this user's sign-ins live, chosen once and then kept, so that the window and the
    /// command line always use the same store: the first run picks the Secret Service when one
    /// answers, else files, and records the choice in `$XDG_DATA_HOME/sesame/storage`.
    /// - Returns: the storage, and a notice when it is files (the user should know their tokens
    ///   are not in a keyring).
    ///   When the recorded choice is the Secret Service and none answers here (over SSH without
    ///   the desktop's session bus, say), it is still the Secret Service: its first read says
    ///   ``TokenStorageError/Problem/keyringUnavailable`` (falling back to files would show no one
    ///   signed in and start a second store).
    /// - Parameters:
    ///   - recording: whether a first run records its choice (`sesame doctor` only looks).
    ///   - promptsToUnlock: ``promptsToUnlock``.
    ///   - onLocked: told when a read finds the keyring locked (a command typed at a terminal says so).
    public static func chosen(
        environment: [String: String] = ProcessInfo.processInfo.environment, recording: Bool = true, promptsToUnlock: Bool = false,
        onLocked: (@Sendable (_ prompting: Bool) -> Void)? = nil
    ) throws -> (
        storage: any TokenStorage, notice: String?
    ) {
        let directory = FileTokenStorage.defaultDirectory(environment: environment)
        let marker = directory.appending(path: "storage")
        let recorded = (try? String(contentsOf: marker, encoding: .utf8))?.trimmingWhitespace()
        let files = FileTokenStorage(environment: environment)
        let notice = "no keyring (Secret Service) is in use: sign-ins are kept in files under \(directory.path), readable by you only"
        switch recorded {
        case "secret-service":
            // Not probed here (a round trip on every launch): where no keyring answers, the first
            // read fails with ``TokenStorageError/Problem/keyringUnavailable`` and its sentence.
            return (SecretServiceTokenStorage(environment: environment, promptsToUnlock: promptsToUnlock, onLocked: onLocked), nil)
        case "files":
            return (files, notice)
        default:
            let available = isAvailable()
            guard recording else {
                return available
                    ? (SecretServiceTokenStorage(environment: environment, promptsToUnlock: promptsToUnlock, onLocked: onLocked), nil)
                    : (files, notice)
            }
            try? FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try? Data((available ? "secret-service\n" : "files\n").utf8).write(to: marker, options: .atomic)
            return available
                ? (SecretServiceTokenStorage(environment: environment, promptsToUnlock: promptsToUnlock, onLocked: onLocked), nil)
                : (files, notice)
        }
    }

    public func whileRefreshing<T: Sendable>(
        group: String, isolation: isolated (any Actor)?, _ body: () async throws -> T
    ) async throws -> T {
        let lockFile = lockDirectory.appending(path: "sesame-\(group.replacing("/", with: "_")).refresh.lock").path
        try? FileManager.default.createDirectory(
            at: lockDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return try await FileLock.whileHolding(path: lockFile, location: location, body)
    }

    /// A stamp file beside the lock, replaced after every write of the group by any Sesame
    /// process; a copy is used for at most a second even so (a person may delete the item in
    /// the keyring's manager, which stamps nothing).
    ///
    /// The stamp's directory's last change as inotify reported it (no system call), or where it
    /// cannot tell, the stamp file's identity and times.
    public func version(group: String) -> StoredVersion? {
        if let generation = DirectoryChanges.shared?.generation(ofDirectory: lockDirectoryPath) {
            return StoredVersion(stamp: [-1, Int64(bitPattern: generation)], maximumAge: .seconds(1))
        }
        return StoredVersion.ofFile(atPath: stampFile(group: group), maximumAge: .seconds(1))
    }

    private func stampFile(group: String) -> String {
        lockDirectoryPath + "/sesame-"
            + String(decoding: group.utf8.map { $0 == UInt8(ascii: "/") ? UInt8(ascii: "_") : $0 }, as: UTF8.self)
            + ".stamp"
    }

    /// What to give msal-extensions' `LibsecretPersistence` so that an MSAL-based tool shares a
    /// group's cache with Sesame: its signal file (the group's stamp file, whose `.lockfile` is the
    /// tool's lock), schema name and attributes.
    public func msalExtensionsPersistence(group: String) -> MSALExtensionsPersistence {
        MSALExtensionsPersistence(
            signalLocation: stampFile(group: group), schemaName: "org.sesame.TokenCache", attributes: ["group": group, "kind": "cache"])
    }

    /// Replaces the stamp file (a new inode), under the group's locks. Its modification time is
    /// set ahead of the clock, as ``FileTokenStorage`` does its files': msal-extensions reloads the
    /// item only when the signal file's time is later than the clock reading it took after its
    /// last load.
    private func stamp(group: String) {
        let path = stampFile(group: group)
        let temporary = path + ".\(getpid()).tmp"
        // When no new stamp can be made, removing the old one is a change readers see as well.
        guard let descriptor = try? Posix.openOwnerOnly(temporary, O_WRONLY | O_CREAT | O_TRUNC) else {
            Posix.removeFile(path)
            return
        }
        try? Posix.setModificationTime(descriptor, to: Date().addingTimeInterval(FileTokenStorage.modificationTimeLead))
        Posix.close(descriptor)
        do {
            try Posix.rename(temporary, to: path)
        } catch {
            Posix.removeFile(temporary)
            Posix.removeFile(path)
        }
        DirectoryChanges.shared?.noteChange(inDirectory: lockDirectoryPath)
    }

    public func transact(group: String, _ body: (Data?) throws -> TokenStorageAction) throws -> String? {
        let lockFile = lockDirectory.appending(path: "sesame-\(group.replacing("/", with: "_")).lock").path
        try? FileManager.default.createDirectory(
            at: lockDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return try FileLock.withLock(path: lockFile, location: location) {
            try MSALExtensionsLock.withLock(path: stampFile(group: group) + MSALExtensionsLock.suffix, location: location) {
                try transactLocked(group: group, body)
            }
        }
    }

    private func transactLocked(group: String, _ body: (Data?) throws -> TokenStorageAction) throws -> String? {
        let current = try lookup(group: group, kind: "cache")
        switch try body(current) {
        case .keep:
            return nil
        case .write(let data):
            defer { stamp(group: group) }
            try store(data, group: group, kind: "cache")
            return nil
        case .setAsideAndWrite(let data):
            defer { stamp(group: group) }
            let kind = "unreadable-" + Date().formatted(.iso8601)
            if let current { try store(current, group: group, kind: kind) }
            try store(data, group: group, kind: "cache")
            return "Secret Service item \"Sesame token cache (\(group), \(kind))\""
        }
    }

    /// Removes a group's cache item (tests and "forget everything").
    public func clear(group: String) throws {
        defer { stamp(group: group) }
        var result = sesame_secret_clear(group, "cache")
        defer { sesame_secret_result_free(&result) }
        try check(result, doing: "delete the token cache of \(group)")
    }

    private func lookup(group: String, kind: String) throws -> Data? {
        var result = sesame_secret_lookup(group, kind, 0)
        defer { sesame_secret_result_free(&result) }
        try check(result, doing: "read the token cache of \(group)")
        if result.secret == nil, result.locked != 0 {
            onLocked?(promptsToUnlock)
            // Looked up again, unlocking: the keyring's own prompt shows, and this waits for it.
            if promptsToUnlock {
                sesame_secret_result_free(&result)
                result = sesame_secret_lookup(group, kind, 1)
                try check(result, doing: "read the token cache of \(group)")
            }
        }
        guard let secret = result.secret else {
            // Nothing readable, but there behind a lock: not "nobody is signed in".
            if result.locked != 0 {
                throw TokenStorageError(
                    location: location, reason: "the keyring holding the token cache of \(group) is locked", problem: .keyringLocked)
            }
            return nil
        }
        return Data(String(cString: secret).utf8)
    }

    /// Asks the Secret Service to unlock the keyring Sesame keeps its sign-ins in: the desktop
    /// shows its own prompt (the password goes to the keyring, never through Sesame). Blocks
    /// until the person answers: call it off the main loop.
    /// - Returns: whether it is unlocked now (false: the prompt was dismissed).
    public static func unlock() -> Bool {
        var result = sesame_secret_unlock_default()
        defer { sesame_secret_result_free(&result) }
        return result.ok != 0 && result.locked == 0
    }

    private func store(_ data: Data, group: String, kind: String) throws {
        guard let text = String(data: data, encoding: .utf8) else {
            throw TokenStorageError(location: location, reason: "the token cache of \(group) is not UTF-8 text")
        }
        let label = kind == "cache" ? "Sesame token cache (\(group))" : "Sesame token cache (\(group), \(kind))"
        var result = sesame_secret_store(group, kind, label, text)
        defer { sesame_secret_result_free(&result) }
        try check(result, doing: "save the token cache of \(group)")
    }

    private func check(_ result: SesameSecretResult, doing what: String) throws {
        try Self.check(result, location: location, doing: what)
    }

    /// Turns a failed libsecret call into the one Swift error, once: a locked collection
    /// (`SECRET_ERROR_IS_LOCKED`, its unlock prompt dismissed) and a service that does not answer
    /// (D-Bus's and GIO's errors) are told apart.
    static func check(_ result: SesameSecretResult, location: String, doing what: String) throws {
        guard result.ok == 0 else { return }
        let message = result.error_message.map { String(cString: $0) } ?? "unknown error"
        let domain = result.error_domain.map { String(cString: $0) }
        let problem: TokenStorageError.Problem =
            switch domain {
            case "secret-error-quark" where result.error_code == Self.secretErrorIsLocked: .keyringLocked
            case "g-dbus-error-quark", "g-io-error-quark": .keyringUnavailable
            default: .other
            }
        throw TokenStorageError(location: location, reason: "cannot \(what): \(message)", problem: problem)
    }

    /// libsecret's `SECRET_ERROR_IS_LOCKED`.
    private static let secretErrorIsLocked: Int32 = 2
}

/// What an MSAL-based tool gives msal-extensions' `LibsecretPersistence(signal_location,
/// schema_name, attributes)` to share a storage group's cache with Sesame in the Secret Service.
public struct MSALExtensionsPersistence: Sendable, Hashable {
    /// `signal_location`: the file the tool touches after each save and whose modification time
    /// tells it to reload; its lock is this path plus `.lockfile`.
    public let signalLocation: String
    /// `schema_name`: the item's `xdg:schema`.
    public let schemaName: String
    /// `attributes`: the item's attributes.
    public let attributes: [String: String]
}
