import Crypto
import FoundationEssentials
import _CryptoExtras

/// RS256 JSON Web Tokens: signing what the emulator issues, and checking bearer tokens that come
/// back to Graph and the task API.
enum JSONWebToken {
    /// `header.payload.signature`, signed with RSASSA-PKCS1-v1_5 / SHA-256.
    static func sign(header: JSON, claims: JSON, with key: SigningKey) throws -> String {
        let input = Base64URL.encode(header.data) + "." + Base64URL.encode(claims.data)
        let signature = try key.privateKey.signature(for: SHA256.hash(data: Data(input.utf8)), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }

    /// Signs a token-sized JWT over and over on every core for `duration`: signatures per second.
    static func signaturesPerSecond(key: SigningKey, for duration: Duration) async throws -> Double {
        let header = JSON.object([("typ", .string("JWT")), ("alg", .string("RS256")), ("kid", .string(key.keyID))])
        let claims = JSON.object(
            (0..<16).map { ("claim\($0)", .string(String(repeating: "x", count: 40))) } + [("iat", .int(Int(Date().timeIntervalSince1970)))]
        )
        let started = ContinuousClock.now
        let count = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<ProcessInfo.processInfo.activeProcessorCount {
                group.addTask {
                    var signed = 0
                    while started.duration(to: .now) < duration {
                        _ = try sign(header: header, claims: claims, with: key)
                        signed += 1
                    }
                    return signed
                }
            }
            return try await group.reduce(0, +)
        }
        return Double(count) / (started.duration(to: .now) / .seconds(1))
    }

    /// Why a bearer token is refused.
    enum Failure: Error, Equatable {
        /// Not three base64url parts of JSON.
        case malformed
        /// Not signed by the emulator's key.
        case badSignature
    }

    /// The `kid` a token's header names (before anything is verified).
    static func keyID(of token: String) -> String? {
        guard let header = token.split(separator: ".").first, let data = Base64URL.decode(header) else { return nil }
        return JSON.parseObject(data)?["kid"] as? String
    }

    /// The claims of a token signed by `key`.
    static func verify(_ token: String, with key: SigningKey) throws(Failure) -> [String: Any] {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerData = Base64URL.decode(parts[0]), JSON.parseObject(headerData) != nil,
            let payloadData = Base64URL.decode(parts[1]), let claims = JSON.parseObject(payloadData),
            let signatureData = Base64URL.decode(parts[2])
        else { throw .malformed }
        let input = Data("\(parts[0]).\(parts[1])".utf8)
        let signature = _RSA.Signing.RSASignature(rawRepresentation: signatureData)
        guard key.privateKey.publicKey.isValidSignature(signature, for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5)
        else { throw .badSignature }
        return claims
    }
}
