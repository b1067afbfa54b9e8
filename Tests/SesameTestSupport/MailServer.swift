import Foundation

/// Debian's Dovecot, started for a test as Exchange Online's stand-in: IMAP and SMTP submission on
/// free loopback ports, logging in only with an OAuth bearer token (SASL XOAUTH2 or OAUTHBEARER)
/// that its `oauth2` passdb validates locally — the signature against the identity emulator's
/// published keys, `iss` Entra's v1 issuer for the tenant, `aud` Exchange's resource, `upn` the
/// SASL user, `exp` with no leeway. Submission relays to a sink that records each message.
///
/// Local validation, not introspection: Entra has no introspection endpoint for Exchange tokens
/// (Exchange validates them itself, against the published keys), so this is what a real server
/// does; it also proves that the emulator's tokens are signed and shaped as Dovecot expects.
public final class MailServer: @unchecked Sendable {
    /// IMAP (plain text on 127.0.0.1).
    public let imapPort: Int
    /// SMTP submission (plain text on 127.0.0.1), relaying to the sink.
    public let submissionPort: Int
    /// The folder holding the configuration, the keys, the mail and the logs.
    public let directory: URL
    /// Where the sink writes what arrived: `NNNN.eml` and `messages.jsonl`.
    public var sinkDirectory: URL { directory.appending(path: "sink") }
    private let dovecot = Process()
    private let sink = Process()

    /// Starts the sink and Dovecot, trusting the keys the emulator at `emulator` publishes for
    /// `tenant` (its id).
    public init(emulator: URL, tenant: String, audience: String = "https://outlook.office.com") throws {
        for program in ["/usr/sbin/dovecot", "/usr/bin/doveadm"] where !FileManager.default.isExecutableFile(atPath: program) {
            throw TestSupportError("\(program) is missing: install dovecot-imapd and dovecot-submissiond (`make test` does).")
        }
        directory = Repository.temporaryDirectory("dovecot")
        // Dovecot's unprivileged processes read and write under it.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        imapPort = try FreePort.pick()
        submissionPort = try FreePort.pick()
        let sinkPort = try FreePort.pick()
        for folder in ["run", "state", "logs", "home", "keys/default/RS256", "sink"] {
            try FileManager.default.createDirectory(at: directory.appending(path: folder), withIntermediateDirectories: true)
        }
        let root = getuid() == 0
        // As root, Dovecot's login processes must run as its `dovenull`, mail as someone not root.
        let (internalUser, loginUser, mailUser, mailGroup) =
            root
            ? ("dovecot", "dovenull", "nobody", "nogroup")
            : (Self.name(ofUser: getuid()), Self.name(ofUser: getuid()), Self.name(ofUser: getuid()), Self.name(ofGroup: getgid()))
        let internalGroup = root ? "dovecot" : Self.name(ofGroup: getgid())
        if root {
            _ = try ProcessRunner.run(URL(filePath: "/bin/chown"), ["\(mailUser):\(mailGroup)", directory.appending(path: "home").path])
        }
        try Self.writeKeys(from: emulator, tenant: tenant, to: directory.appending(path: "keys/default/RS256"))

        let path = directory.path
        let configuration = """
            protocols = imap submission
            listen = 127.0.0.1
            base_dir = \(path)/run
            state_dir = \(path)/state
            instance_name = sesame-test-\(imapPort)
            default_internal_user = \(internalUser)
            default_internal_group = \(internalGroup)
            default_login_user = \(loginUser)
            first_valid_uid = 1
            first_valid_gid = 1
            log_path = \(path)/logs/dovecot.log
            info_log_path = \(path)/logs/dovecot.log
            # auth_verbose says why a token was refused; auth_debug would log the token itself.
            auth_verbose = yes
            auth_debug = no
            ssl = no
            disable_plaintext_auth = no
            auth_mechanisms = xoauth2 oauthbearer
            auth_username_format = %Lu
            auth_failure_delay = 0
            passdb {
              driver = oauth2
              mechanisms = xoauth2 oauthbearer
              args = \(path)/dovecot-oauth2.conf.ext
            }
            userdb {
              driver = static
              args = uid=\(mailUser) gid=\(mailGroup) home=\(path)/home/%Lu mail=maildir:~/Maildir allow_all_users=yes
            }
            service imap-login {
              inet_listener imap {
                address = 127.0.0.1
                port = \(imapPort)
              }
              inet_listener imaps {
                port = 0
              }
              chroot =
            }
            hostname = mail.test
            submission_relay_host = 127.0.0.1
            submission_relay_port = \(sinkPort)
            submission_relay_trusted = no
            submission_relay_ssl = no
            service submission-login {
              inet_listener submission {
                address = 127.0.0.1
                port = \(submissionPort)
              }
              chroot =
            }
            service anvil {
              chroot =
              # No penalty for failed logins from 127.0.0.1 (2, 4, 8 … s): the tests refuse tokens on purpose.
              unix_listener anvil-auth-penalty {
                mode = 0
              }
            }

            """
        try configuration.write(to: directory.appending(path: "dovecot.conf"), atomically: true, encoding: .utf8)
        let oauth2 = """
            introspection_mode = local
            local_validation_key_dict = fs:posix:prefix=\(path)/keys/
            username_attribute = upn
            username_format = %Lu
            issuers = https://sts.windows.net/\(tenant)/
            audience = \(audience)
            active_attribute =
            active_value =

            """
        try oauth2.write(to: directory.appending(path: "dovecot-oauth2.conf.ext"), atomically: true, encoding: .utf8)

        sink.executableURL = try Repository.python()
        sink.arguments = [
            Repository.root.appending(path: "Tests/SesameCLITests/Mail/smtp_sink.py").path, "--port", String(sinkPort), "--outdir",
            sinkDirectory.path,
        ]
        sink.standardOutput = FileHandle.nullDevice
        try sink.start()
        dovecot.executableURL = URL(filePath: "/usr/sbin/dovecot")
        dovecot.arguments = ["-F", "-c", directory.appending(path: "dovecot.conf").path]
        dovecot.standardOutput = FileHandle.nullDevice
        dovecot.standardError = try FileHandle(forWritingTo: Self.touch(directory.appending(path: "logs/stderr")))
        try dovecot.start()
        do {
            try waitForGreeting()
            try FreePort.waitUntilListening(sinkPort, timeout: 15)
        } catch {
            stop()
            throw error
        }
    }

    /// What Dovecot logged: each refusal's reason (`oauth2 failed: …`) and each login.
    public var log: String {
        (try? String(contentsOf: directory.appending(path: "logs/dovecot.log"), encoding: .utf8)) ?? ""
            + ((try? String(contentsOf: directory.appending(path: "logs/stderr"), encoding: .utf8)) ?? "")
    }

    /// The messages the sink received, in order.
    public var delivered: [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: sinkDirectory.path)) ?? []
        return files.filter { $0.hasSuffix(".eml") }.sorted().compactMap {
            try? String(contentsOf: sinkDirectory.appending(path: $0), encoding: .utf8)
        }
    }

    /// Puts `message` (RFC 5322 text) into `user`'s INBOX, as mail arriving from outside would.
    public func deliver(_ message: String, to user: String) throws {
        let file = directory.appending(path: "incoming.eml")
        try message.replacing("\n", with: "\r\n").write(to: file, atomically: true, encoding: .utf8)
        let saved = try ProcessRunner.run(
            URL(filePath: "/bin/sh"),
            [
                "-c", "exec /usr/bin/doveadm -c \"$1\" save -u \"$2\" -m INBOX < \"$3\"", "sh",
                directory.appending(path: "dovecot.conf").path, user, file.path,
            ])
        guard saved.status == 0 else { throw TestSupportError("doveadm save failed: \(saved.stderr)") }
    }

    /// Ends Dovecot and the sink and waits for them.
    public func stop() {
        for process in [dovecot, sink] where process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    deinit { stop() }

    // MARK: Setting up

    /// Waits for IMAP's `* OK` greeting: the master listens at once, the greeting needs a working
    /// imap-login. A `Fatal` in the log ends the wait at once.
    private func waitForGreeting() throws {
        let ready = Eventually.holdsBlocking(within: .seconds(20), every: .milliseconds(50)) { [self] in
            !dovecot.isRunning || log.contains("Fatal") || Self.greets(imapPort)
        }
        guard ready, dovecot.isRunning, !log.contains("Fatal") else {
            throw TestSupportError("Dovecot did not start: \(log.suffix(2000))")
        }
    }

    private static func greets(_ port: Int) -> Bool {
        guard let stream = try? LineSocket(port: port) else { return false }
        return stream.readLine()?.hasPrefix("* OK") == true
    }

    /// The emulator's signing keys (its JWKS `x5c` certificates) as the PEM public keys Dovecot
    /// reads, one file per `kid` (`keys/default/RS256/<kid>`: Exchange's tokens carry no `azp`).
    static func writeKeys(from emulator: URL, tenant: String, to folder: URL) throws {
        let url = emulator.appending(path: "\(tenant)/discovery/v2.0/keys")
        let data = try Data(contentsOf: url)
        guard let keys = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["keys"] as? [[String: Any]] else {
            throw TestSupportError("no keys at \(url)")
        }
        for key in keys {
            guard let kid = key["kid"] as? String, let certificate = (key["x5c"] as? [String])?.first else { continue }
            let pem = "-----BEGIN CERTIFICATE-----\n\(certificate)\n-----END CERTIFICATE-----\n"
            let certificateFile = folder.appending(path: "\(kid).crt")
            try pem.write(to: certificateFile, atomically: true, encoding: .utf8)
            let extracted = try ProcessRunner.run(
                URL(filePath: "/usr/bin/openssl"), ["x509", "-pubkey", "-noout", "-in", certificateFile.path])
            guard extracted.status == 0 else { throw TestSupportError("openssl x509: \(extracted.stderr)") }
            try extracted.stdout.write(to: folder.appending(path: kid), atomically: true, encoding: .utf8)
            try FileManager.default.removeItem(at: certificateFile)
        }
        for path in [folder, folder.deletingLastPathComponent(), folder.deletingLastPathComponent().deletingLastPathComponent()] {
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path.path)
        }
    }

    private static func touch(_ file: URL) -> URL {
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)  // a failure shows where the file is opened
        return file
    }

    private static func name(ofUser id: uid_t) -> String { getpwuid(id).map { String(cString: $0.pointee.pw_name) } ?? String(id) }
    private static func name(ofGroup id: gid_t) -> String { getgrgid(id).map { String(cString: $0.pointee.gr_name) } ?? String(id) }
}

/// A line-oriented TCP client on 127.0.0.1, for protocol greetings and short exchanges.
struct LineSocket {
    private let handle: FileHandle

    init(port: Int) throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw TestSupportError("socket()") }
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
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
        guard connected else {
            close(socket)
            throw TestSupportError("connect(\(port))")
        }
        handle = FileHandle(fileDescriptor: socket, closeOnDealloc: true)
    }

    /// The next line (without CRLF), or nil when the peer said nothing within two seconds.
    func readLine() -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while bytes.count < 4096, read(handle.fileDescriptor, &byte, 1) == 1 {
            if byte == 10 { break }
            bytes.append(byte)
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .newlines)
    }
}
