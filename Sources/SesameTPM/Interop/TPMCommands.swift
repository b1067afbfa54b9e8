import CTPM
import FoundationEssentials
import Glibc

/// The TPM's commands as Sesame uses them (sesame_tpm.c): each opens the TPM `tcti` names, does
/// one thing and closes it. What comes back is bytes, or the step that failed in the TPM's words.
enum TPMCommands {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    enum KeyUse {
        case signing, decryption
    }

    /// Whether this user may open the kernel's TPM resource manager (group `tss` on Debian).
    static func mayOpen(device path: String) -> Bool { access(path, R_OK | W_OK) == 0 }

    static func probe(tcti: String) throws(Failure) { _ = try take(sesame_tpm_probe(tcti)) }

    static func create(tcti: String, use: KeyUse) throws(Failure) -> Data {
        try take(sesame_tpm_create(tcti, use == .signing ? SESAME_TPM_SIGNING : SESAME_TPM_DECRYPTION))
    }

    static func publicKey(blob: Data) throws(Failure) -> (modulus: Data, exponent: UInt32) {
        var exponent: UInt32 = 0
        let modulus = try take(blob.withUnsafeBytes { sesame_tpm_public($0.baseAddress, $0.count, &exponent) })
        return (modulus, exponent)
    }

    static func sign(tcti: String, blob: Data, digest: Data) throws(Failure) -> Data {
        try take(
            blob.withUnsafeBytes { key in
                digest.withUnsafeBytes { sesame_tpm_sign(tcti, key.baseAddress, key.count, $0.baseAddress, $0.count) }
            })
    }

    static func decrypt(tcti: String, blob: Data, cipher: Data) throws(Failure) -> Data {
        try take(
            blob.withUnsafeBytes { key in
                cipher.withUnsafeBytes { sesame_tpm_decrypt(tcti, key.baseAddress, key.count, $0.baseAddress, $0.count) }
            })
    }

    static func seal(tcti: String, secret: Data) throws(Failure) -> Data {
        try take(secret.withUnsafeBytes { sesame_tpm_seal(tcti, $0.baseAddress, $0.count) })
    }

    static func unseal(tcti: String, blob: Data) throws(Failure) -> Data {
        try take(blob.withUnsafeBytes { sesame_tpm_unseal(tcti, $0.baseAddress, $0.count) })
    }

    private static func take(_ result: sesame_tpm_result) throws(Failure) -> Data {
        var result = result
        defer { sesame_tpm_result_free(&result) }
        guard result.ok != 0 else {
            let message = withUnsafeBytes(of: result.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            throw Failure(description: message)
        }
        return result.size == 0 ? Data() : Data(bytes: result.bytes, count: result.size)
    }
}
