import FoundationEssentials

/// A JWT a device or the holder of a Primary Refresh Token signed: the PRT grant's `request`
/// signed with the device key ([MS-OAPXBC] 3.2.5.1.2.1, header `x5c`), a request signed with a key
/// derived from the session key (§3.2.5.1.3, header `ctx`), or the `x-ms-RefreshTokenCredential`
/// cookie (§2.2.1.1). Read before anything is verified: bounded, typed, and never trusted until
/// ``DeviceAuthority`` or the session key has checked its signature.
struct SignedRequest {
    /// Who says they signed it.
    enum Signer: Equatable {
        /// The device key; the header carries the device's certificate (`x5c`, DER).
        case device(certificate: Data)
        /// A key derived from a session key: the header's `ctx` and `kdf_ver`.
        case sessionKey(ctx: Data, kdfVersion: Int)
    }

    let signer: Signer
    /// `alg`: `RS256` for the device key, `HS256` for a derived key.
    let algorithm: String
    /// `header.payload`, as received.
    let signingInput: Data
    /// The payload's bytes, as received (KDFv2 hashes them).
    let payload: Data
    let signature: Data
    /// The payload's members: strings, numbers and booleans.
    let claims: [String: Any]

    /// No request, cookie or assertion of the protocol comes near this.
    static let maximumLength = 64 * 1024

    init(_ text: some StringProtocol) throws(ServiceError) {
        guard text.utf8.count <= Self.maximumLength else { throw Self.malformed }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]), let payload = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]), let claims = JSON.parseObject(payload),
            let header = try? JSONDecoder().decode(Header.self, from: headerData)
        else { throw Self.malformed }
        if let certificate = header.x5c, header.alg == "RS256", let der = Data(base64Encoded: certificate) {
            signer = .device(certificate: der)
        } else if let ctx = header.ctx, header.alg == "HS256", let bytes = Data(base64Encoded: ctx), (16...64).contains(bytes.count) {
            signer = .sessionKey(ctx: bytes, kdfVersion: header.kdfVersion ?? 1)
        } else {
            throw Self.malformed
        }
        algorithm = header.alg
        signingInput = Data("\(parts[0]).\(parts[1])".utf8)
        self.payload = payload
        self.signature = signature
        self.claims = claims
    }

    /// A claim as text (`iat` and `exp` come as strings from some clients, numbers from others).
    func string(_ name: String) -> String? {
        switch claims[name] {
        case let text as String: text.isEmpty ? nil : text
        case let number as Double: String(Int(number))
        default: nil
        }
    }

    /// Entra's answer to a request it cannot read.
    static let malformed = ServiceError.entra("invalid_request", 9_002_313, "Invalid request. Request is malformed or invalid.")

    /// The members of the header the protocol uses.
    private struct Header: Decodable {
        var alg: String
        var ctx: String?
        var kdfVersion: Int?
        /// The device certificate: a string (Windows, roadtx) or RFC 7515's array (its first).
        var x5c: String?

        enum CodingKeys: String, CodingKey {
            case alg, ctx, x5c
            case kdfVersion = "kdf_ver"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            alg = try container.decode(String.self, forKey: .alg)
            ctx = try? container.decodeIfPresent(String.self, forKey: .ctx)
            kdfVersion =
                (try? container.decodeIfPresent(Int.self, forKey: .kdfVersion))
                ?? (try? container.decodeIfPresent(String.self, forKey: .kdfVersion)).flatMap { $0.flatMap { Int($0) } }
            x5c =
                (try? container.decodeIfPresent(String.self, forKey: .x5c))
                ?? (try? container.decodeIfPresent([String].self, forKey: .x5c))?.flatMap(\.first)
        }
    }
}
