import Crypto
import FoundationEssentials
import SesameCore

/// The device key and the transport key made inside a TPM 2.0: they never leave it. What is kept
/// of them (in the Secret Service, with the registration) is each key's blob — its private half
/// encrypted by the TPM's own storage key, so it loads in this TPM only — and where the TPM is.
/// The PRT's session key is sealed to the same TPM (``seal(sessionKey:)``).
public struct TPMDeviceKeys: DeviceKeys {
    /// The TPM, as tpm2-tss names it (`device:/dev/tpmrm0`, `swtpm:path=…`).
    public let tcti: String
    let deviceKey: Data
    let transportKey: Data

    public var storeName: String { "tpm" }

    public func whereKept(storage: String) -> String {
        "in the TPM (\(tcti)), which also seals the PRT's session key; the \(storage) keeps their sealed blobs"
    }

    /// The kept form's fields: the blobs are not secret by themselves (only this TPM can use
    /// them), but they are kept with the registration all the same.
    struct Form: Codable {
        var tcti: String
        var deviceKey: String
        var transportKey: String
    }

    public var sealed: Secret {
        let form = Form(tcti: tcti, deviceKey: deviceKey.base64EncodedString(), transportKey: transportKey.base64EncodedString())
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        return Secret(String(decoding: (try? encoder.encode(form)) ?? Data(), as: UTF8.self))
    }

    init(tcti: String, deviceKey: Data, transportKey: Data) {
        self.tcti = tcti
        self.deviceKey = deviceKey
        self.transportKey = transportKey
    }

    init(sealed: Secret) throws(DeviceIdentityError) {
        guard sealed.revealed.utf8.count < 16 * 1024, let form = try? JSONDecoder().decode(Form.self, from: Data(sealed.revealed.utf8)),
            !form.tcti.isEmpty, let device = Data(base64Encoded: form.deviceKey), let transport = Data(base64Encoded: form.transportKey),
            (try? TPMCommands.publicKey(blob: device)) != nil, (try? TPMCommands.publicKey(blob: transport)) != nil
        else { throw DeviceIdentityError(.keysUnreadable, "The device's TPM keys could not be read back from where they were kept.") }
        self.init(tcti: form.tcti, deviceKey: device, transportKey: transport)
    }

    public func certificateRequest(commonName: String) throws -> Data {
        let key = try TPMCommands.publicKey(blob: deviceKey)
        return try DeviceCertificateRequest.make(
            commonName: commonName, modulus: key.modulus, exponent: Self.bytes(key.exponent), sign: sign)
    }

    public var transportKeyBlob: Data {
        let key = try? TPMCommands.publicKey(blob: transportKey)
        return TransportKeyBlob.encode(modulus: key?.modulus ?? Data(), exponent: Self.bytes(key?.exponent ?? 0))
    }

    public func sign(_ data: Data) throws -> Data {
        do { return try TPMCommands.sign(tcti: tcti, blob: deviceKey, digest: Data(SHA256.hash(data: data))) } catch {
            throw Self.unusable(tcti, error)
        }
    }

    public func decrypt(_ data: Data) throws -> Data {
        do { return try TPMCommands.decrypt(tcti: tcti, blob: transportKey, cipher: data) } catch { throw Self.unusable(tcti, error) }
    }

    public func seal(sessionKey: Data) throws -> Data? {
        do { return try TPMCommands.seal(tcti: tcti, secret: sessionKey) } catch { throw Self.unusable(tcti, error) }
    }

    public func unseal(sessionKey sealed: Data) throws -> Data {
        do { return try TPMCommands.unseal(tcti: tcti, blob: sealed) } catch { throw Self.unusable(tcti, error) }
    }

    static func unusable(_ tcti: String, _ failure: TPMCommands.Failure) -> DeviceIdentityError {
        DeviceIdentityError(
            .keysUnreadable,
            "This computer's keys are in its TPM (\(tcti)), which could not be used: \(failure). "
                + "If the TPM was cleared or replaced, run `sesame device remove`, then register again.")
    }

    /// A public exponent as big-endian bytes without leading zeros.
    static func bytes(_ value: UInt32) -> Data {
        Data(withUnsafeBytes(of: value.bigEndian) { Array($0) }.drop { $0 == 0 })
    }
}
