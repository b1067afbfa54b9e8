import Crypto
import FoundationEssentials
import X509

/// The session key's cryptography on the client's side ([MS-OAPXBC] 3.1.5.1.3.3, 3.2.5.1.4.2):
/// the SP 800-108 derivation and the answers encrypted with a derived key.
enum SessionKeyEnvelope {
    /// SP 800-108 in counter mode, HMAC-SHA256, label `AzureAD-SecureConversation`, one block.
    static func derivedKey(_ sessionKey: SymmetricKey, context: Data) -> SymmetricKey {
        var input = Data([0, 0, 0, 1])
        input += Data("AzureAD-SecureConversation".utf8)
        input.append(0)
        input += context
        input += Data([0, 0, 1, 0])
        return SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: input, using: sessionKey)))
    }

    /// The plaintext of an answer: a compact JWE (`dir`, `A256GCM`, the header's `ctx`; the key
    /// derived from it, the header as additional data), or plain JSON as a service may send it.
    static func open(_ body: Data, sessionKey: SymmetricKey) -> Data? {
        guard body.count <= 1 << 20 else { return nil }
        if body.first == UInt8(ascii: "{") { return body }
        let parts = String(decoding: body, as: UTF8.self).trimmingWhitespace().split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 5, let headerData = Base64URL.decode(parts[0]),
            let header = try? JSONDecoder().decode([String: JSONValue].self, from: headerData),
            header["enc"]?.stringValue == "A256GCM", let ctxText = header["ctx"]?.stringValue, let ctx = Data(base64Encoded: ctxText),
            let iv = Base64URL.decode(parts[2]), let ciphertext = Base64URL.decode(parts[3]), let tag = Base64URL.decode(parts[4]),
            let box = try? AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: iv), ciphertext: ciphertext, tag: tag)
        else { return nil }
        return try? AES.GCM.open(box, using: derivedKey(sessionKey, context: ctx), authenticating: Data(parts[0].utf8))
    }
}

/// What Sesame reads of a device certificate.
enum DeviceCertificate {
    /// The subject's common name: the device id.
    static func commonName(_ der: Data) -> String? {
        guard der.count <= 16 * 1024, let certificate = try? Certificate(derEncoded: Array(der)) else { return nil }
        for name in certificate.subject {
            for attribute in name where attribute.type == .RDNAttributeType.commonName { return String(describing: attribute.value) }
        }
        return nil
    }
}
