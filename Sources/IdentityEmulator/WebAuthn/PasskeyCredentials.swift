import FoundationEssentials

/// One registered passkey or security key, as the relying party keeps it (WebAuthn Level 3
/// §4 "credential record", with Entra's display name and the Graph `fido2AuthenticationMethod`
/// facts: `aaGuid`, `createdDateTime`, `passkeyType`).
struct PasskeyCredential: Codable, Sendable, Equatable {
    /// The credential id the authenticator chose (bytes; base64url on the wire).
    let credentialID: Data
    /// The user handle the credential was created for (`user.id` of the creation options).
    let userHandle: Data
    /// The COSE_Key as the authenticator encoded it.
    let publicKey: Data
    let algorithm: COSEAlgorithm
    var signCount: UInt32
    let aaguid: UUID
    var displayName: String
    let createdAt: Date
    var lastUsedAt: Date?
    /// BE at registration: a synced passkey when true, device-bound when false.
    let backupEligible: Bool
    /// BS as last seen.
    var backedUp: Bool
    /// `response.transports` at registration (`usb`, `nfc`, `ble`, `internal`, `hybrid`).
    let transports: [String]
    /// The attestation format and what it proved.
    let attestationFormat: String
    let attestation: AttestationObject.Verified.Kind

    var id: String { WebAuthnBase64URL.encode(credentialID) }
}

/// Every user's registered credentials, looked up by credential id (a username-less sign-in
/// names the credential, and the credential names the user). Codable: the state directory keeps it.
struct PasskeyCredentials: Codable, Sendable, Equatable {
    static let maximumPerUser = 20

    private(set) var all: [PasskeyCredential] = []

    /// The state file keeps them under `passkeys`, beside the other domains' keys.
    enum CodingKeys: String, CodingKey { case all = "passkeys" }

    init() {}

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        all = try container.decodeIfPresent([PasskeyCredential].self, forKey: .all) ?? []
    }

    func credential(id: [UInt8]) -> PasskeyCredential? {
        all.first { $0.credentialID.elementsEqual(id) }
    }

    func credentials(forUser userHandle: [UInt8]) -> [PasskeyCredential] {
        all.filter { $0.userHandle.elementsEqual(userHandle) }
    }

    /// Keeps a verified registration; a credential id already registered (to anyone) is refused.
    @discardableResult
    mutating func register(
        _ registration: VerifiedRegistration, displayName: String, now: Date
    ) throws(WebAuthnRefusal)
        -> PasskeyCredential
    {
        guard credential(id: registration.credentialID) == nil else { throw .credentialAlreadyRegistered }
        guard credentials(forUser: registration.userHandle).count < Self.maximumPerUser else { throw .tooManyCredentials }
        let record = PasskeyCredential(
            credentialID: Data(registration.credentialID), userHandle: Data(registration.userHandle),
            publicKey: Data(registration.publicKey), algorithm: registration.algorithm, signCount: registration.signCount,
            aaguid: registration.aaguid, displayName: String(displayName.prefix(256)), createdAt: now, lastUsedAt: nil,
            backupEligible: registration.backupEligible, backedUp: registration.backedUp, transports: registration.transports,
            attestationFormat: registration.attestationFormat, attestation: registration.attestation)
        all.append(record)
        return record
    }

    /// Verifies a registration with `relyingParty` (consuming its challenge) and keeps it.
    mutating func register(
        _ response: RegistrationResponseJSON, relyingParty: WebAuthnRelyingParty, challenges: inout PasskeyChallenges, displayName: String,
        now: Date
    ) throws(WebAuthnRefusal) -> PasskeyCredential {
        let verified = try relyingParty.verifyRegistration(response, challenges: &challenges, credentials: self, now: now)
        return try register(verified, displayName: displayName, now: now)
    }

    /// The user handle of `userID`'s passkeys: the user's object id, as bytes.
    static func userHandle(userID: String) -> [UInt8] { Array(userID.utf8) }

    /// Removes a credential (the user removed it on the Security info page).
    @discardableResult
    mutating func remove(id: [UInt8]) -> Bool {
        let before = all.count
        all.removeAll { $0.credentialID.elementsEqual(id) }
        return all.count != before
    }

    /// Records a verified sign-in: the new counter and backup state.
    mutating func recordUse(id: [UInt8], signCount: UInt32, backedUp: Bool, now: Date) {
        guard let index = all.firstIndex(where: { $0.credentialID.elementsEqual(id) }) else { return }
        all[index].signCount = signCount
        all[index].backedUp = backedUp
        all[index].lastUsedAt = now
    }
}
