import Foundation
import SesameTestSupport
import Testing

@testable import IdentityEmulator

/// The emulator's relying party proven against clients nobody here wrote: soft-webauthn (PyPI)
/// registers a passkey in Security info and signs in with it through the pages over HTTPS, and
/// Duo's `webauthn` (PyPI) verifies the same registration and assertion; a replayed, forged,
/// wrong-origin, wrong-rpId or rolled-back answer is refused at the page.
@Suite("Passkeys with soft-webauthn and Duo's webauthn")
struct WebAuthnInteropTests {
    /// `make test`'s venv with `soft-webauthn==0.1.4 fido2==1.1.3 webauthn==2.7.1`
    /// (`.build/webauthn-venv`); `SESAME_TEST_WEBAUTHN_PYTHON` overrides it.
    static func python() throws -> URL {
        let configured = ProcessInfo.processInfo.environment["SESAME_TEST_WEBAUTHN_PYTHON"].map { URL(filePath: $0) }
        let venv = Repository.root.appending(path: ".build/webauthn-venv/bin/python")
        guard let found = [configured, venv].compactMap({ $0 }).first(where: { FileManager.default.isExecutableFile(atPath: $0.path) })
        else {
            throw TestSupportError(
                "No WebAuthn Python: run `make test` (it creates .build/webauthn-venv with soft-webauthn, fido2 and webauthn) "
                    + "or set SESAME_TEST_WEBAUTHN_PYTHON.")
        }
        return found
    }

    static let script = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "WebAuthnInterop/webauthn_interop.py")

    @Test("megan registers a passkey and signs in with it over HTTPS; Duo agrees; every attack is refused at the page")
    func interop() async throws {
        let python = try Self.python()
        let directory = FileManager.default.temporaryDirectory.appending(path: "webauthn-interop-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let emulator = try await RunningEmulator(users: 60, demo: true) {
            $0.tls = true
            $0.hostname = "localhost"
            $0.stateDirectory = directory
        }
        defer { emulator.stop() }
        #expect(emulator.base.scheme == "https" && emulator.base.host == "localhost")

        let process = Process()
        process.executableURL = python
        process.arguments = [
            Self.script.path, emulator.base.absoluteString, directory.appending(path: "ca-certificate.pem").path,
            "megan@contoso.onmicrosoft.com", "Passw0rd!", HeadlessBrowser.authorizeURI(), ProofKey.verifier,
        ]
        // Its output goes to files and its end is awaited, not read on a blocked thread: the
        // emulator answering it serves on the same two-thread cooperative pool.
        let outputFile = directory.appending(path: "stdout.json")
        let errorFile = directory.appending(path: "stderr.txt")
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: outputFile)
        process.standardError = try FileHandle(forWritingTo: errorFile)
        let (ended, end) = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in end.finish() }
        try process.run()
        for await _ in ended {}
        let stdout = try Data(contentsOf: outputFile)
        let stderr = try Data(contentsOf: errorFile)
        #expect(process.terminationStatus == 0, "\(String(decoding: stderr, as: UTF8.self).suffix(2000))")
        let seen = try #require(
            try JSONSerialization.jsonObject(with: stdout) as? [String: Any], "\(String(decoding: stdout, as: UTF8.self))")

        // Registration: Entra's options shape, the emulator's host as rpId; Duo verifies the same answer.
        #expect(seen["securityInfo"] as? Bool == true)
        let creation = try #require(seen["creationOptions"] as? [String: Any])
        #expect(creation["status"] as? Int == 200)
        #expect((creation["rp"] as? [String: String]) == ["id": "localhost", "name": "Microsoft"])
        #expect(creation["algorithms"] as? [Int] == [-7, -257])
        #expect(creation["userVerification"] as? String == "required" && creation["attestation"] as? String == "direct")
        let registration = try #require(seen["registration"] as? [String: Any])
        #expect(registration["status"] as? Int == 200, "\(registration)")
        #expect((registration["answer"] as? [String: String])?["displayName"] == "soft-webauthn")
        #expect((seen["duoRegistration"] as? [String: Any])?["sameKey"] as? Bool == true)

        // Sign-in without a user name: the passkey names megan; Duo verifies the same assertion; amr fido.
        let request = try #require(seen["requestOptions"] as? [String: Any])
        #expect(request["rpId"] as? String == "localhost" && (request["allowCredentials"] as? [Any])?.isEmpty == true)
        #expect((seen["signIn"] as? [String: Bool]) == ["staySignedIn": true, "user": true])
        #expect((seen["duoAssertion"] as? [String: Int])?["newSignCount"] == 1)
        #expect(seen["code"] as? Bool == true)
        #expect((seen["amr"] as? [String])?.contains("fido") == true, "\(seen["amr"] ?? "none")")

        // Every attack refused at the page, with the relying party's sentence, the sign-in not advanced.
        let attacks = try #require(seen["attacks"] as? [String: [String: Any]])
        let expected: [String: WebAuthnRefusal] = [
            "replay": .challengeUnknown, "forged": .signatureInvalid, "wrongOrigin": .originNotAllowed, "wrongRpId": .rpIDMismatch,
            "counterRollback": .signCountRollback,
        ]
        for (name, refusal) in expected {
            #expect(attacks[name]?["advanced"] as? Bool == false, "\(name) advanced the sign-in")
            #expect(attacks[name]?["error"] as? String == refusal.sentence, "\(name): \(attacks[name] ?? [:])")
        }
    }
}
