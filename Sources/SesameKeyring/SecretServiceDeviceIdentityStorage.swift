import CLibSecret
import FoundationEssentials
import Glibc
import SesameCore
import SesameSystem

/// The device identity (the registration, its keys, the PRT and its session key) as one item in
/// the desktop's Secret Service: schema `org.sesame.TokenCache`, attributes `group` =
/// `device-identity` and `kind` = `device`, labelled "Sesame device identity". Never a file:
/// without a Secret Service, this computer is not registered.
///
/// Every save and clear replaces a stamp file beside the token caches' (`$XDG_RUNTIME_DIR/
/// sesame-device-identity.stamp`, empty): a running process (the service) compares its stamp
/// before each use and reads the keyring again only when another process registered or removed
/// the computer — or a second has passed, for a person deleting the item in the keyring's manager.
public struct SecretServiceDeviceIdentityStorage: DeviceIdentityStorage {
    private static let group = "device-identity"
    private static let kind = "device"
    private let stampDirectory: String

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        stampDirectory =
            environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? FileTokenStorage.defaultDirectory(environment: environment).path
    }

    public var location: String { "Secret Service" }

    private var stampFile: String { stampDirectory + "/sesame-\(Self.group).stamp" }

    public func version() -> StoredVersion? { StoredVersion.ofFile(atPath: stampFile, maximumAge: .seconds(1)) }

    public func load() throws -> Secret? {
        var result = sesame_secret_lookup(Self.group, Self.kind, 0)
        defer { sesame_secret_result_free(&result) }
        try check(result, doing: "read the device identity")
        guard let secret = result.secret else {
            if result.locked != 0 {
                throw TokenStorageError(
                    location: location, reason: "the keyring holding the device identity is locked", problem: .keyringLocked)
            }
            return nil
        }
        return Secret(String(cString: secret))
    }

    public func save(_ value: Secret) throws {
        defer { stamp() }
        var result = sesame_secret_store(Self.group, Self.kind, "Sesame device identity", value.revealed)
        defer { sesame_secret_result_free(&result) }
        try check(result, doing: "keep the device identity")
    }

    public func clear() throws {
        defer { stamp() }
        var result = sesame_secret_clear(Self.group, Self.kind)
        defer { sesame_secret_result_free(&result) }
        try check(result, doing: "remove the device identity")
    }

    /// Replaces the stamp file (a new inode: every reader's `stat` differs). When no new stamp
    /// can be made, removing the old one is a change readers see as well.
    private func stamp() {
        try? FileManager.default.createDirectory(
            atPath: stampDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = stampFile + ".\(getpid()).tmp"
        guard let descriptor = try? Posix.openOwnerOnly(temporary, O_WRONLY | O_CREAT | O_TRUNC) else {
            Posix.removeFile(stampFile)
            return
        }
        Posix.close(descriptor)
        do { try Posix.rename(temporary, to: stampFile) } catch {
            Posix.removeFile(temporary)
            Posix.removeFile(stampFile)
        }
    }

    private func check(_ result: SesameSecretResult, doing what: String) throws {
        try SecretServiceTokenStorage.check(result, location: location, doing: what)
    }
}
