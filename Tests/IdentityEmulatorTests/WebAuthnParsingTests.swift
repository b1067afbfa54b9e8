import Crypto
import Foundation
import Testing

@testable import IdentityEmulator

/// What the relying party reads from the browser, byte by byte: each malformed, truncated,
/// overlong or hostile input is a typed refusal, never a trap or an unbounded allocation.
@Suite("WebAuthn parsing")
struct WebAuthnParsingTests {
    @Test("CBOR: the items WebAuthn uses decode; a map keeps its order")
    func decodes() throws {
        let value = try CBORDecoder.decode([0xa3, 0x01, 0x02, 0x03, 0x38, 0x18, 0x20, 0x43, 1, 2, 3])
        #expect(value[intKey: 1] == .unsigned(2))
        #expect(value[intKey: 3]?.int == -25)
        #expect(value[intKey: -1]?.bytes == [1, 2, 3])
        #expect(try CBORDecoder.decode([0x63, 0x66, 0x6d, 0x74]) == .text("fmt"))
        #expect(try CBORDecoder.decode([0x82, 0xf5, 0xf6]) == .array([.bool(true), .null]))
        #expect(try CBORDecoder.decode([0x1b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]) == .unsigned(.max))
        #expect(try CBORDecoder.decode([0x3b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]).int == nil, "-2^64 fits no Int")
    }

    @Test(
        "CBOR: truncated, overlong and non-canonical inputs are refused with their reason",
        arguments: [
            ([], CBORError.truncated),
            ([0x18], .truncated),  // a one-byte argument that is missing
            ([0x44, 1, 2], .truncated),  // four bytes announced, two given
            ([0x5b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], .truncated),  // 2^63 bytes announced
            ([0x5b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], .truncated),  // 2^64-1: no Int conversion trap
            ([0x9b, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00], .truncated),  // 2^32 elements in one byte
            ([0xbb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], .truncated),
            ([0x01, 0x02], .trailingBytes),
            ([0x5f, 0x41, 0x00, 0xff], .indefiniteLength),
            ([0x9f, 0xff], .indefiniteLength),
            ([0x1c], .reservedAdditionalInformation),
            ([0xc2, 0x41, 0x01], .tagRefused),
            ([0xf9, 0x3c, 0x00], .unsupportedSimpleValue),  // a half float
            ([0xf7], .unsupportedSimpleValue),  // undefined
            ([0x62, 0xc3, 0x28], .invalidUTF8),
            ([0xa2, 0x01, 0x01, 0x01, 0x02], .duplicateMapKey),
        ] as [([UInt8], CBORError)])
    func refuses(input: [UInt8], error: CBORError) {
        #expect(throws: error) { try CBORDecoder.decode(input) }
    }

    @Test("CBOR: a nesting bomb stops at the depth limit, a flood of items at the item limit, a huge input at the size limit")
    func bombs() throws {
        #expect(throws: CBORError.tooDeep) { try CBORDecoder.decode(Array(repeating: 0x81, count: 10_000) + [0x00]) }
        #expect(throws: CBORError.tooDeep) { try CBORDecoder.decode(Array(repeating: 0x81, count: 17) + [0x00]) }
        #expect(try CBORDecoder.decode(Array(repeating: 0x81, count: 16) + [0x00]) != .null)
        let flood: [UInt8] = [0x99, 0x27, 0x10] + Array(repeating: 0x80, count: 10_000)  // 10 000 empty arrays
        #expect(throws: CBORError.tooManyItems) { try CBORDecoder.decode(flood) }
        // Three arrays of 2 000, each under the limit, 6 004 items in all.
        let spread: [UInt8] = [0x83] + Array(repeating: [0x99, 0x07, 0xd0] + Array(repeating: 0x80, count: 2000), count: 3).flatMap { $0 }
        #expect(throws: CBORError.tooManyItems) { try CBORDecoder.decode(spread) }
        #expect(throws: CBORError.tooLarge) { try CBORDecoder.decode([0x5a, 0x00, 0x01, 0x00, 0x00] + Array(repeating: 0, count: 65536)) }
        let wideMap: [UInt8] = [0xb9, 0x01, 0x00] + (0..<256).flatMap { i -> [UInt8] in [0x19, UInt8(i >> 8), UInt8(i & 0xff), 0x00] }
        #expect(throws: CBORError.tooManyItems) { try CBORDecoder.decode(wideMap) }
    }

    @Test("COSE: EC2 P-256 ES256 and RSA RS256 only; a point off the curve, a short coordinate or a mixed key is refused")
    func coseKeys() throws {
        let p256 = SoftAuthenticator(.es256)
        #expect(try COSEKey(cbor: p256.coseKey).algorithm == .es256)
        #expect(try COSEKey(cbor: SoftAuthenticator(.rs256).coseKey).algorithm == .rs256)
        let x = [UInt8](repeating: 1, count: 32)
        func ec2(alg: Int = -7, crv: Int = 1, x: [UInt8] = x, y: [UInt8] = x) -> [UInt8] {
            TestCBOR.map([(.int(1), .int(2)), (.int(3), .int(alg)), (.int(-1), .int(crv)), (.int(-2), .bytes(x)), (.int(-3), .bytes(y))])
                .encoded
        }
        #expect(throws: COSEKeyError.invalidKey) { try COSEKey(cbor: ec2()) }  // (1…1, 1…1) is not on P-256
        #expect(throws: COSEKeyError.invalidKey) { try COSEKey(cbor: ec2(x: [1])) }
        #expect(throws: COSEKeyError.unsupportedCurve) { try COSEKey(cbor: ec2(crv: 2)) }
        #expect(throws: COSEKeyError.unsupportedAlgorithm) { try COSEKey(cbor: ec2(alg: -257)) }
        #expect(throws: COSEKeyError.unsupportedAlgorithm) { try COSEKey(cbor: ec2(alg: -8)) }  // EdDSA: not offered
        let okp = TestCBOR.map([(.int(1), .int(1)), (.int(3), .int(-7))]).encoded
        #expect(throws: COSEKeyError.unsupportedKeyType) { try COSEKey(cbor: okp) }
        let weakRSA = TestCBOR.map([
            (.int(1), .int(3)), (.int(3), .int(-257)), (.int(-1), .bytes([0xc5, 0x01])), (.int(-2), .bytes([1, 0, 1])),
        ])
        #expect(throws: COSEKeyError.invalidKey) { try COSEKey(cbor: weakRSA.encoded) }
        #expect(throws: COSEKeyError.notAMap) { try COSEKey(cbor: [0x80]) }
        #expect(throws: COSEKeyError.cbor(.truncated)) { try COSEKey(cbor: Array(p256.coseKey.dropLast())) }
    }

    @Test("authenticator data: flags, counter and attested credential data read; every cut is refused")
    func authenticatorData() throws {
        let key = SoftAuthenticator(.es256)
        let answer = SoftAuthenticator.Answer(challenge: [], type: "", origin: "", rpID: "example.com")
        let bytes = key.authenticatorData(answer, counter: 0x0102_0304, attested: true)
        let data = try AuthenticatorData(bytes)
        #expect(data.flags == [.userPresent, .userVerified, .attestedCredentialData])
        #expect(data.signCount == 0x0102_0304)
        #expect(data.rpIDHash == Array(SHA256.hash(data: Array("example.com".utf8))))
        #expect(data.attestedCredential?.credentialID == key.credentialID)
        #expect(data.attestedCredential?.aaguid == key.aaguid)
        #expect(data.attestedCredential?.publicKeyBytes == key.coseKey)
        for length in 0..<bytes.count {
            #expect(throws: AuthenticatorDataError.self) { try AuthenticatorData(Array(bytes.prefix(length))) }
        }
        #expect(throws: AuthenticatorDataError.trailingBytes) { try AuthenticatorData(bytes + [0]) }
        // ED: an extensions map after the key; not a map, refused.
        var withExtensions = bytes
        withExtensions[32] |= AuthenticatorFlags.extensionData.rawValue
        #expect(try AuthenticatorData(withExtensions + TestCBOR.map([(.text("credProtect"), .int(2))]).encoded).extensions != nil)
        #expect(throws: AuthenticatorDataError.extensionsNotAMap) { try AuthenticatorData(withExtensions + [0x01]) }
        // A credential id length over 1023, and BS without BE.
        var long = Array(bytes.prefix(37 + 16)) + [0x04, 0x00]
        long[32] = AuthenticatorFlags([.userPresent, .attestedCredentialData]).rawValue
        #expect(throws: AuthenticatorDataError.credentialIDTooLong) { try AuthenticatorData(long + Array(repeating: 0, count: 1024)) }
        var backedUp = Array(bytes.prefix(37))
        backedUp[32] = AuthenticatorFlags([.userPresent, .backedUp]).rawValue
        #expect(throws: AuthenticatorDataError.backupStateWithoutEligibility) { try AuthenticatorData(backedUp) }
    }

    @Test("client data: at most 4 KiB of JSON with a base64url challenge")
    func clientData() throws {
        let good = Array(#"{"type":"webauthn.get","challenge":"AAEC","origin":"https://a.example","crossOrigin":false}"#.utf8)
        let parsed = try CollectedClientData(good)
        #expect(parsed.challenge == [0, 1, 2] && parsed.origin == "https://a.example" && parsed.crossOrigin == false)
        #expect(throws: ClientDataError.malformed) { try CollectedClientData(Array(#"{"type":"webauthn.get"}"#.utf8)) }
        #expect(throws: ClientDataError.malformed) { try CollectedClientData(Array("[]".utf8)) }
        #expect(throws: ClientDataError.challengeNotBase64URL) {
            try CollectedClientData(Array(#"{"type":"webauthn.get","challenge":"AA+/==","origin":"o"}"#.utf8))
        }
        let padded = #"{"type":"webauthn.get","challenge":"AAEC","origin":""# + String(repeating: "a", count: 4096) + #""}"#
        #expect(throws: ClientDataError.tooLarge) { try CollectedClientData(Array(padded.utf8)) }
    }

    @Test("the browser's answers: bounded JSON of the WebAuthn Level 3 shapes")
    func responses() throws {
        let json =
            #"{"id":"AQ","rawId":"AQ","type":"public-key","response":{"clientDataJSON":"e30","attestationObject":"oA","transports":["usb"]},"clientExtensionResults":{}}"#
        #expect(try RegistrationResponseJSON.parse(Data(json.utf8)).response.transports == ["usb"])
        #expect(throws: WebAuthnRefusal.self) { try RegistrationResponseJSON.parse(Data("{}".utf8)) }
        #expect(throws: WebAuthnRefusal.self) { try AuthenticationResponseJSON.parse(Data(repeating: 0x20, count: 40 * 1024)) }
        let attestation = Array(#"{"fmt":"none"}"#.utf8)
        #expect(throws: WebAuthnRefusal.self) { try AttestationObject(attestation) }
        #expect(throws: WebAuthnRefusal.self) { try AttestationObject(TestCBOR.map([(.text("fmt"), .text("none"))]).encoded) }
    }
}
