import Crypto
import Foundation
import SesameCore
import SesameTPM
import SesameTestSupport
import Testing
import X509
import _CryptoExtras

/// The device's keys in a TPM (Debian's swtpm, a TPM 2.0 of libtpms): what they sign and decrypt
/// is checked with swift-crypto's own RSA, not by the TPM code that made it; what is kept of them
/// is useless without that TPM; and a whole registration's PRT works through them, across a
/// reboot of the TPM, and fails in words when the TPM is gone.
@Suite("This computer's keys in its TPM (swtpm)")
struct TPMDeviceKeysTests {
    static let azureCLI = "04b07795-8ddb-461a-bbee-02f9e1bf7b46"

    static func publicKey(of keys: any DeviceKeys) throws -> _RSA.Signing.PublicKey {
        let request = try CertificateSigningRequest(derEncoded: Array(try keys.certificateRequest(commonName: "sesame-test")))
        return try #require(_RSA.Signing.PublicKey(request.publicKey))
    }

    @Test(
        "the TPM's keys sign what RSA verifies, decrypt what RSA-OAEP encrypted, and seal the session key; another TPM can use none of them"
    )
    func keysWorkInTheirTPMOnly() async throws {
        let tpm = try SoftwareTPM()
        let store = TPMDeviceKeyStore(tcti: tpm.tcti)
        let keys = try await store.makeKeys()
        #expect(keys.storeName == "tpm")

        // The certificate request is signed by the key it names.
        let request = try CertificateSigningRequest(derEncoded: Array(try keys.certificateRequest(commonName: "sesame-test")))
        #expect(request.publicKey.isValidSignature(request.signature, for: request))
        #expect(request.subject.description == "CN=sesame-test")
        let signed = Data("header.claims".utf8)
        let signature = try keys.sign(signed)
        #expect(
            try Self.publicKey(of: keys).isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: signed), padding: .insecurePKCS1v1_5))

        // The transport key, as the service sees it (the BCRYPT blob), decrypts what is encrypted to it.
        let blob = keys.transportKeyBlob
        #expect(blob.prefix(4) == Data("RSA1".utf8))
        let exponent = blob.dropFirst(24).prefix(3)
        let modulus = blob.dropFirst(27).prefix(256)
        let transport = try _RSA.Encryption.PublicKey(n: modulus, e: exponent)
        let sessionKey = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
        #expect(try keys.decrypt(try transport.encrypt(sessionKey, padding: .PKCS1_OAEP)) == sessionKey)

        let sealed = try #require(try keys.seal(sessionKey: sessionKey))
        #expect(sealed.range(of: sessionKey) == nil, "the sealed session key holds it encrypted")
        #expect(try keys.unseal(sessionKey: sealed) == sessionKey)

        // What is kept names no private key, and reads back into keys that still work.
        #expect(!keys.sealed.revealed.contains("PRIVATE KEY"))
        let restored = try store.keys(sealed: keys.sealed)
        #expect(try restored.unseal(sessionKey: sealed) == sessionKey)

        // Another computer's TPM (its own seed) cannot load them: what is kept is worth nothing there.
        let other = try SoftwareTPM()
        #expect(keys.sealed.revealed.contains(tpm.tcti))
        let moved = Secret(keys.sealed.revealed.replacingOccurrences(of: tpm.tcti, with: other.tcti))
        let elsewhere = try TPMDeviceKeyStore(tcti: other.tcti).keys(sealed: moved)
        let refused = #expect(throws: DeviceIdentityError.self) { try elsewhere.unseal(sessionKey: sealed) }
        #expect(refused?.code == .keysUnreadable)
        #expect(refused?.message.contains("which could not be used: loading the key into the TPM") == true, "\(refused?.message ?? "")")
        #expect(throws: DeviceIdentityError.self) { try elsewhere.sign(signed) }
    }

    @Test("a TPM that is not there: making keys says which TPM, the TPM's own words, and how to do without it")
    func noTPM() async throws {
        let missing = Repository.temporaryDirectory("no-tpm").appending(path: "sock").path
        let failed = await #expect(throws: DeviceIdentityError.self) {
            try await TPMDeviceKeyStore(tcti: "swtpm:path=\(missing)").makeKeys()
        }
        #expect(failed?.code == .keysUnreadable)
        #expect(
            failed?.message.hasPrefix("The TPM (swtpm:path=\(missing)) could not make this computer's keys: opening the TPM: ") == true,
            "\(failed?.message ?? "")")
        #expect(failed?.message.hasSuffix("Set SESAME_TPM=none to use software keys kept in the keyring instead.") == true)
        // Kept keys that are not a TPM's blobs are refused as such, never half read.
        let store = TPMDeviceKeyStore(tcti: "device:/dev/tpmrm0")
        #expect(throws: DeviceIdentityError.self) { try store.keys(sealed: Secret("{}")) }
        let garbage = #"{"tcti":"device:/dev/tpmrm0","deviceKey":"AAAA","transportKey":"AAAA"}"#
        #expect(throws: DeviceIdentityError.self) { try store.keys(sealed: Secret(garbage)) }
    }

    @Test(
        "registered with TPM keys, the PRT serves any app after a restart and a reboot; with the TPM gone it says so, and removing still forgets"
    )
    func registrationThroughTheTPM() async throws {
        let emulator = try await RunningEmulator(users: 20)
        let tpm = try SoftwareTPM()
        let storage = MemoryDeviceIdentityStorage()
        let stores: [any DeviceKeyStore] = [TPMDeviceKeyStore(tcti: tpm.tcti), SoftwareDeviceKeyStore()]
        let identity = DeviceIdentity(storage: storage, keyStores: stores, transport: AsyncHTTPClientTransport())
        let registration = try await identity.register(
            authority: emulator.base.appending(path: "organizations"), tenant: "contoso.onmicrosoft.com", displayName: "alex's laptop",
            osVersion: "Debian 13", using: HeadlessUserAgent.entra(DeviceIdentityTests.user, emulator: emulator))
        #expect(emulator.codes.all.contains("prt-issued \(registration.deviceID)"))
        let status = try #require(try await identity.status())
        #expect(status.keyStore == "tpm")
        #expect(status.keysKept.hasPrefix("in the TPM (\(tpm.tcti)), which also seals the PRT's session key"))

        // What is kept holds neither a private key nor the session key as such.
        let kept = try #require(try storage.load()).revealed
        let form = try #require(try JSONSerialization.jsonObject(with: Data(kept.utf8)) as? [String: Any])
        #expect(form["keyStore"] as? String == "tpm")
        #expect(form["sessionKey"] == nil)
        #expect(form["sealedSessionKey"] is String)
        #expect(!kept.contains("PRIVATE KEY"))

        // A restart (another process, the same storage) and a reboot (the TPM restarted on its state).
        tpm.stop()
        try tpm.start()
        let again = DeviceIdentity(storage: storage, keyStores: stores, transport: AsyncHTTPClientTransport())
        let tokens = try await again.tokens(clientID: Self.azureCLI, scope: "https://graph.microsoft.com/.default")
        #expect(try DeviceIdentityTests.claims(tokens.accessToken)["deviceid"] as? String == registration.deviceID)

        // The TPM gone (removed, or another computer's disk): the PRT cannot be used, in words.
        tpm.stop()
        let later = DeviceIdentity(storage: storage, keyStores: stores, transport: AsyncHTTPClientTransport())
        let failed = await #expect(throws: DeviceIdentityError.self) {
            try await later.tokens(clientID: Self.azureCLI, scope: "https://graph.microsoft.com/.default")
        }
        #expect(failed?.code == .keysUnreadable)
        #expect(
            failed?.message.hasPrefix("This computer's keys are in its TPM (\(tpm.tcti)), which could not be used: opening the TPM")
                == true, "\(failed?.message ?? "")")
        #expect(try storage.load() != nil, "a TPM that cannot be opened now is not a reason to forget the registration")
        let removed = await #expect(throws: DeviceIdentityError.self) { try await later.remove() }
        #expect(removed?.message.contains("Sesame has forgotten the registration here; remove the device in your organization too") == true)
        #expect(try storage.load() == nil)
    }
}

/// What an earlier Sesame kept stays usable: its registrations named no key store (software keys,
/// the session key as it is), and they are read as such, with no new sign-in.
@Suite("A registration kept by an earlier Sesame")
struct KeptRegistrationUpgradeTests {
    @Test("kept without a key store, it is read as software keys and its PRT still serves any app")
    func earlierForm() async throws {
        let emulator = try await RunningEmulator(users: 20)
        let storage = MemoryDeviceIdentityStorage()
        let identity = DeviceIdentity(storage: storage, transport: AsyncHTTPClientTransport())
        let registration = try await identity.register(
            authority: emulator.base.appending(path: "organizations"), tenant: "contoso.onmicrosoft.com", displayName: "laptop",
            osVersion: "Debian 13", using: HeadlessUserAgent.entra(DeviceIdentityTests.user, emulator: emulator))
        // The form as the earlier version wrote it: no `keyStore`, no `sealedSessionKey`.
        let kept = try #require(try storage.load())
        var form = try #require(try JSONSerialization.jsonObject(with: Data(kept.revealed.utf8)) as? [String: Any])
        #expect(form["keyStore"] as? String == "software")
        #expect(form["sealedSessionKey"] == nil && form["sessionKey"] is String)
        form["keyStore"] = nil
        try storage.save(Secret(String(decoding: try JSONSerialization.data(withJSONObject: form), as: UTF8.self)))

        let upgraded = DeviceIdentity(storage: storage, transport: AsyncHTTPClientTransport())
        let status = try #require(try await upgraded.status())
        #expect(status.deviceID == registration.deviceID)
        #expect(status.keyStore == "software")
        let tokens = try await upgraded.tokens(clientID: TPMDeviceKeysTests.azureCLI, scope: "https://graph.microsoft.com/.default")
        #expect(try DeviceIdentityTests.claims(tokens.accessToken)["deviceid"] as? String == registration.deviceID)
    }
}
