import Crypto
import FoundationEssentials
import X509

/// The relying party's policy: Entra's passkey (FIDO2) method settings and passkey profile
/// (Graph `passkeyProfile`: `attestationEnforcement`, `keyRestrictions`, `passkeyTypes`).
struct WebAuthnPolicy: Sendable {
    enum UserVerification: String, Sendable, Codable {
        case required, preferred, discouraged
    }
    /// `attestationEnforcement`: `disabled` or `registrationOnly`.
    enum AttestationEnforcement: String, Sendable, Codable {
        case disabled, registrationOnly
    }
    /// `passkeyTypes`: device-bound (BE clear) or synced (BE set).
    enum PasskeyType: String, Sendable, Codable {
        case deviceBound, synced
    }
    /// `keyRestrictions` (`fido2KeyRestrictions`): allow or block the listed AAGUIDs.
    struct KeyRestrictions: Sendable, Equatable {
        enum Enforcement: String, Sendable, Codable {
            case allow, block
        }
        var enforcementType: Enforcement
        var aaguids: Set<UUID>

        func permits(_ aaguid: UUID) -> Bool {
            switch enforcementType {
            case .allow: aaguids.contains(aaguid)
            case .block: !aaguids.contains(aaguid)
            }
        }
    }

    /// The relying party id: a host name (Entra's is `login.microsoft.com`; the emulator's is
    /// its own host, e.g. `127.0.0.1` or `login.emulator.test`).
    var rpID: String
    var rpName = "Microsoft"
    /// The origins the pages are served from, exactly as a browser writes them (`https://host:port`).
    var allowedOrigins: Set<String>
    var userVerification = UserVerification.required
    var algorithms: [COSEAlgorithm] = [.es256, .rs256]
    /// nil: any authenticator model.
    var keyRestrictions: KeyRestrictions?
    var attestationEnforcement = AttestationEnforcement.disabled
    var passkeyTypes: Set<PasskeyType> = [.deviceBound, .synced]
    /// Roots an attestation certificate chain must end at; empty: any well-formed packed `x5c`.
    var trustedAttestationRoots: [Certificate] = []
    /// Milliseconds the browser waits (the options' `timeout`), the challenge's life.
    var timeoutMilliseconds = Int(PasskeyChallenges.lifetime * 1000)

    init(rpID: String, allowedOrigins: Set<String>) {
        self.rpID = rpID
        self.allowedOrigins = allowedOrigins
    }
}

/// A registration that passed every check of §7.1, ready for ``PasskeyCredentials/register``.
struct VerifiedRegistration: Sendable, Equatable {
    let credentialID: [UInt8]
    let userHandle: [UInt8]
    let publicKey: [UInt8]
    let algorithm: COSEAlgorithm
    let signCount: UInt32
    let aaguid: UUID
    let userVerified: Bool
    let backupEligible: Bool
    let backedUp: Bool
    let transports: [String]
    let attestationFormat: String
    let attestation: AttestationObject.Verified.Kind
}

/// A sign-in that passed every check of §7.2: the credential (now with its new counter) and its user.
struct VerifiedAssertion: Sendable, Equatable {
    let credential: PasskeyCredential
    let userHandle: [UInt8]
    let userVerified: Bool
}

/// The emulator's WebAuthn relying party, strict as Entra's: it makes the options the pages
/// give the browser and verifies what the browser answers.
struct WebAuthnRelyingParty: Sendable {
    var policy: WebAuthnPolicy

    init(policy: WebAuthnPolicy) { self.policy = policy }

    var rpIDHash: [UInt8] { Array(SHA256.hash(data: Array(policy.rpID.utf8))) }

    // MARK: Options

    func creationOptions(
        challenge: PasskeyChallenges.Issued, userHandle: [UInt8], name: String, displayName: String, existing: [PasskeyCredential]
    ) -> PublicKeyCredentialCreationOptionsJSON {
        PublicKeyCredentialCreationOptionsJSON(
            rp: .init(id: policy.rpID, name: policy.rpName),
            user: .init(id: WebAuthnBase64URL.encode(userHandle), name: name, displayName: displayName),
            challenge: WebAuthnBase64URL.encode(challenge.challenge),
            pubKeyCredParams: policy.algorithms.map { .init(alg: $0.rawValue) }, timeout: policy.timeoutMilliseconds,
            excludeCredentials: existing.map { .init(id: $0.id, transports: $0.transports.isEmpty ? nil : $0.transports) },
            authenticatorSelection: .init(userVerification: policy.userVerification.rawValue),
            attestation: "direct")
    }

    /// `allowing` empty: a username-less sign-in.
    func requestOptions(challenge: PasskeyChallenges.Issued, allowing: [PasskeyCredential]) -> PublicKeyCredentialRequestOptionsJSON {
        PublicKeyCredentialRequestOptionsJSON(
            challenge: WebAuthnBase64URL.encode(challenge.challenge), timeout: policy.timeoutMilliseconds, rpId: policy.rpID,
            allowCredentials: allowing.map { .init(id: $0.id, transports: $0.transports.isEmpty ? nil : $0.transports) },
            userVerification: policy.userVerification.rawValue)
    }

    // MARK: §7.1 Registration

    /// Verifies a registration answer. The challenge is consumed whatever the outcome.
    func verifyRegistration(
        _ response: RegistrationResponseJSON, challenges: inout PasskeyChallenges, credentials: PasskeyCredentials, now: Date
    ) throws(WebAuthnRefusal) -> VerifiedRegistration {
        let rawID = try credentialID(id: response.id, rawId: response.rawId, type: response.type)
        let clientDataBytes = try decode(response.response.clientDataJSON, "clientDataJSON")
        let clientData = try checkClientData(clientDataBytes, type: "webauthn.create")
        let issued = try challenges.consume(clientData.challenge, for: .registration, now: now)
        guard let userHandle = issued.userHandle else { throw .challengeUnknown }
        try checkOrigin(clientData)
        let attestationObject = try AttestationObject(try decode(response.response.attestationObject, "attestationObject"))
        let authData = attestationObject.authenticatorData
        try checkFlags(authData)
        guard let credential = authData.attestedCredential else {
            throw .malformedResponse("the registration carries no attested credential data")
        }
        guard credential.credentialID == rawID else { throw .malformedResponse("the credential id differs from rawId") }
        guard policy.algorithms.contains(credential.publicKey.algorithm) else { throw .algorithmNotAllowed }
        let clientDataHash = Array(SHA256.hash(data: clientDataBytes))
        let attestation = try attestationObject.verify(clientDataHash: clientDataHash, policy: policy, now: now)
        if let restrictions = policy.keyRestrictions, !restrictions.permits(credential.aaguid) { throw .authenticatorNotAllowed }
        let type: WebAuthnPolicy.PasskeyType = authData.flags.contains(.backupEligible) ? .synced : .deviceBound
        guard policy.passkeyTypes.contains(type) else { throw .passkeyTypeNotAllowed }
        guard credentials.credential(id: credential.credentialID) == nil else { throw .credentialAlreadyRegistered }
        let transports = (response.response.transports ?? []).prefix(8).filter {
            ["usb", "nfc", "ble", "internal", "hybrid", "smart-card"].contains($0)
        }
        return VerifiedRegistration(
            credentialID: credential.credentialID, userHandle: userHandle, publicKey: credential.publicKeyBytes,
            algorithm: credential.publicKey.algorithm, signCount: authData.signCount, aaguid: credential.aaguid,
            userVerified: authData.flags.contains(.userVerified), backupEligible: authData.flags.contains(.backupEligible),
            backedUp: authData.flags.contains(.backedUp), transports: Array(transports), attestationFormat: attestation.format,
            attestation: attestation.kind)
    }

    // MARK: §7.2 Authentication

    /// Verifies a sign-in answer and records the credential's new counter. The challenge is
    /// consumed whatever the outcome; a username-less sign-in's user is the credential's owner.
    func verifyAssertion(
        _ response: AuthenticationResponseJSON, challenges: inout PasskeyChallenges, credentials: inout PasskeyCredentials, now: Date
    ) throws(WebAuthnRefusal) -> VerifiedAssertion {
        let rawID = try credentialID(id: response.id, rawId: response.rawId, type: response.type)
        let clientDataBytes = try decode(response.response.clientDataJSON, "clientDataJSON")
        let clientData = try checkClientData(clientDataBytes, type: "webauthn.get")
        let issued = try challenges.consume(clientData.challenge, for: .assertion, now: now)
        try checkOrigin(clientData)
        guard let stored = credentials.credential(id: rawID) else { throw .credentialUnknown }
        if let expected = issued.userHandle, !stored.userHandle.elementsEqual(expected) { throw .credentialNotForUser }
        if let handle = response.response.userHandle, !handle.isEmpty {
            guard try decode(handle, "userHandle") == Array(stored.userHandle) else { throw .credentialNotForUser }
        } else if issued.userHandle == nil {
            // Username-less: only the user handle says who signs in (§7.2 step 6).
            throw .credentialNotForUser
        }
        let authDataBytes = try decode(response.response.authenticatorData, "authenticatorData")
        let authData: AuthenticatorData
        do { authData = try AuthenticatorData(authDataBytes) } catch { throw .malformedResponse("the authenticator data: \(error)") }
        guard !authData.flags.contains(.attestedCredentialData) else {
            throw .malformedResponse("a sign-in's authenticator data carries attested credential data")
        }
        try checkFlags(authData)
        guard authData.flags.contains(.backupEligible) == stored.backupEligible else { throw .backupEligibilityChanged }
        // The passkey profile governs sign-in too: "registration and authentication with a passkey are allowed if the
        // passkey fully satisfies the requirements of at least one of the scoped passkey profiles" (attestation alone
        // is registration-only).
        if let restrictions = policy.keyRestrictions, !restrictions.permits(stored.aaguid) { throw .authenticatorNotAllowed }
        guard policy.passkeyTypes.contains(stored.backupEligible ? .synced : .deviceBound) else { throw .passkeyTypeNotAllowed }
        let key: COSEKey
        do { key = try COSEKey(cbor: Array(stored.publicKey)) } catch { throw .credentialUnknown }
        let signature = try decode(response.response.signature, "signature")
        let signed = authDataBytes + Array(SHA256.hash(data: clientDataBytes))
        guard key.isValidSignature(signature, for: signed) else { throw .signatureInvalid }
        // §7.2 step 22: a counter that does not grow, when either is non-zero, is a cloned authenticator.
        if authData.signCount != 0 || stored.signCount != 0, authData.signCount <= stored.signCount { throw .signCountRollback }
        credentials.recordUse(id: rawID, signCount: authData.signCount, backedUp: authData.flags.contains(.backedUp), now: now)
        guard let updated = credentials.credential(id: rawID) else { throw .credentialUnknown }
        return VerifiedAssertion(
            credential: updated, userHandle: Array(stored.userHandle), userVerified: authData.flags.contains(.userVerified))
    }

    // MARK: Shared checks

    private func decode(_ text: String, _ field: String) throws(WebAuthnRefusal) -> [UInt8] {
        guard let bytes = WebAuthnBase64URL.decode(text) else { throw .malformedResponse("\(field) is not base64url") }
        return bytes
    }

    private func credentialID(id: String, rawId: String, type: String) throws(WebAuthnRefusal) -> [UInt8] {
        guard type == "public-key" else { throw .malformedResponse("the credential type is not public-key") }
        let raw = try decode(rawId, "rawId")
        guard id == rawId, !raw.isEmpty, raw.count <= 1023 else { throw .malformedResponse("id and rawId differ") }
        return raw
    }

    private func checkClientData(_ bytes: [UInt8], type: String) throws(WebAuthnRefusal) -> CollectedClientData {
        let clientData: CollectedClientData
        do { clientData = try CollectedClientData(bytes) } catch { throw .malformedResponse(error.description) }
        guard clientData.type == type else { throw .wrongCeremony }
        return clientData
    }

    private func checkOrigin(_ clientData: CollectedClientData) throws(WebAuthnRefusal) {
        guard policy.allowedOrigins.contains(clientData.origin) else { throw .originNotAllowed }
        guard clientData.crossOrigin != true, clientData.topOrigin == nil else { throw .crossOriginRefused }
    }

    private func checkFlags(_ authData: AuthenticatorData) throws(WebAuthnRefusal) {
        guard authData.rpIDHash == rpIDHash else { throw .rpIDMismatch }
        guard authData.flags.contains(.userPresent) else { throw .userNotPresent }
        if policy.userVerification == .required, !authData.flags.contains(.userVerified) { throw .userNotVerified }
    }
}
