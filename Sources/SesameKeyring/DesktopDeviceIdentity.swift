import FoundationEssentials
import SesameCore

extension DeviceIdentity {
    /// This computer's identity as the desktop keeps it: one item in the Secret Service, when the
    /// sign-ins are kept there. With sign-ins kept in files (no keyring), none: a device's keys
    /// and PRT are never written to a file, so such a computer cannot be registered.
    public static func desktop(for storage: any TokenStorage, transport: any HTTPTransport) -> DeviceIdentity? {
        guard storage is SecretServiceTokenStorage else { return nil }
        return DeviceIdentity(storage: SecretServiceDeviceIdentityStorage(), transport: transport)
    }
}
