import Crypto
import Foundation
import Testing
import X509
import _CryptoExtras

@testable import IdentityEmulator

/// The relying party against a software authenticator built here with swift-crypto keys: what a
/// real key does is accepted, and each thing an attacker or a broken authenticator would do is
/// refused with its own reason.
@Suite("WebAuthn relying party")
final class WebAuthnRelyingPartyTests {
    static let rpID = "login.emulator.test"
    static let origin = "https://login.emulator.test:8443"
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let megan: [UInt8] = Array("megan-user-handle".utf8)

    var rp = WebAuthnRelyingParty(policy: WebAuthnPolicy(rpID: rpID, allowedOrigins: [origin]))
    var challenges = PasskeyChallenges()
    var credentials = PasskeyCredentials()

    init() {}

    /// Registers `authenticator` for megan and keeps the credential.
    func register(
        _ authenticator: SoftAuthenticator, attestation: SoftAuthenticator.Attestation = .none,
        tamper: (inout SoftAuthenticator.Answer) -> Void = { _ in }
    ) throws -> VerifiedRegistration {
        let issued = challenges.issue(for: .registration, userHandle: Self.megan, now: Self.now)
        var answer = SoftAuthenticator.Answer(challenge: issued.challenge, type: "webauthn.create", origin: Self.origin, rpID: Self.rpID)
        tamper(&answer)
        let response = try authenticator.registration(answer, attestation: attestation)
        let verified = try rp.verifyRegistration(response, challenges: &challenges, credentials: credentials, now: Self.now)
        try credentials.register(verified, displayName: "YubiKey", now: Self.now)
        return verified
    }

    /// Signs in with `authenticator`; `userHandle` nil: a username-less sign-in.
    func signIn(
        _ authenticator: inout SoftAuthenticator, userHandle: [UInt8]? = nil, at time: Date = now,
        tamper: (inout SoftAuthenticator.Answer) -> Void = { _ in }
    ) throws -> VerifiedAssertion {
        let issued = challenges.issue(for: .assertion, userHandle: userHandle, now: Self.now)
        var answer = SoftAuthenticator.Answer(challenge: issued.challenge, type: "webauthn.get", origin: Self.origin, rpID: Self.rpID)
        answer.userHandle = Self.megan
        tamper(&answer)
        let response = authenticator.assertion(answer)
        return try rp.verifyAssertion(response, challenges: &challenges, credentials: &credentials, now: time)
    }

    @Test("an ES256 passkey with attestation none registers, and signs in username-less as its user")
    func es256() throws {
        var key = SoftAuthenticator(.es256)
        let registration = try register(key)
        #expect(registration.algorithm == .es256)
        #expect(registration.attestation == .none)
        #expect(registration.userHandle == Self.megan)
        let options = rp.requestOptions(challenge: challenges.issue(for: .assertion, userHandle: nil, now: Self.now), allowing: [])
        #expect(options.rpId == Self.rpID && options.allowCredentials.isEmpty && options.userVerification == "required")
        let signedIn = try signIn(&key)
        #expect(signedIn.userHandle == Self.megan)
        #expect(signedIn.credential.signCount == key.counter)
        #expect(credentials.credential(id: key.credentialID)?.lastUsedAt == Self.now)
    }

    @Test("an RS256 security key registers and signs in after a username")
    func rs256() throws {
        var key = SoftAuthenticator(.rs256)
        #expect(try register(key).algorithm == .rs256)
        #expect(try signIn(&key, userHandle: Self.megan).credential.algorithm == .rs256)
    }

    @Test("packed self attestation verifies with the credential key; a wrong alg or signature is refused")
    func packedSelf() throws {
        #expect(try register(SoftAuthenticator(.es256), attestation: .packedSelf).attestation == .selfAttestation)
        #expect(try register(SoftAuthenticator(.rs256), attestation: .packedSelf).attestation == .selfAttestation)
        #expect(throws: WebAuthnRefusal.attestationInvalid) { try register(SoftAuthenticator(.es256), attestation: .packedSelfAlg(-257)) }
        #expect(throws: WebAuthnRefusal.attestationInvalid) {
            try register(SoftAuthenticator(.es256), attestation: .packedSelf) { $0.corruptAttestationSignature = true }
        }
    }

    @Test("packed x5c: the leaf certificate signs, its AAGUID extension must name the key's model")
    func packedX5C() throws {
        let key = SoftAuthenticator(.es256)
        let ca = P256.Signing.PrivateKey()
        let leaf = try SoftAuthenticator.attestationCertificate(aaguid: key.aaguid, caKey: ca)
        #expect(try register(key, attestation: .packedX5C(leaf)).attestation == .basic)

        let other = try SoftAuthenticator.attestationCertificate(aaguid: UUID(), caKey: ca)
        #expect(throws: WebAuthnRefusal.attestationAAGUIDMismatch) {
            try register(SoftAuthenticator(.es256), attestation: .packedX5C(other))
        }
        #expect(throws: WebAuthnRefusal.attestationInvalid) {
            try register(SoftAuthenticator(.es256), attestation: .packedX5C(leaf)) { $0.corruptAttestationSignature = true }
        }

        // Trusted roots: the chain must end at one.
        rp.policy.trustedAttestationRoots = [try SoftAuthenticator.rootCertificate(ca)]
        let third = SoftAuthenticator(.es256)
        #expect(
            try register(third, attestation: .packedX5C(try SoftAuthenticator.attestationCertificate(aaguid: third.aaguid, caKey: ca)))
                .attestation == .basic)
        let stranger = SoftAuthenticator(.es256)
        let untrusted = try SoftAuthenticator.attestationCertificate(aaguid: stranger.aaguid, caKey: P256.Signing.PrivateKey())
        #expect(throws: WebAuthnRefusal.attestationNotTrusted) { try register(stranger, attestation: .packedX5C(untrusted)) }
    }

    @Test("attestation enforced: none and self attestation are refused, an unknown format is refused, not taken as none")
    func attestationEnforced() throws {
        rp.policy.attestationEnforcement = .registrationOnly
        #expect(throws: WebAuthnRefusal.attestationRequired) { try register(SoftAuthenticator(.es256)) }
        #expect(throws: WebAuthnRefusal.attestationRequired) { try register(SoftAuthenticator(.es256), attestation: .packedSelf) }
        #expect(throws: WebAuthnRefusal.attestationFormatNotSupported) {
            try register(SoftAuthenticator(.es256), attestation: .format("tpm"))
        }
        rp.policy.attestationEnforcement = .disabled
        #expect(try register(SoftAuthenticator(.es256), attestation: .format("tpm")).attestation == .none)
        // A custom format is at most 32 characters (Entra's hardware vendor requirements).
        #expect(throws: WebAuthnRefusal.attestationFormatNotSupported) {
            try register(SoftAuthenticator(.es256), attestation: .format(String(repeating: "x", count: 33)))
        }
    }

    @Test("key restrictions: an AAGUID outside the allow list, or on the block list, is refused")
    func keyRestrictions() throws {
        let allowed = SoftAuthenticator(.es256)
        rp.policy.keyRestrictions = .init(enforcementType: .allow, aaguids: [allowed.aaguid])
        #expect(try register(allowed).aaguid == allowed.aaguid)
        #expect(throws: WebAuthnRefusal.authenticatorNotAllowed) { try register(SoftAuthenticator(.es256)) }
        let blocked = SoftAuthenticator(.es256)
        rp.policy.keyRestrictions = .init(enforcementType: .block, aaguids: [blocked.aaguid])
        #expect(throws: WebAuthnRefusal.authenticatorNotAllowed) { try register(blocked) }
        // A key registered before the administrator blocked its model no longer signs in.
        var registered = allowed
        rp.policy.keyRestrictions = .init(enforcementType: .block, aaguids: [allowed.aaguid])
        #expect(throws: WebAuthnRefusal.authenticatorNotAllowed) { try signIn(&registered) }
        #expect(WebAuthnRefusal.authenticatorNotAllowed.entraErrorCode == 135016)
        rp.policy.keyRestrictions = nil
        _ = try signIn(&registered)
    }

    @Test("a synced passkey (BE) is refused where only device-bound ones are allowed")
    func passkeyTypes() throws {
        rp.policy.passkeyTypes = [.deviceBound]
        #expect(throws: WebAuthnRefusal.passkeyTypeNotAllowed) {
            try register(SoftAuthenticator(.es256)) { $0.flags.insert(.backupEligible) }
        }
        // A synced passkey registered before the profile changed no longer signs in.
        rp.policy.passkeyTypes = [.deviceBound, .synced]
        var synced = SoftAuthenticator(.es256)
        _ = try register(synced) { $0.flags.insert(.backupEligible) }
        rp.policy.passkeyTypes = [.deviceBound]
        #expect(throws: WebAuthnRefusal.passkeyTypeNotAllowed) { try signIn(&synced) { $0.flags.insert(.backupEligible) } }
    }

    @Test("a forged signature is refused, and so is the right key's signature over other data")
    func forgedSignature() throws {
        var key = SoftAuthenticator(.es256)
        _ = try register(key)
        #expect(throws: WebAuthnRefusal.signatureInvalid) { try signIn(&key) { $0.corruptSignature = true } }
        var impostor = SoftAuthenticator(.es256, credentialID: key.credentialID)
        #expect(throws: WebAuthnRefusal.signatureInvalid) { try signIn(&impostor) }
    }

    @Test("a challenge answers once: the same answer again is refused")
    func replay() throws {
        var key = SoftAuthenticator(.es256)
        _ = try register(key)
        let issued = challenges.issue(for: .assertion, userHandle: nil, now: Self.now)
        var answer = SoftAuthenticator.Answer(challenge: issued.challenge, type: "webauthn.get", origin: Self.origin, rpID: Self.rpID)
        answer.userHandle = Self.megan
        let response = key.assertion(answer)
        _ = try rp.verifyAssertion(response, challenges: &challenges, credentials: &credentials, now: Self.now)
        #expect(throws: WebAuthnRefusal.challengeUnknown) {
            try rp.verifyAssertion(response, challenges: &challenges, credentials: &credentials, now: Self.now)
        }
        // A registration's challenge does not open a sign-in.
        let registration = challenges.issue(for: .registration, userHandle: Self.megan, now: Self.now)
        #expect(throws: WebAuthnRefusal.challengeUnknown) { try signIn(&key) { $0.challenge = registration.challenge } }
        // Nor does a challenge the server never made.
        #expect(throws: WebAuthnRefusal.challengeUnknown) { try signIn(&key) { $0.challenge = Array(repeating: 7, count: 32) } }
    }

    @Test("a challenge older than five minutes is refused")
    func expired() throws {
        var key = SoftAuthenticator(.es256)
        _ = try register(key)
        #expect(throws: WebAuthnRefusal.challengeExpired) { try signIn(&key, at: Self.now.addingTimeInterval(5 * 60 + 1)) }
        _ = try signIn(&key, at: Self.now.addingTimeInterval(4 * 60))
    }

    @Test("an answer made for another origin, from a frame, or with another rpId hash is refused")
    func origins() throws {
        var key = SoftAuthenticator(.es256)
        #expect(throws: WebAuthnRefusal.originNotAllowed) { try register(key) { $0.origin = "https://login.emulator.test.evil.example" } }
        #expect(throws: WebAuthnRefusal.originNotAllowed) { try register(key) { $0.origin = "http://login.emulator.test:8443" } }
        #expect(throws: WebAuthnRefusal.rpIDMismatch) { try register(key) { $0.rpID = "evil.example" } }
        _ = try register(key)
        #expect(throws: WebAuthnRefusal.originNotAllowed) { try signIn(&key) { $0.origin = "https://evil.example" } }
        #expect(throws: WebAuthnRefusal.crossOriginRefused) { try signIn(&key) { $0.extraClientData = #","crossOrigin":true"# } }
        #expect(throws: WebAuthnRefusal.crossOriginRefused) {
            try signIn(&key) { $0.extraClientData = #","crossOrigin":false,"topOrigin":"https://evil.example""# }
        }
        #expect(throws: WebAuthnRefusal.rpIDMismatch) { try signIn(&key) { $0.rpID = "login.microsoft.com" } }
        #expect(throws: WebAuthnRefusal.wrongCeremony) { try signIn(&key) { $0.type = "webauthn.create" } }
        _ = try signIn(&key) { $0.extraClientData = #","crossOrigin":false,"other_keys_can_be_added_here":"x""# }
    }

    @Test("user presence is always required; user verification when the policy requires it")
    func flags() throws {
        var key = SoftAuthenticator(.es256)
        #expect(throws: WebAuthnRefusal.userNotPresent) { try register(key) { $0.flags.remove(.userPresent) } }
        #expect(throws: WebAuthnRefusal.userNotVerified) { try register(key) { $0.flags.remove(.userVerified) } }
        _ = try register(key)
        #expect(throws: WebAuthnRefusal.userNotPresent) { try signIn(&key) { $0.flags.remove(.userPresent) } }
        #expect(throws: WebAuthnRefusal.userNotVerified) { try signIn(&key) { $0.flags.remove(.userVerified) } }
        rp.policy.userVerification = .preferred
        #expect(try signIn(&key) { $0.flags.remove(.userVerified) }.userVerified == false)
    }

    @Test("a counter that does not increase is refused (a cloned authenticator); zero stays zero")
    func counterRollback() throws {
        var key = SoftAuthenticator(.es256)
        _ = try register(key)
        _ = try signIn(&key)
        _ = try signIn(&key)
        var clone = key
        clone.counter -= 1  // its next signature carries the counter already stored
        #expect(throws: WebAuthnRefusal.signCountRollback) { try signIn(&clone) }
        clone.counter = key.counter - 1  // one less than stored
        #expect(throws: WebAuthnRefusal.signCountRollback) { try signIn(&clone) { $0.repeatCounter = true } }

        var passkey = SoftAuthenticator(.es256, counting: false)
        _ = try register(passkey)
        _ = try signIn(&passkey)
        #expect(try signIn(&passkey).credential.signCount == 0, "an authenticator without a counter always says 0")
    }

    @Test("a device-bound credential that signs in as backup eligible is refused (BE never changes)")
    func backupEligibility() throws {
        var key = SoftAuthenticator(.es256)
        _ = try register(key)
        #expect(throws: WebAuthnRefusal.backupEligibilityChanged) { try signIn(&key) { $0.flags.insert(.backupEligible) } }
        _ = try signIn(&key)
    }

    @Test("a credential id already registered is refused, for the same user or another")
    func duplicate() throws {
        let key = SoftAuthenticator(.es256)
        _ = try register(key)
        #expect(throws: WebAuthnRefusal.credentialAlreadyRegistered) { try register(key) }
        // The verification itself refuses it, before anything is kept.
        let again = try key.registration(
            .init(
                challenge: challenges.issue(for: .registration, userHandle: Self.megan, now: Self.now).challenge, type: "webauthn.create",
                origin: Self.origin, rpID: Self.rpID), attestation: .none)
        #expect(throws: WebAuthnRefusal.credentialAlreadyRegistered) {
            try rp.verifyRegistration(again, challenges: &challenges, credentials: credentials, now: Self.now)
        }
        let verified = try rp.verifyRegistration(
            try key.registration(
                .init(
                    challenge: challenges.issue(for: .registration, userHandle: Array("alex".utf8), now: Self.now).challenge,
                    type: "webauthn.create", origin: Self.origin, rpID: Self.rpID), attestation: .none),
            challenges: &challenges, credentials: PasskeyCredentials(), now: Self.now)
        #expect(throws: WebAuthnRefusal.credentialAlreadyRegistered) { try credentials.register(verified, displayName: "x", now: Self.now) }
    }

    @Test("a sign-in names the user: another user's credential or user handle is refused")
    func userBinding() throws {
        var key = SoftAuthenticator(.es256)
        _ = try register(key)
        #expect(throws: WebAuthnRefusal.credentialNotForUser) { try signIn(&key, userHandle: Array("alex".utf8)) }
        #expect(throws: WebAuthnRefusal.credentialNotForUser) { try signIn(&key) { $0.userHandle = Array("alex".utf8) } }
        #expect(throws: WebAuthnRefusal.credentialNotForUser) { try signIn(&key) { $0.userHandle = nil } }
        var unknown = SoftAuthenticator(.es256)
        #expect(throws: WebAuthnRefusal.credentialUnknown) { try signIn(&unknown) }
    }

    @Test("the options name the relying party, the user, both algorithms and the credentials to exclude")
    func options() throws {
        let key = SoftAuthenticator(.es256)
        _ = try register(key)
        let issued = challenges.issue(for: .registration, userHandle: Self.megan, now: Self.now)
        let options = rp.creationOptions(
            challenge: issued, userHandle: Self.megan, name: "megan@contoso.com", displayName: "Megan Bowen",
            existing: credentials.credentials(forUser: Self.megan))
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(options)) as? [String: Any]
        #expect((json?["rp"] as? [String: String]) == ["id": Self.rpID, "name": "Microsoft"])
        #expect((json?["pubKeyCredParams"] as? [[String: Any]])?.compactMap { $0["alg"] as? Int } == [-7, -257])
        #expect(json?["challenge"] as? String == WebAuthnBase64URL.encode(issued.challenge))
        #expect(issued.challenge.count == 32)
        #expect(options.excludeCredentials.map(\.id) == [WebAuthnBase64URL.encode(key.credentialID)])
        #expect(options.authenticatorSelection.userVerification == "required")
    }

    @Test("the credentials survive a round trip through JSON (the state directory)")
    func codable() throws {
        var key = SoftAuthenticator(.rs256)
        _ = try register(key)
        _ = try signIn(&key)
        let decoded = try JSONDecoder().decode(PasskeyCredentials.self, from: JSONEncoder().encode(credentials))
        #expect(decoded == credentials)
        credentials = decoded
        _ = try signIn(&key)
    }

    @Test("challenges are bounded: the oldest go first")
    func bounded() {
        var challenges = PasskeyChallenges()
        let first = challenges.issue(for: .assertion, userHandle: nil, now: Self.now)
        for _ in 0..<PasskeyChallenges.maximumCount { _ = challenges.issue(for: .assertion, userHandle: nil, now: Self.now) }
        #expect(challenges.count == PasskeyChallenges.maximumCount)
        #expect(throws: WebAuthnRefusal.challengeUnknown) { try challenges.consume(first.challenge, for: .assertion, now: Self.now) }
    }
}

// MARK: A software authenticator

/// A tiny CBOR encoder, test-only: what an authenticator writes.
indirect enum TestCBOR {
    case int(Int)
    case bytes([UInt8])
    case text(String)
    case array([TestCBOR])
    case map([(TestCBOR, TestCBOR)])

    var encoded: [UInt8] {
        switch self {
        case .int(let n): n >= 0 ? Self.head(0, UInt64(n)) : Self.head(1, UInt64(-1 - n))
        case .bytes(let b): Self.head(2, UInt64(b.count)) + b
        case .text(let t): Self.head(3, UInt64(t.utf8.count)) + Array(t.utf8)
        case .array(let a): Self.head(4, UInt64(a.count)) + a.flatMap(\.encoded)
        case .map(let m): Self.head(5, UInt64(m.count)) + m.flatMap { $0.0.encoded + $0.1.encoded }
        }
    }

    static func head(_ major: UInt8, _ value: UInt64) -> [UInt8] {
        let m = major << 5
        switch value {
        case 0..<24: return [m | UInt8(value)]
        case 24..<256: return [m | 24, UInt8(value)]
        case 256..<65536: return [m | 25, UInt8(value >> 8), UInt8(value & 0xff)]
        case 65536..<(1 << 32): return [m | 26] + (0..<4).reversed().map { UInt8(value >> (8 * UInt64($0)) & 0xff) }
        default: return [m | 27] + (0..<8).reversed().map { UInt8(value >> (8 * UInt64($0)) & 0xff) }
        }
    }
}

/// A passkey or security key in software: its key, credential id, AAGUID and counter.
struct SoftAuthenticator: Sendable {
    enum Algorithm { case es256, rs256 }
    enum Key: Sendable {
        case p256(P256.Signing.PrivateKey)
        case rsa(_RSA.Signing.PrivateKey)
    }
    enum Attestation: Sendable {
        case none, packedSelf
        case packedSelfAlg(Int)
        case packedX5C(AttestationCertificate)
        case format(String)
    }
    struct AttestationCertificate: Sendable {
        let der: [UInt8]
        let key: P256.Signing.PrivateKey
    }

    /// What the browser and authenticator put in an answer, each field a test may spoil.
    struct Answer {
        var challenge: [UInt8]
        var type: String
        var origin: String
        var rpID: String
        var extraClientData = ""
        var flags: AuthenticatorFlags = [.userPresent, .userVerified]
        var userHandle: [UInt8]?
        var corruptSignature = false
        var corruptAttestationSignature = false
        var repeatCounter = false
    }

    static let rsaKeys = [try! _RSA.Signing.PrivateKey(keySize: .bits2048)]

    let key: Key
    let credentialID: [UInt8]
    let aaguid = UUID()
    let counting: Bool
    var counter: UInt32 = 0

    init(_ algorithm: Algorithm, credentialID: [UInt8]? = nil, counting: Bool = true) {
        key = algorithm == .es256 ? .p256(P256.Signing.PrivateKey()) : .rsa(Self.rsaKeys[0])
        self.credentialID = credentialID ?? (0..<32).map { _ in UInt8.random(in: 0...255) }
        self.counting = counting
        counter = counting ? 1 : 0
    }

    var coseAlgorithm: Int {
        if case .p256 = key { -7 } else { -257 }
    }

    var coseKey: [UInt8] {
        switch key {
        case .p256(let k):
            let raw = Array(k.publicKey.rawRepresentation)
            return TestCBOR.map([
                (.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), .bytes(Array(raw[0..<32]))),
                (.int(-3), .bytes(Array(raw[32...]))),
            ]).encoded
        case .rsa(let k):
            let components = try! k.publicKey.getKeyPrimitives()
            return TestCBOR.map([
                (.int(1), .int(3)), (.int(3), .int(-257)), (.int(-1), .bytes(Array(components.modulus))),
                (.int(-2), .bytes(Array(components.publicExponent))),
            ]).encoded
        }
    }

    func sign(_ data: [UInt8]) -> [UInt8] {
        switch key {
        case .p256(let k): Array(try! k.signature(for: data).derRepresentation)
        case .rsa(let k): Array(try! k.signature(for: data, padding: .insecurePKCS1v1_5).rawRepresentation)
        }
    }

    func authenticatorData(_ answer: Answer, counter: UInt32, attested: Bool) -> [UInt8] {
        var flags = answer.flags
        if attested { flags.insert(.attestedCredentialData) }
        var data = Array(SHA256.hash(data: Array(answer.rpID.utf8))) + [flags.rawValue]
        data += (0..<4).reversed().map { UInt8(counter >> (8 * UInt32($0)) & 0xff) }
        if attested {
            data += withUnsafeBytes(of: aaguid.uuid) { Array($0) }
            data += [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xff)] + credentialID + coseKey
        }
        return data
    }

    func clientData(_ answer: Answer) -> [UInt8] {
        let challenge = WebAuthnBase64URL.encode(answer.challenge)
        return Array(#"{"type":"\#(answer.type)","challenge":"\#(challenge)","origin":"\#(answer.origin)"\#(answer.extraClientData)}"#.utf8)
    }

    func registration(_ answer: Answer, attestation: Attestation) throws -> RegistrationResponseJSON {
        let clientData = clientData(answer)
        let authData = authenticatorData(answer, counter: 0, attested: true)
        var signed = authData + Array(SHA256.hash(data: clientData))
        if answer.corruptAttestationSignature { signed[0] ^= 1 }
        let format: String
        let statement: [(TestCBOR, TestCBOR)]
        switch attestation {
        case .none:
            format = "none"
            statement = []
        case .packedSelf:
            format = "packed"
            statement = [(.text("alg"), .int(coseAlgorithm)), (.text("sig"), .bytes(sign(signed)))]
        case .packedSelfAlg(let alg):
            format = "packed"
            statement = [(.text("alg"), .int(alg)), (.text("sig"), .bytes(sign(signed)))]
        case .packedX5C(let certificate):
            format = "packed"
            statement = [
                (.text("alg"), .int(-7)), (.text("sig"), .bytes(Array(try certificate.key.signature(for: signed).derRepresentation))),
                (.text("x5c"), .array([.bytes(certificate.der)])),
            ]
        case .format(let name):
            format = name
            statement = [(.text("ver"), .text("2.0"))]
        }
        let object = TestCBOR.map([
            (.text("fmt"), .text(format)), (.text("attStmt"), .map(statement)), (.text("authData"), .bytes(authData)),
        ])
        let id = WebAuthnBase64URL.encode(credentialID)
        return RegistrationResponseJSON(
            id: id, rawId: id, type: "public-key",
            response: .init(
                clientDataJSON: WebAuthnBase64URL.encode(clientData), attestationObject: WebAuthnBase64URL.encode(object.encoded),
                transports: ["usb"]))
    }

    mutating func assertion(_ answer: Answer) -> AuthenticationResponseJSON {
        if counting && !answer.repeatCounter { counter &+= 1 }
        let clientData = clientData(answer)
        let authData = authenticatorData(answer, counter: counter, attested: false)
        var signature = sign(authData + Array(SHA256.hash(data: clientData)))
        if answer.corruptSignature { signature[signature.count - 1] ^= 1 }
        let id = WebAuthnBase64URL.encode(credentialID)
        return AuthenticationResponseJSON(
            id: id, rawId: id, type: "public-key",
            response: .init(
                clientDataJSON: WebAuthnBase64URL.encode(clientData), authenticatorData: WebAuthnBase64URL.encode(authData),
                signature: WebAuthnBase64URL.encode(signature), userHandle: answer.userHandle.map { WebAuthnBase64URL.encode($0) }))
    }

    static func rootCertificate(_ ca: P256.Signing.PrivateKey) throws -> Certificate {
        let name = try DistinguishedName { CommonName("Sesame Test Attestation Root") }
        return try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(ca.publicKey), notValidBefore: now.addingTimeInterval(-86400),
            notValidAfter: now.addingTimeInterval(86400 * 365), issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil)) },
            issuerPrivateKey: .init(ca))
    }

    /// A packed attestation certificate as §8.2.1 wants it, signed by `caKey`.
    static func attestationCertificate(aaguid: UUID, caKey: P256.Signing.PrivateKey) throws -> AttestationCertificate {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName {
            CountryName("US")
            OrganizationName("Sesame Test")
            OrganizationalUnitName("Authenticator Attestation")
            CommonName("Sesame Test Authenticator")
        }
        let issuer = try rootCertificate(caKey).subject
        let aaguidBytes = withUnsafeBytes(of: aaguid.uuid) { Array($0) }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey), notValidBefore: now.addingTimeInterval(-86400),
            notValidAfter: now.addingTimeInterval(86400 * 365), issuer: issuer, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Certificate.Extension(
                    oid: AttestationObject.aaguidExtension, critical: false, value: ArraySlice([0x04, 0x10] + aaguidBytes))
            },
            issuerPrivateKey: .init(caKey))
        return AttestationCertificate(der: try certificate.serializeAsPEM().derBytes, key: key)
    }

    static var now: Date { WebAuthnRelyingPartyTests.now }
}
