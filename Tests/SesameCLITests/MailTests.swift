import Foundation
import SesameTestSupport
import XCTest

/// Mail with Sesame's sign-in, as people set it up: Debian's own mail programs, unchanged —
/// `mbsync` (isync with Debian's XOAUTH2 SASL plug-in), `msmtp`, `curl` — asking `sesame token`
/// for a token (`PassCmd`, `passwordeval`), against Debian's Dovecot validating the identity
/// emulator's Exchange Online tokens. Nothing here is Sesame's but `sesame`.
final class MailTests: XCTestCase {
    static let alex = "alex@contoso.onmicrosoft.com"
    static let contoso = "9f2b1c3e-5a7d-4e2b-8c41-0d6a3f5b7e21"
    /// Exchange tokens live this long here, so that a test can wait for one to expire.
    static let tokenLifetime = 6

    private var cleanup: [() -> Void] = []
    private var base = ""
    private var codes = OneTimeCodes()
    private var environment: [String: String] = [:]
    private var folder = URL(filePath: "/")

    override func tearDown() {
        for step in cleanup.reversed() { step() }
        cleanup = []
    }

    /// The emulator (`extra` flags), a store of the test's own (files, no session bus), a folder.
    private func start(_ extra: [String] = []) throws {
        let emulator = try EmulatorProcess(
            ["--port", "0", "--users", "50", "--device-code-interval", "1", "--access-token-lifetime", String(Self.tokenLifetime)]
                + extra)
        cleanup.append { emulator.stop() }
        base = String(try XCTUnwrap(emulator.readLine()).split(separator: " ").last!)
        let codes = OneTimeCodes()
        self.codes = codes
        Thread.detachNewThread {
            while let line = emulator.readLine() { codes.record(line) }
        }
        folder = Repository.temporaryDirectory("sesame-mail")
        cleanup.append { [folder] in try? FileManager.default.removeItem(at: folder) }
        environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = folder.appending(path: "data").path
        environment["XDG_STATE_HOME"] = folder.appending(path: "state").path
        environment["SESAME_REQUIRE_SECRET_SERVICE"] = nil
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
    }

    private func startMailServer() throws -> MailServer {
        let server = try MailServer(emulator: URL(string: base)!, tenant: Self.contoso)
        cleanup.append { server.stop() }
        return server
    }

    /// `sesame login --device-code --scope mail`, the code typed by alex at "another device".
    @discardableResult
    private func signInForMail(scope: String? = "mail") async throws -> (status: Int32, stdout: String, stderr: String) {
        let login = try DeviceCodeLoginTests.RunningProgram(
            Repository.product("sesame"),
            ["login", "--account-type", "myGraphService", "--device-code", "--emulator", base] + (scope.map { ["--scope", $0] } ?? []),
            environment: environment)
        let userCode = try login.waitForStderr(DeviceCodeLoginTests.codePattern)
        let browser = HeadlessBrowser.sockets(base: URL(string: base)!, codes: codes)
        let page = try await browser.verifyDevice(userCode: userCode, as: Self.alex)
        if page.contains("Need admin approval"), let ctx = page.hidden("ctx"), let action = page.formAction {
            _ = try await browser.post(action, form: [("ctx", ctx), ("step", "admin-approval"), ("approval", "return")])
        }
        return login.finish()
    }

    /// `sesame token` as a mail client's password command runs it.
    private func tokenCommand(_ scope: String, format: String = "token") throws -> String {
        "\(try Repository.product("sesame").path) token --account-type myGraphService --scope \(scope) --format \(format) --emulator \(base)"
    }

    private func run(_ program: String, _ arguments: [String], input: URL? = nil) throws -> ProcessRunner.Result {
        guard FileManager.default.isExecutableFile(atPath: program) else {
            throw TestSupportError("\(program) is missing (`make test` installs isync, msmtp, curl and Dovecot).")
        }
        guard let input else { return try ProcessRunner.run(URL(filePath: program), arguments, environment: environment) }
        let quoted = ([program] + arguments).map { "'\($0.replacing("'", with: "'\\''"))'" }.joined(separator: " ")
        return try ProcessRunner.run(URL(filePath: "/bin/sh"), ["-c", "exec \(quoted) < '\(input.path)'"], environment: environment)
    }

    private static func message(subject: String, from: String = "megan@contoso.onmicrosoft.com", to: String = alex) -> String {
        """
        From: Megan Bowen <\(from)>
        To: <\(to)>
        Subject: \(subject)
        Date: Wed, 25 Nov 2026 10:00:00 +0000
        Message-ID: <\(UUID().uuidString)@contoso.test>

        \(subject): the body.

        """
    }

    /// The first token's expiry has passed (Dovecot allows no leeway, so an old one would fail).
    private func waitUntilTheTokenExpired() throws {
        let printed = try run(
            try Repository.product("sesame").path,
            ["token", "--account-type", "myGraphService", "--scope", "imap", "--format", "json", "--emulator", base])
        XCTAssertEqual(printed.status, 0, printed.stderr)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(printed.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(json["username"] as? String, Self.alex)
        let expiry = try XCTUnwrap(json["expires_on"] as? Int)
        XCTAssertLessThanOrEqual(expiry, Int(Date().timeIntervalSince1970) + Self.tokenLifetime + 1, "not the emulator's short lifetime")
        // Dovecot judges `exp` by its own clock, the real one, in a process of its own: wait it out
        // (bounded by the emulator's 6-second lifetime).
        Thread.sleep(forTimeInterval: max(0, TimeInterval(expiry) - Date().timeIntervalSince1970) + 1)
    }

    private func mbsyncConfiguration(_ server: MailServer) throws -> URL {
        try FileManager.default.createDirectory(at: folder.appending(path: "mail"), withIntermediateDirectories: true)
        let configuration = folder.appending(path: "mbsyncrc")
        try """
        IMAPAccount alex
        Host 127.0.0.1
        Port \(server.imapPort)
        User \(Self.alex)
        PassCmd "\(try tokenCommand("imap"))"
        AuthMechs XOAUTH2
        SSLType None
        Timeout 10

        IMAPStore alex-remote
        Account alex

        MaildirStore alex-local
        Path \(folder.path)/mail/
        Inbox \(folder.path)/mail/INBOX
        SubFolders Verbatim

        Channel alex
        Far :alex-remote:
        Near :alex-local:
        Patterns INBOX
        Create Near
        Sync Pull
        SyncState *

        """.write(to: configuration, atomically: true, encoding: .utf8)
        return configuration
    }

    private func syncedMessages() -> [String] {
        let cur = folder.appending(path: "mail/INBOX")
        let files = ["cur", "new"].flatMap { sub in
            ((try? FileManager.default.contentsOfDirectory(atPath: cur.appending(path: sub).path)) ?? []).map {
                cur.appending(path: "\(sub)/\($0)")
            }
        }
        return files.compactMap { try? String(contentsOf: $0, encoding: .utf8) }
    }

    // MARK: The tests

    func testMbsyncSyncsAlexsInboxAndAgainAfterTheTokenExpiredWithNoPage() async throws {
        try start()
        let server = try startMailServer()
        let login = try await signInForMail()
        XCTAssertEqual(login.status, 0, login.stderr)
        try server.deliver(Self.message(subject: "Quarterly numbers"), to: Self.alex)
        let configuration = try mbsyncConfiguration(server)

        let first = try run("/usr/bin/mbsync", ["-c", configuration.path, "alex"])
        XCTAssertEqual(first.status, 0, "mbsync: \(first.stderr)\nDovecot: \(server.log.suffix(1500))")
        XCTAssertEqual(syncedMessages().filter { $0.contains("Subject: Quarterly numbers") }.count, 1)

        try waitUntilTheTokenExpired()
        try server.deliver(Self.message(subject: "Second thoughts"), to: Self.alex)
        let second = try run("/usr/bin/mbsync", ["-c", configuration.path, "alex"])
        XCTAssertEqual(second.status, 0, "mbsync: \(second.stderr)\nDovecot: \(server.log.suffix(1500))")
        XCTAssertEqual(syncedMessages().count, 2)
        XCTAssertTrue(syncedMessages().contains { $0.contains("Subject: Second thoughts") })
        XCTAssertFalse(server.log.contains("oauth2 failed"), server.log)
    }

    func testMsmtpSendsThroughSubmissionAndTheMessageArrives() async throws {
        try start()
        let server = try startMailServer()
        let signedIn = try await signInForMail()
        XCTAssertEqual(signedIn.status, 0, signedIn.stderr)
        let configuration = folder.appending(path: "msmtprc")
        try """
        defaults
        timeout 15
        account alex
        host 127.0.0.1
        port \(server.submissionPort)
        from \(Self.alex)
        user \(Self.alex)
        auth xoauth2
        passwordeval "\(try tokenCommand("smtp"))"
        tls off

        """.write(to: configuration, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: configuration.path)
        let message = folder.appending(path: "outgoing.eml")
        try Self.message(subject: "Lunch on Friday?", from: Self.alex, to: "megan@contoso.onmicrosoft.com").write(
            to: message, atomically: true, encoding: .utf8)

        let sent = try run("/usr/bin/msmtp", ["-C", configuration.path, "-a", "alex", "megan@contoso.onmicrosoft.com"], input: message)
        XCTAssertEqual(sent.status, 0, "msmtp: \(sent.stderr)\nDovecot: \(server.log.suffix(1500))")
        XCTAssertEqual(server.delivered.count, 1)
        XCTAssertTrue(server.delivered.first?.contains("Subject: Lunch on Friday?") == true, server.delivered.first ?? "")

        try waitUntilTheTokenExpired()
        let again = try run("/usr/bin/msmtp", ["-C", configuration.path, "-a", "alex", "megan@contoso.onmicrosoft.com"], input: message)
        XCTAssertEqual(again.status, 0, "msmtp: \(again.stderr)")
        XCTAssertEqual(server.delivered.count, 2)
    }

    func testCurlReadsAMessageWithTheBearerTokenSesamePrints() async throws {
        try start()
        let server = try startMailServer()
        let signedIn = try await signInForMail()
        XCTAssertEqual(signedIn.status, 0, signedIn.stderr)
        try server.deliver(Self.message(subject: "Read me over IMAP"), to: Self.alex)
        let fetch =
            "/usr/bin/curl -sS --max-time 20 --oauth2-bearer \"$(\(try tokenCommand("imap")))\" -u \(Self.alex): "
            + "'imap://127.0.0.1:\(server.imapPort)/INBOX;MAILINDEX=1'"
        let read = try ProcessRunner.run(URL(filePath: "/bin/sh"), ["-c", fetch], environment: environment)
        XCTAssertEqual(read.status, 0, "curl: \(read.stderr)\nDovecot: \(server.log.suffix(1500))")
        XCTAssertTrue(read.stdout.contains("Subject: Read me over IMAP"), read.stdout)
        try waitUntilTheTokenExpired()
        let again = try ProcessRunner.run(URL(filePath: "/bin/sh"), ["-c", fetch], environment: environment)
        XCTAssertEqual(again.status, 0, "curl after the token expired: \(again.stderr)")
        XCTAssertTrue(again.stdout.contains("Subject: Read me over IMAP"), again.stdout)

        // A Graph token is not a mailbox key: Dovecot refuses it for its audience.
        let graph =
            "/usr/bin/curl -sS --max-time 20 --oauth2-bearer \"$(\(try Repository.product("sesame").path) token "
            + "--account-type myGraphService --emulator \(base))\" -u \(Self.alex): 'imap://127.0.0.1:\(server.imapPort)/INBOX;MAILINDEX=1'"
        let refused = try ProcessRunner.run(URL(filePath: "/bin/sh"), ["-c", graph], environment: environment)
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(server.log.contains("Token audience does not include"), server.log.suffix(1500).description)
    }

    func testTheSASLStringsAreWhatTheServerAccepts() async throws {
        try start()
        let server = try startMailServer()
        let signedIn = try await signInForMail()
        XCTAssertEqual(signedIn.status, 0, signedIn.stderr)
        for (format, mechanism) in [("xoauth2", "XOAUTH2"), ("oauthbearer", "OAUTHBEARER")] {
            let printed = try run(
                try Repository.product("sesame").path,
                (try tokenCommand("imap", format: format)).split(separator: " ").dropFirst().map(String.init))
            XCTAssertEqual(printed.status, 0, printed.stderr)
            let decoded = String(decoding: Data(base64Encoded: printed.stdout.trimmingCharacters(in: .newlines)) ?? Data(), as: UTF8.self)
            XCTAssertTrue(decoded.contains("auth=Bearer ey"), "\(format) does not carry the token")
            XCTAssertTrue(decoded.contains(Self.alex), "\(format) does not name alex")
            let socket = try LineClient(port: server.imapPort)
            XCTAssertTrue(socket.readLine()?.hasPrefix("* OK") == true)
            socket.send("a1 AUTHENTICATE \(mechanism) \(printed.stdout.trimmingCharacters(in: .newlines))")
            let answer = socket.readLine() ?? ""
            XCTAssertTrue(answer.hasPrefix("a1 OK"), "\(mechanism): \(answer)\n\(server.log.suffix(800))")
        }
    }

    func testARevokedSignInMakesThePasswordCommandFailFastWithSesamesSentence() async throws {
        try start()
        let server = try startMailServer()
        let signedIn = try await signInForMail()
        XCTAssertEqual(signedIn.status, 0, signedIn.stderr)
        let configuration = try mbsyncConfiguration(server)
        let browser = HeadlessBrowser.sockets(base: URL(string: base)!, codes: codes)
        _ = try await browser.post("/.emulator/users/\(Self.alex)/revokeSignInSessions", form: [])
        try waitOutTheTokenLifetime()

        let started = Date()
        let sync = try run("/usr/bin/mbsync", ["-c", configuration.path, "alex"])
        XCTAssertNotEqual(sync.status, 0)
        XCTAssertLessThan(Date().timeIntervalSince(started), 30, "mbsync hung")
        XCTAssertTrue(sync.stderr.contains("sesame: "), sync.stderr)
        XCTAssertTrue(sync.stderr.contains("sesame: Your sign-in has expired or was revoked; sign in again. (AADSTS50173)"), sync.stderr)
        XCTAssertTrue(
            sync.stderr.contains("Sign in as \(Self.alex) with `sesame login --account-type myGraphService --scope imap`."), sync.stderr)
        XCTAssertFalse(sync.stderr.contains("adminconsent"), "a revoked sign-in is not a missing consent")
        let token = try run(
            try Repository.product("sesame").path, ["token", "--account-type", "myGraphService", "--scope", "imap", "--emulator", base])
        XCTAssertEqual(token.status, 2, "a sign-in is needed: exit status 2")
        XCTAssertEqual(token.stdout, "")
    }

    func testAnOrganizationThatLetsOnlyAdministratorsConsentGetsTheLinkToSendThem() async throws {
        try start(["--user-consent", "admin-only"])
        let refused = try await signInForMail()
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("only an administrator"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("AADSTS90094"), refused.stderr)
        let link = try XCTUnwrap(refused.stderr.firstMatch(of: /(http\S+\/v2\.0\/adminconsent\?\S+)/)?.1)
        let components = try XCTUnwrap(URLComponents(string: String(link)))
        XCTAssertEqual(components.path, "/contoso.onmicrosoft.com/v2.0/adminconsent")
        let items = Dictionary(uniqueKeysWithValues: (components.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        XCTAssertEqual(items["client_id"], "6731de76-14a6-49ae-97bc-6eba6914391e")
        XCTAssertTrue(items["scope"]?.contains("https://outlook.office.com/IMAP.AccessAsUser.All") == true, items["scope"] ?? "")
        XCTAssertTrue(items["scope"]?.contains("https://outlook.office.com/SMTP.Send") == true, items["scope"] ?? "")

        // The administrator approves the app for everyone; the next sign-in goes through.
        let browser = HeadlessBrowser.sockets(base: URL(string: base)!, codes: codes)
        _ = try await browser.post("/.emulator/clients/\(items["client_id"] ?? "")/adminConsent", form: [])
        let approved = try await signInForMail()
        XCTAssertEqual(approved.status, 0, approved.stderr)
        let token = try run(
            try Repository.product("sesame").path, ["token", "--account-type", "myGraphService", "--scope", "imap", "--emulator", base])
        XCTAssertEqual(token.status, 0, token.stderr)
    }

    func testDoctorSignsInToTheMailServerAndSaysWhatTheTokenCarries() async throws {
        try start()
        let server = try startMailServer()
        let signedIn = try await signInForMail()
        XCTAssertEqual(signedIn.status, 0, signedIn.stderr)
        let doctor = try run(
            try Repository.product("sesame").path,
            [
                "doctor", "--mail", "imap://127.0.0.1:\(server.imapPort)", "--mail", "smtp://127.0.0.1:\(server.submissionPort)",
                "--emulator", base,
            ])
        let mail = String(doctor.stdout.components(separatedBy: "\nMail\n").last ?? "")
        XCTAssertTrue(mail.contains("OK   token audience: https://outlook.office.com (Exchange Online)"), doctor.stdout)
        XCTAssertTrue(mail.contains("OK   permissions granted: IMAP.AccessAsUser.All"), doctor.stdout)
        XCTAssertTrue(mail.contains("OK   permissions granted: SMTP.Send"), doctor.stdout)
        XCTAssertTrue(mail.contains("OK   IMAP 127.0.0.1:\(server.imapPort) (none): signed in with XOAUTH2 as \(Self.alex)"), doctor.stdout)
        XCTAssertTrue(
            mail.contains("OK   SMTP 127.0.0.1:\(server.submissionPort) (none): signed in with XOAUTH2 as \(Self.alex)"), doctor.stdout)
        XCTAssertFalse(doctor.stdout.contains("eyJ"), "a token reached the report")

        // Dovecot refusing (another audience configured) is a FIX line with the server's words, not a hang.
        let strict = try MailServer(emulator: URL(string: base)!, tenant: Self.contoso, audience: "https://outlook.office365.com")
        cleanup.append { strict.stop() }
        let refused = try run(
            try Repository.product("sesame").path, ["doctor", "--mail", "imap://127.0.0.1:\(strict.imapPort)", "--emulator", base])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stdout.contains("FIX  IMAP 127.0.0.1:\(strict.imapPort) (none): refused the token"), refused.stdout)
    }

    func testASignInWithoutTheMailPermissionsSaysWhichSignInGivesThem() async throws {
        try start()
        let signedIn = try await signInForMail(scope: nil)
        XCTAssertEqual(signedIn.status, 0, signedIn.stderr)
        let started = Date()
        let token = try run(
            try Repository.product("sesame").path, ["token", "--account-type", "myGraphService", "--scope", "imap", "--emulator", base])
        XCTAssertEqual(token.status, 2, token.stderr)
        XCTAssertEqual(token.stdout, "")
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "no prompt, no wait")
        XCTAssertTrue(token.stderr.contains("Sesame may not use these permissions for \(Self.alex) yet."), token.stderr)
        XCTAssertTrue(token.stderr.contains("`sesame login --account-type myGraphService --scope imap`"), token.stderr)
        XCTAssertTrue(token.stderr.contains("/contoso.onmicrosoft.com/v2.0/adminconsent?client_id="), token.stderr)
        // Graph, which alex consented to, still works.
        let graph = try run(try Repository.product("sesame").path, ["token", "--account-type", "myGraphService", "--emulator", base])
        XCTAssertEqual(graph.status, 0, graph.stderr)
    }

    /// Dovecot and the mail programs judge `exp` by the real clock, in processes of their own: the
    /// emulator's 6-second lifetime, waited out.
    private func waitOutTheTokenLifetime() throws {
        Thread.sleep(forTimeInterval: TimeInterval(Self.tokenLifetime + 1))  // the real clock, as above
    }
}

/// A line client for IMAP by hand.
private final class LineClient {
    private let handle: FileHandle

    init(port: Int) throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { throw TestSupportError("connect(\(port))") }
        handle = FileHandle(fileDescriptor: socket, closeOnDealloc: true)
    }

    func send(_ line: String) { handle.write(Data((line + "\r\n").utf8)) }

    func readLine() -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while bytes.count < 65536, read(handle.fileDescriptor, &byte, 1) == 1 {
            if byte == 10 { break }
            bytes.append(byte)
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .newlines)
    }
}
