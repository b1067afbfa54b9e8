import FoundationEssentials
import SesameCore
import SesameTPM

extension DeviceIdentity {
    /// This computer's identity as the desktop keeps it: one item in the Secret Service, when the
    /// sign-ins are kept there. With sign-ins kept in files (no keyring), none: a device's keys
    /// and PRT are never written to a file, so such a computer cannot be registered. New keys go
    /// to the computer's TPM when this user may use it (``TPMDeviceKeyStore/desktop(environment:)``),
    /// else they are software keys sealed in the Secret Service.
    public static func desktop(
        for storage: any TokenStorage, transport: any HTTPTransport, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> DeviceIdentity? {
        guard storage is SecretServiceTokenStorage else { return nil }
        let software = SoftwareDeviceKeyStore()
        // Keys kept in a TPM are read back whichever store new keys would go to.
        let stores: [any DeviceKeyStore] =
            if let tpm = TPMDeviceKeyStore.desktop(environment: environment) { [tpm, software] } else {
                [software, TPMDeviceKeyStore(tcti: "device:/dev/tpmrm0")]
            }
        return DeviceIdentity(storage: SecretServiceDeviceIdentityStorage(), keyStores: stores, transport: transport)
    }
}
