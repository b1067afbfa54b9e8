import CLibSecret
import FoundationEssentials
import SesameCore

/// The device identity (the registration, its keys, the PRT and its session key) as one item in
/// the desktop's Secret Service: schema `org.sesame.TokenCache`, attributes `group` =
/// `device-identity` and `kind` = `device`, labelled "Sesame device identity". Never a file:
/// without a Secret Service, this computer is not registered.
public struct SecretServiceDeviceIdentityStorage: DeviceIdentityStorage {
    private static let group = "device-identity"
    private static let kind = "device"

    public init() {}

    public var location: String { "Secret Service" }

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
        var result = sesame_secret_store(Self.group, Self.kind, "Sesame device identity", value.revealed)
        defer { sesame_secret_result_free(&result) }
        try check(result, doing: "keep the device identity")
    }

    public func clear() throws {
        var result = sesame_secret_clear(Self.group, Self.kind)
        defer { sesame_secret_result_free(&result) }
        try check(result, doing: "remove the device identity")
    }

    private func check(_ result: SesameSecretResult, doing what: String) throws {
        try SecretServiceTokenStorage.check(result, location: location, doing: what)
    }
}
