import Crypto
import FoundationEssentials
import _CryptoExtras

/// A COSE signature algorithm (RFC 9053) a credential may use: the two Entra offers in
/// `pubKeyCredParams`.
enum COSEAlgorithm: Int, Codable, Sendable, CaseIterable {
    /// ECDSA over P-256 with SHA-256; the signature is DER-encoded.
    case es256 = -7
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case rs256 = -257
}

/// Why a credential public key was refused.
enum COSEKeyError: Error, Equatable, Sendable, CustomStringConvertible {
    case cbor(CBORError)
    case notAMap
    /// `kty` (label 1) missing or not EC2 (2) / RSA (3).
    case unsupportedKeyType
    /// `alg` (label 3) missing or not ES256 / RS256, or not the algorithm the key type uses.
    case unsupportedAlgorithm
    /// EC2 with a curve other than P-256 (`crv`, label -1, must be 1).
    case unsupportedCurve
    /// A coordinate, modulus or exponent missing, of the wrong length, or not a valid key.
    case invalidKey

    var description: String {
        switch self {
        case .cbor(let error): "the credential public key is not CBOR: \(error)"
        case .notAMap: "the credential public key is not a COSE_Key map"
        case .unsupportedKeyType: "the credential public key is neither EC2 nor RSA"
        case .unsupportedAlgorithm: "the credential public key's algorithm is neither ES256 nor RS256"
        case .unsupportedCurve: "the credential public key's curve is not P-256"
        case .invalidKey: "the credential public key is not a valid key"
        }
    }
}

/// A credential public key in COSE_Key form (RFC 9052 §7), as the authenticator gives it in the
/// attested credential data and the relying party keeps it.
struct COSEKey: Sendable, Equatable {
    enum Material: Sendable, Equatable {
        /// EC2 P-256: `x` (-2) and `y` (-3), 32 bytes each.
        case p256(x: [UInt8], y: [UInt8])
        /// RSA: modulus `n` (-1) and exponent `e` (-2).
        case rsa(n: [UInt8], e: [UInt8])
    }

    let algorithm: COSEAlgorithm
    let material: Material

    /// Parses the encoded COSE_Key.
    init(cbor: [UInt8]) throws(COSEKeyError) {
        let value: CBORValue
        do { value = try CBORDecoder.decode(cbor) } catch { throw .cbor(error) }
        try self.init(value: value)
    }

    init(value: CBORValue) throws(COSEKeyError) {
        guard value.mapEntries != nil else { throw .notAMap }
        guard let alg = value[intKey: 3]?.int, let algorithm = COSEAlgorithm(rawValue: alg) else { throw .unsupportedAlgorithm }
        switch value[intKey: 1]?.int {
        case 2:
            guard algorithm == .es256 else { throw .unsupportedAlgorithm }
            guard value[intKey: -1]?.int == 1 else { throw .unsupportedCurve }
            guard let x = value[intKey: -2]?.bytes, let y = value[intKey: -3]?.bytes, x.count == 32, y.count == 32 else {
                throw .invalidKey
            }
            guard (try? P256.Signing.PublicKey(x963Representation: [0x04] + x + y)) != nil else { throw .invalidKey }
            material = .p256(x: x, y: y)
        case 3:
            guard algorithm == .rs256 else { throw .unsupportedAlgorithm }
            guard let n = value[intKey: -1]?.bytes, let e = value[intKey: -2]?.bytes, !n.isEmpty, !e.isEmpty, n.count <= 1024, e.count <= 8
            else { throw .invalidKey }
            guard (try? _RSA.Signing.PublicKey(n: n, e: e)) != nil else { throw .invalidKey }
            material = .rsa(n: n, e: e)
        default:
            throw .unsupportedKeyType
        }
        self.algorithm = algorithm
    }

    /// Whether `signature` is this key's signature over `data` with its algorithm: ES256 takes
    /// a DER ECDSA signature over SHA-256, RS256 a PKCS #1 v1.5 signature over SHA-256.
    func isValidSignature(_ signature: [UInt8], for data: [UInt8]) -> Bool {
        switch material {
        case .p256(let x, let y):
            guard let key = try? P256.Signing.PublicKey(x963Representation: [0x04] + x + y),
                let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature)
            else { return false }
            return key.isValidSignature(parsed, for: data)
        case .rsa(let n, let e):
            guard let key = try? _RSA.Signing.PublicKey(n: n, e: e) else { return false }
            return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: data, padding: .insecurePKCS1v1_5)
        }
    }
}
