import Crypto
import FoundationEssentials
import _CryptoExtras

/// The cryptography of [MS-OAPXBC] around a Primary Refresh Token's session key: the key
/// derivation (§3.1.5.1.3.3, KDFv1 and KDFv2), the session key sent to the device under its
/// transport key (`session_key_jwe`, §3.2.5.1.2.2) and the responses encrypted with a derived key
/// (§3.2.5.1.4.2). What each byte is: docs/design/device-identity.md §3.
enum SessionKeyCrypto {
    /// The SP 800-108 label.
    private static let label = Data("AzureAD-SecureConversation".utf8)

    /// A key derived from the session key for `context`: SP 800-108 in counter mode with
    /// HMAC-SHA256, the 32-bit counter before the fixed data, L = 256 (one block).
    static func derivedKey(from sessionKey: SymmetricKey, context: Data) -> SymmetricKey {
        var input = Data([0, 0, 0, 1])
        input += label
        input.append(0)
        input += context
        input += Data([0, 0, 1, 0])
        return SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: input, using: sessionKey)))
    }

    /// The context of a request signed with `ctx` under `kdf_ver`: KDFv2 hashes the request's
    /// payload (as received, never re-serialized) into it; KDFv1 uses `ctx` alone.
    static func context(ctx: Data, kdfVersion: Int, payload: Data) -> Data {
        kdfVersion >= 2 ? Data(SHA256.hash(data: ctx + payload)) : ctx
    }

    /// `session_key_jwe`: a compact JWE whose encrypted key is the session key under the device's
    /// transport key (RSA-OAEP, SHA-1, as Windows and roadtx read it); its content is empty,
    /// sealed with the session key itself.
    static func sessionKeyJWE(_ sessionKey: SymmetricKey, transportKey: _RSA.Encryption.PublicKey) throws -> String {
        let header = Base64URL.encode(JSON.object([("enc", .string("A256GCM")), ("alg", .string("RSA-OAEP"))]).data)
        let encryptedKey = try sessionKey.withUnsafeBytes { try transportKey.encrypt(Data($0), padding: .PKCS1_OAEP) }
        let sealed = try AES.GCM.seal(Data(), using: sessionKey, authenticating: Data(header.utf8))
        return [header, Base64URL.encode(encryptedKey), Base64URL.encode(sealed.nonce), "", Base64URL.encode(sealed.tag)]
            .joined(separator: ".")
    }

    /// A response encrypted for the holder of the session key: `alg` `dir`, `enc` `A256GCM`, a
    /// fresh `ctx` (standard base64, as the clients decode it), the key derived from it (KDFv1),
    /// the header as the additional data.
    static func encryptedResponse(_ body: Data, sessionKey: SymmetricKey) throws -> String {
        var ctx = Data(count: 24)
        for index in ctx.indices { ctx[index] = UInt8.random(in: 0...255) }
        let header = Base64URL.encode(
            JSON.object([
                ("alg", .string("dir")), ("enc", .string("A256GCM")), ("ctx", .string(ctx.base64EncodedString())),
                ("kid", .string("session")),
            ]).data)
        let key = derivedKey(from: sessionKey, context: ctx)
        let sealed = try AES.GCM.seal(body, using: key, authenticating: Data(header.utf8))
        return [header, "", Base64URL.encode(sealed.nonce), Base64URL.encode(sealed.ciphertext), Base64URL.encode(sealed.tag)]
            .joined(separator: ".")
    }

    /// Whether `signature` is the HS256 signature of `input` under the key derived for `context`.
    static func isValidSignature(_ signature: Data, of input: Data, sessionKey: SymmetricKey, context: Data) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: input, using: derivedKey(from: sessionKey, context: context))
    }
}
