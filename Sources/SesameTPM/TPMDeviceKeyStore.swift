import Dispatch
import FoundationEssentials
import SesameCore

/// New device keys made in a TPM 2.0, and kept ones read back (``TPMDeviceKeys``).
public struct TPMDeviceKeyStore: DeviceKeyStore {
    /// Where new keys are made (kept keys name their own TPM).
    public let tcti: String

    public init(tcti: String) { self.tcti = tcti }

    public var name: String { "tpm" }

    /// The TPM this user's keys go to: `$SESAME_TPM` when set (a tpm2-tss TCTI such as
    /// `swtpm:path=/run/user/1000/tpm/sock`, or `none` for software keys), else the kernel's
    /// resource manager `/dev/tpmrm0` when this user may open it (on Debian: group `tss`).
    public static func desktop(environment: [String: String]) -> TPMDeviceKeyStore? {
        if let chosen = environment["SESAME_TPM"], !chosen.isEmpty {
            return chosen == "none" ? nil : TPMDeviceKeyStore(tcti: chosen)
        }
        return TPMCommands.mayOpen(device: "/dev/tpmrm0") ? TPMDeviceKeyStore(tcti: "device:/dev/tpmrm0") : nil
    }

    public func makeKeys() async throws(DeviceIdentityError) -> any DeviceKeys {
        let tcti = self.tcti
        // Key generation inside the TPM takes from milliseconds (swtpm) to seconds (a slow chip):
        // off Swift's task threads, as software keys are made.
        let made = await withCheckedContinuation { (continuation: CheckedContinuation<Result<TPMDeviceKeys, TPMCommands.Failure>, Never>) in
            Self.keyMaking.async {
                continuation.resume(
                    returning: Result { () throws(TPMCommands.Failure) in
                        try TPMCommands.probe(tcti: tcti)
                        return TPMDeviceKeys(
                            tcti: tcti, deviceKey: try TPMCommands.create(tcti: tcti, use: .signing),
                            transportKey: try TPMCommands.create(tcti: tcti, use: .decryption))
                    })
            }
        }
        switch made {
        case .success(let keys): return keys
        case .failure(let failure):
            throw DeviceIdentityError(
                .keysUnreadable,
                "The TPM (\(tcti)) could not make this computer's keys: \(failure). "
                    + "Set SESAME_TPM=none to use software keys kept in the keyring instead.")
        }
    }

    private static let keyMaking = DispatchQueue(label: "sesame.tpm-keys")

    public func keys(sealed: Secret) throws(DeviceIdentityError) -> any DeviceKeys { try TPMDeviceKeys(sealed: sealed) }
}
