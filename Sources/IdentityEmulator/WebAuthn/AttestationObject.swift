import Crypto
import FoundationEssentials
import SwiftASN1
import X509

/// The attestation object of a registration (WebAuthn Level 3 §6.5.4): a CBOR map of `fmt`
/// (text), `attStmt` (map) and `authData` (bytes).
struct AttestationObject: Sendable, Equatable {
    static let maximumSize = 64 * 1024

    /// `fmt`: the attestation statement format (`none`, `packed`, …).
    let format: String
    /// `attStmt`: the format's statement.
    let statement: CBORValue
    let authenticatorData: AuthenticatorData

    init(_ bytes: [UInt8]) throws(WebAuthnRefusal) {
        guard bytes.count <= Self.maximumSize else { throw .malformedResponse("the attestation object is larger than 64 KiB") }
        let value: CBORValue
        do { value = try CBORDecoder.decode(bytes) } catch { throw .malformedResponse("the attestation object: \(error)") }
        guard let format = value[textKey: "fmt"]?.text, let statement = value[textKey: "attStmt"], statement.mapEntries != nil,
            let authData = value[textKey: "authData"]?.bytes
        else { throw .malformedResponse("the attestation object lacks fmt, attStmt or authData") }
        do { authenticatorData = try AuthenticatorData(authData) } catch {
            throw .malformedResponse("the authenticator data: \(error)")
        }
        self.format = format
        self.statement = statement
    }

    /// What the attestation statement proved.
    struct Verified: Sendable, Equatable {
        enum Kind: String, Sendable, Codable {
            /// `none`, or a format the relying party does not check: the AAGUID is the authenticator's word only.
            case none
            /// `packed` signed by the credential key itself.
            case selfAttestation
            /// `packed` signed by an attestation certificate (`x5c`).
            case basic
        }
        let kind: Kind
        /// The attestation format as the authenticator named it.
        let format: String
    }

    /// Verifies the statement (§8.2 packed, §8.7 none) over `authData ‖ clientDataHash`.
    /// A format other than `none` and `packed` is refused when attestation is enforced, and
    /// otherwise taken as `none`.
    func verify(clientDataHash: [UInt8], policy: WebAuthnPolicy, now: Date) throws(WebAuthnRefusal) -> Verified {
        guard let credential = authenticatorData.attestedCredential else {
            throw .malformedResponse("the registration carries no attested credential data")
        }
        let signed = authenticatorData.raw + clientDataHash
        let verified: Verified
        switch format {
        case "none":
            guard statement.mapEntries?.isEmpty == true else { throw .attestationInvalid }
            verified = Verified(kind: .none, format: format)
        case "packed":
            verified = try verifyPacked(credential: credential, signed: signed, policy: policy, now: now)
        default:
            // Entra, attestation not enforced: "none", "tpm", "packed" or a custom format of at most 32 characters.
            guard policy.attestationEnforcement == .disabled, format.count <= 32 else { throw .attestationFormatNotSupported }
            verified = Verified(kind: .none, format: format)
        }
        if policy.attestationEnforcement == .registrationOnly && verified.kind != .basic { throw .attestationRequired }
        return verified
    }

    private func verifyPacked(
        credential: AttestedCredentialData, signed: [UInt8], policy: WebAuthnPolicy, now: Date
    )
        throws(WebAuthnRefusal) -> Verified
    {
        guard let alg = statement[textKey: "alg"]?.int, let signature = statement[textKey: "sig"]?.bytes else {
            throw .attestationInvalid
        }
        guard statement[textKey: "ecdaaKeyId"] == nil else { throw .attestationFormatNotSupported }
        guard let x5c = statement[textKey: "x5c"] else {
            // Self attestation: the credential key signs, with its own algorithm.
            guard alg == credential.publicKey.algorithm.rawValue else { throw .attestationInvalid }
            guard credential.publicKey.isValidSignature(signature, for: signed) else { throw .attestationInvalid }
            return Verified(kind: .selfAttestation, format: format)
        }
        guard let chain = x5c.array, !chain.isEmpty, chain.count <= 8 else { throw .attestationInvalid }
        var certificates: [Certificate] = []
        for element in chain {
            guard let der = element.bytes, let certificate = try? Certificate(derEncoded: der) else { throw .attestationInvalid }
            certificates.append(certificate)
        }
        let leaf = certificates[0]
        let algorithm: Certificate.SignatureAlgorithm
        switch COSEAlgorithm(rawValue: alg) {
        case .es256: algorithm = .ecdsaWithSHA256
        case .rs256: algorithm = .sha256WithRSAEncryption
        case nil: throw .attestationInvalid
        }
        guard leaf.publicKey.isValidSignature(signature, for: signed, signatureAlgorithm: algorithm) else { throw .attestationInvalid }
        try Self.checkAttestationCertificate(leaf, aaguid: credential.aaguid, now: now)
        if !policy.trustedAttestationRoots.isEmpty {
            guard Self.chains(certificates, to: policy.trustedAttestationRoots) else { throw .attestationNotTrusted }
        }
        return Verified(kind: .basic, format: format)
    }

    /// §8.2.1's requirements of a packed attestation certificate: version 3, `OU=Authenticator
    /// Attestation`, not a CA, in its validity period, and its AAGUID extension
    /// (1.3.6.1.4.1.45724.1.1.4), when present and not critical, equal to the credential's.
    static func checkAttestationCertificate(_ leaf: Certificate, aaguid: UUID, now: Date) throws(WebAuthnRefusal) {
        guard leaf.version == .v3 else { throw .attestationInvalid }
        let units = leaf.subject.flatMap { Array($0) }.map { String(describing: $0) }
        guard units.contains("OU=Authenticator Attestation") else { throw .attestationInvalid }
        if case .isCertificateAuthority = (try? leaf.extensions.basicConstraints) ?? .notCertificateAuthority {
            throw .attestationInvalid
        }
        guard leaf.notValidBefore <= now, now <= leaf.notValidAfter else { throw .attestationNotTrusted }
        if let extensionValue = leaf.extensions[oid: aaguidExtension] {
            guard !extensionValue.critical else { throw .attestationInvalid }
            // extnValue holds an OCTET STRING of the 16 bytes.
            let bytes = Array(extensionValue.value)
            guard bytes.count == 18, bytes[0] == 0x04, bytes[1] == 16 else { throw .attestationInvalid }
            guard UUID(uuid: AuthenticatorData.uuid(Array(bytes[2...]))) == aaguid else { throw .attestationAAGUIDMismatch }
        }
    }

    static let aaguidExtension: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 45724, 1, 1, 4]

    /// Whether each certificate is signed by the next, and the last is a trusted root or signed by one.
    static func chains(_ certificates: [Certificate], to roots: [Certificate]) -> Bool {
        for (certificate, issuer) in zip(certificates, certificates.dropFirst()) {
            guard issuer.publicKey.isValidSignature(certificate.signature, for: certificate) else { return false }
        }
        guard let last = certificates.last else { return false }
        return roots.contains { $0 == last || $0.publicKey.isValidSignature(last.signature, for: last) }
    }
}
