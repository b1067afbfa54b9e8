import Foundation
import SesameTestSupport
import Testing

@testable import IdentityEmulator

/// An authenticator app's six-digit codes (RFC 6238) as the emulator makes and checks them, and the
/// QR code the registration page shows: what a user's phone app computes must be what the
/// emulator accepts, once, and the picture must scan back to the exact `otpauth://` URI.
@Suite("Authenticator app codes and their QR code")
struct AuthenticatorCodeTests {
    /// RFC 6238 Appendix B's SHA-1 seed: the ASCII of "12345678901234567890".
    static let rfcSecret = Array("12345678901234567890".utf8)

    @Test(
        "RFC 6238 Appendix B: the SHA-1 codes (8 digits) at each of its times",
        arguments: [
            (59, "94287082"), (1_111_111_109, "07081804"), (1_111_111_111, "14050471"), (1_234_567_890, "89005924"),
            (2_000_000_000, "69279037"), (20_000_000_000, "65353130"),
        ] as [(Int64, String)])
    func rfcVectors(time: Int64, expected: String) throws {
        let secret = try TOTPSecret(bytes: Self.rfcSecret)
        let step = TOTP.step(at: Date(timeIntervalSince1970: TimeInterval(time)))
        #expect(TOTP.code(secret: secret, step: step, digits: 8) == expected)
    }

    @Test("the six-digit codes are oathtool's (a program nobody here wrote) at several times")
    func agreesWithOathtool() throws {
        let oathtool = try Self.tool("oathtool", package: "oathtool")
        let secrets = [try TOTPSecret(bytes: Self.rfcSecret), TOTPSecret.random(), TOTPSecret.random()]
        let times: [Int64] = [0, 59, 1_111_111_109, 1_234_567_890, 1_764_651_600, 1_764_651_629, 1_764_651_630, 2_000_000_000]
        for secret in secrets {
            for time in times {
                let run = try ProcessRunner.run(oathtool, ["--totp", "-b", secret.base32, "-N", "@\(time)"])
                #expect(run.status == 0, "oathtool failed: \(run.stderr)")
                let expected = run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(TOTP.code(secret: secret, at: Date(timeIntervalSince1970: TimeInterval(time))) == expected, "at \(time)")
            }
        }
    }

    @Test("a registration's secret is 20 random bytes, shown as 32 base32 characters, and never printed")
    func secretShape() throws {
        let secret = TOTPSecret.random()
        #expect(secret.bytes.count == 20)
        #expect(secret.base32.count == 32)
        #expect(secret.base32.allSatisfy { "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".contains($0) })
        #expect(TOTPSecret.random() != secret)
        #expect(TOTPSecret.random(byteCount: 10).base32.count == 16)
        for printed in ["\(secret)", String(reflecting: secret), "\([secret])"] {
            #expect(!printed.contains(secret.base32), "a secret appeared in \(printed.count) printed characters")
        }
        #expect(try TOTPSecret(base32: secret.base32) == secret)
    }

    @Test("base32 is RFC 4648's: its vectors, no padding out, any case, spaces and padding in")
    func base32() throws {
        let vectors = ["": "", "f": "MY", "fo": "MZXQ", "foo": "MZXW6", "foob": "MZXW6YQ", "fooba": "MZXW6YTB", "foobar": "MZXW6YTBOI"]
        for (plain, encoded) in vectors {
            #expect(Base32.encode(Array(plain.utf8)) == encoded)
            #expect(try Base32.decode(encoded) == Array(plain.utf8))
        }
        #expect(try Base32.decode("mzxw 6ytb oi======") == Array("foobar".utf8))
        #expect(try Base32.decode("MzXw6") == Array("foo".utf8))
        for bad in ["MZXW1", "MZXW6!", "M", "MZX", "MZXW6Y", "MY==MZXQ", "MY=", "ＭＹ"] {
            #expect(throws: TOTPError.notBase32, "\(bad)") { try Base32.decode(bad) }
        }
        #expect(throws: TOTPError.secretLength) { try TOTPSecret(base32: String(repeating: "A", count: 200)) }
        #expect(throws: TOTPError.secretLength) { try TOTPSecret(base32: "") }
    }

    @Test("the otpauth URI is the Key Uri Format: issuer and account in the label, secret and issuer as parameters")
    func keyURI() throws {
        let secret = try TOTPSecret(base32: "JBSWY3DPEHPK3PXP")
        #expect(
            TOTP.keyURI(secret: secret, issuer: "Contoso", account: "megan@contoso.onmicrosoft.com")
                == "otpauth://totp/Contoso:megan@contoso.onmicrosoft.com?secret=JBSWY3DPEHPK3PXP&issuer=Contoso")
        #expect(
            TOTP.keyURI(secret: secret, issuer: "Contoso Ltd: R&D", account: "ü@x.com")
                == "otpauth://totp/Contoso%20Ltd%3A%20R%26D:%C3%BC@x.com?secret=JBSWY3DPEHPK3PXP&issuer=Contoso%20Ltd%3A%20R%26D")
    }

    @Test("a code typed now is accepted once; the same code again is refused, and so is an older one")
    func replayRefused() throws {
        let now = Date(timeIntervalSince1970: 1_764_651_615)
        var app = AuthenticatorAppCode(secret: TOTPSecret.random())
        let code = TOTP.code(secret: app.secret, at: now)
        #expect(app.verify(code, now: now) == .accepted(step: TOTP.step(at: now)))
        #expect(app.verify(code, now: now) == .replayed)
        #expect(app.verify(code, now: now.addingTimeInterval(10)) == .replayed)
        let earlier = TOTP.code(secret: app.secret, at: now.addingTimeInterval(-30))
        #expect(app.verify(earlier, now: now) == .replayed)
        let next = now.addingTimeInterval(30)
        #expect(app.verify(TOTP.code(secret: app.secret, at: next), now: next) == .accepted(step: TOTP.step(at: next)))
    }

    @Test("a phone's clock one step (30 s) off either way is accepted; two steps off is refused")
    func driftWindow() throws {
        let secret = TOTPSecret.random()
        let now = Date(timeIntervalSince1970: 1_764_651_615)
        let current = TOTP.step(at: now)
        for offset: Int64 in [-1, 0, 1] {
            var app = AuthenticatorAppCode(secret: secret)
            let code = TOTP.code(secret: secret, step: current + offset, digits: 6)
            #expect(app.verify(code, now: now) == .accepted(step: current + offset), "\(offset) steps off")
        }
        for offset: Int64 in [-2, 2] {
            var app = AuthenticatorAppCode(secret: secret)
            let code = TOTP.code(secret: secret, step: current + offset, digits: 6)
            // One in a million: the far code is also the code of a step inside the window.
            let inWindow = (-1...1).map { TOTP.code(secret: secret, step: current + Int64($0), digits: 6) }
            if !inWindow.contains(code) { #expect(app.verify(code, now: now) == .wrong, "\(offset) steps off") }
        }
    }

    @Test("what is not six digits is refused as malformed; spaces a person types are ignored")
    func malformed() throws {
        let now = Date(timeIntervalSince1970: 1_764_651_615)
        var app = AuthenticatorAppCode(secret: TOTPSecret.random())
        for typed in ["", "12345", "1234567", "12a456", "１２３４５６", "-12345"] {
            #expect(app.verify(typed, now: now) == .malformed, "\(typed)")
        }
        let code = TOTP.code(secret: app.secret, at: now)
        let spaced = String(code.prefix(3)) + " " + String(code.suffix(3))
        #expect(app.verify(spaced, now: now) == .accepted(step: TOTP.step(at: now)))
    }

    // MARK: The QR code

    /// A 160-byte otpauth URI: what a tenant with a longish name and UPN shows.
    static let longURI: String = {
        let uri = TOTP.keyURI(
            secret: try! TOTPSecret(base32: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"), issuer: "Contoso Pharmaceuticals",
            account: "megan.bowen@contosopharma.onmicrosoft.com")
        return uri + "&x=" + String(repeating: "a", count: 160 - uri.utf8.count - 3)
    }()

    @Test(
        "the QR code scans (zbarimg) back to the exact text, at each size and level",
        arguments: [
            ("otpauth://totp/Contoso:megan@contoso.com?secret=JBSWY3DPEHPK3PXP&issuer=Contoso", QRCode.ErrorCorrection.medium, 1),
            (Self.longURI, .medium, 1), (Self.longURI, .low, 1), ("Sesame", .medium, 1), ("Sesame", .low, 7), (Self.longURI, .medium, 10),
            (Self.longURI, .medium, 15), (String(repeating: "0123456789abcdef", count: 60), .medium, 1),
            (String(repeating: "x", count: QRCode.capacity(.medium)), .medium, 1),
        ] as [(String, QRCode.ErrorCorrection, Int)])
    func scansBack(text: String, level: QRCode.ErrorCorrection, minimumVersion: Int) throws {
        let code = try QRCode(text: text, errorCorrection: level, minimumVersion: minimumVersion)
        #expect(code.version >= minimumVersion)
        #expect(try Self.scan(code.svg(label: "QR code")) == text, "version \(code.version), \(text.utf8.count) bytes")
    }

    @Test(
        "module for module, the code is what python-qrcode (Debian's, written by others) draws with the same version and mask",
        arguments: [
            ("otpauth://totp/Contoso:megan@contoso.com?secret=JBSWY3DPEHPK3PXP&issuer=Contoso", QRCode.ErrorCorrection.medium, 1),
            (Self.longURI, .medium, 1), (Self.longURI, .low, 1), ("Sesame", .medium, 7), (Self.longURI, .medium, 20),
            (String(repeating: "0123456789abcdef", count: 60), .low, 1),
            (String(repeating: "x", count: QRCode.capacity(.medium)), .medium, 1),
        ] as [(String, QRCode.ErrorCorrection, Int)])
    func agreesWithPythonQRCode(text: String, level: QRCode.ErrorCorrection, minimumVersion: Int) throws {
        let python = try Self.tool("python3", package: "python3")
        let probe = try ProcessRunner.run(python, ["-c", "import qrcode"])
        guard probe.status == 0 else { throw TestSupportError("python-qrcode is missing: install the Debian package python3-qrcode") }
        let code = try QRCode(text: text, errorCorrection: level, minimumVersion: minimumVersion)
        let script = """
            import sys, qrcode, qrcode.util, qrcode.constants as c
            level = c.ERROR_CORRECT_M if sys.argv[3] == "M" else c.ERROR_CORRECT_L
            q = qrcode.QRCode(version=int(sys.argv[1]), error_correction=level, border=0, mask_pattern=int(sys.argv[2]))
            q.add_data(qrcode.util.QRData(sys.argv[4].encode(), mode=qrcode.util.MODE_8BIT_BYTE))
            q.make(fit=False)
            print("".join("1" if m else "0" for row in q.get_matrix() for m in row))
            """
        let run = try ProcessRunner.run(python, ["-c", script, "\(code.version)", "\(code.mask)", level == .medium ? "M" : "L", text])
        #expect(run.status == 0, "python-qrcode failed: \(run.stderr)")
        let mine = (0..<code.size).flatMap { y in (0..<code.size).map { x in code.isDark(x: x, y: y) ? "1" : "0" } }.joined()
        #expect(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == mine, "version \(code.version), mask \(code.mask)")
    }

    @Test("the smallest version is chosen: a 160-byte URI is version 9 at M and 8 at L")
    func versionChoice() throws {
        #expect(Self.longURI.utf8.count == 160)
        #expect(try QRCode(text: Self.longURI).version == 9)
        #expect(try QRCode(text: Self.longURI, errorCorrection: .low).version == 8)
        #expect(try QRCode(text: String(repeating: "x", count: 14)).version == 1)
        #expect(try QRCode(text: String(repeating: "x", count: 15)).version == 2)
    }

    @Test("text longer than a QR code holds is refused with the counts, not the text")
    func overLongRefused() throws {
        #expect(QRCode.capacity(.medium) == 2331)
        #expect(QRCode.capacity(.low) == 2953)
        let text = String(repeating: "s", count: 2332)
        #expect(throws: QRCodeError.tooLong(byteCount: 2332, capacity: 2331)) { try QRCode(text: text) }
        do {
            _ = try QRCode(text: text)
        } catch {
            #expect(!error.description.contains("sss"))
        }
        #expect(throws: QRCodeError.noSuchVersion) { try QRCode(text: "x", minimumVersion: 41) }
    }

    @Test("the SVG is one path of dark modules with a quiet zone of four, an image with the label a screen reader reads")
    func svgShape() throws {
        let code = try QRCode(text: "otpauth://totp/Contoso:megan@contoso.com?secret=JBSWY3DPEHPK3PXP&issuer=Contoso")
        let svg = code.svg(label: "Scan with \"Authenticator\" <app> & more", scale: 5)
        #expect(svg.hasPrefix("<svg "))
        #expect(svg.contains(#"role="img""#))
        #expect(svg.contains(#"aria-label="Scan with &quot;Authenticator&quot; &lt;app&gt; &amp; more""#))
        #expect(svg.components(separatedBy: "<path").count == 2)
        let side = code.size + 8
        #expect(svg.contains(#"viewBox="0 0 \#(side) \#(side)""#))
        #expect(svg.contains(#"width="\#(side * 5)""#))
        // The top-left finder starts at the quiet zone's edge.
        #expect(svg.contains(#"d="M4 4h7v1h-7z"#))
    }

    // MARK: Helpers

    /// The program at /usr/bin/`name`, or an error naming the Debian package to install.
    static func tool(_ name: String, package: String) throws -> URL {
        let path = "/usr/bin/\(name)"
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw TestSupportError("\(name) is missing: install the Debian package \(package) (`make deps` does)")
        }
        return URL(filePath: path)
    }

    /// The SVG rendered to a PNG by librsvg's rsvg-convert, then read by zbar's zbarimg.
    static func scan(_ svg: String) throws -> String {
        let rsvg = try tool("rsvg-convert", package: "librsvg2-bin")
        let zbarimg = try tool("zbarimg", package: "zbar-tools")
        let folder = FileManager.default.temporaryDirectory.appending(path: "qr-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let svgFile = folder.appending(path: "code.svg")
        let pngFile = folder.appending(path: "code.png")
        try Data(svg.utf8).write(to: svgFile)
        let render = try ProcessRunner.run(rsvg, ["--background-color=white", "-o", pngFile.path, svgFile.path])
        guard render.status == 0 else { throw TestSupportError("rsvg-convert failed: \(render.stderr)") }
        let read = try ProcessRunner.run(zbarimg, ["--raw", "-q", "-Sdisable", "-Sqrcode.enable", pngFile.path])
        guard read.status == 0 else { throw TestSupportError("zbarimg found no QR code (status \(read.status)): \(read.stderr)") }
        var text = read.stdout
        if text.hasSuffix("\n") { text.removeLast() }
        return text
    }
}
