import Foundation
import SesameCore
import SesameCoreTestSupport
import SesameSamples
import SesameService
import SesameTestSupport
import SesameWindowModel
import Testing

@MainActor
@Suite("Which program may use which account (no bus)")
struct ProgramAccessTests {
    static let git = ProgramIdentity.executable("/usr/local/bin/git-credential-sesame")!
    static let copy = ProgramIdentity.executable("/tmp/elsewhere/git-credential-sesame")!

    static func request(
        _ program: ProgramIdentity = git, scopes: [String] = ["User.Read"], resource: String = "",
        context: ProgramContext = ProgramContext()
    ) -> AccessRequest {
        AccessRequest(
            program: program, accountType: "myGraphService", homeAccountID: "uid.utid", username: "alex@contoso.com", resource: resource,
            scopes: scopes, context: context)
    }

    @Test("a program is identified by its path or app id; anything else is no identity; an unverified one says so")
    func identities() {
        #expect(ProgramIdentity.executable("relative/tool") == nil)
        #expect(ProgramIdentity.executable("/bin/a\u{0}b") == nil)
        #expect(ProgramIdentity.executable("/" + String(repeating: "a", count: 5000)) == nil)
        #expect(ProgramIdentity.flatpak("org.gnome.Evolution")?.name == "org.gnome.Evolution")
        #expect(ProgramIdentity.flatpak("org.gnome.Evolution; rm -rf") == nil)
        #expect(ProgramIdentity.flatpak("nodots") == nil)
        #expect(Self.git.name == "git-credential-sesame")
        #expect(Self.git != Self.copy, "two paths of one name are two programs")
        let claimed = ProgramIdentity.unverified(claiming: "/usr/local/bin/git-credential-sesame")!
        #expect(!claimed.isVerified && Self.git.isVerified)
        #expect(claimed != Self.git, "a program that claims a path is not the program at that path")
    }

    @Test("the resource of a scope, and the scopes a question shows (OpenID's left out, once each, sorted)")
    func resources() {
        #expect(ScopeResource.of("User.Read") == "")
        #expect(ScopeResource.of("https://graph.microsoft.com/User.Read") == "")
        #expect(ScopeResource.of("https://outlook.office.com/IMAP.AccessAsUser.All") == "https://outlook.office.com")
        #expect(ScopeResource.of("499b84ac-1321-427f-aa17-267ca6975798/.default") == "499b84ac-1321-427f-aa17-267ca6975798")
        #expect(ScopeResource.of("api://tasks/read") == "api://tasks")
        #expect(
            ScopeResource.shown(["openid", "User.ReadBasic.All", "profile", "user.read", "User.Read", "offline_access"])
                == ["user.read", "User.ReadBasic.All"])
    }

    @Test("Always keeps the permissions shown per program, account and resource; more asks again; Deny the resource; Allow once nothing")
    func decisions() {
        let access = ProgramAccess(file: nil)
        #expect(access.decision(for: Self.request()) == .undecided)
        access.record(.allowOnce, for: Self.request())
        #expect(access.decision(for: Self.request()) == .undecided)
        access.record(.always, for: Self.request(scopes: ["User.Read", "Mail.Read"]))
        #expect(access.decision(for: Self.request(scopes: ["mail.read", "user.read"])) == .allowed)
        #expect(access.decision(for: Self.request(scopes: ["User.Read"])) == .allowed, "less than allowed is allowed")
        #expect(
            access.decision(for: Self.request(scopes: ["User.Read", "User.ReadBasic.All"])) == .grew(allowed: ["Mail.Read", "User.Read"]),
            "a token that carries more asks again")
        #expect(
            access.decision(for: Self.request(scopes: ["https://outlook.office.com/SMTP.Send"], resource: "https://outlook.office.com"))
                == .undecided, "another resource is another question")
        #expect(access.decision(for: Self.request(Self.copy, scopes: ["User.Read"])) == .undecided, "another path, another question")
        access.record(.deny, for: Self.request(Self.copy))
        #expect(access.decision(for: Self.request(Self.copy, scopes: ["Anything.Else"])) == .denied)
        #expect(access.all.count == 2)
        // Nothing is kept about a program Sesame cannot verify.
        let unverified = ProgramIdentity.unverified(claiming: Self.git.id)!
        access.record(.always, for: Self.request(unverified))
        access.record(.deny, for: Self.request(unverified))
        #expect(access.decision(for: Self.request(unverified)) == .undecided)
        #expect(!access.maySee(unverified, accountType: "myGraphService", homeAccountID: "uid.utid"))
        #expect(access.all.count == 2)
    }

    @Test("a revoked decision asks again; a signed-out account's decisions go")
    func revoking() throws {
        let access = ProgramAccess(file: nil)
        var changes = 0
        access.observe { changes += 1 }
        access.record(.always, for: Self.request())
        access.record(.deny, for: Self.request(Self.copy))
        #expect(access.maySee(Self.git, accountType: "myGraphService", homeAccountID: "uid.utid"))
        #expect(!access.maySee(Self.copy, accountType: "myGraphService", homeAccountID: "uid.utid"), "denied is not seeing")
        let kept = try #require(access.all.first { $0.program == Self.git })
        access.revoke(kept)
        #expect(access.decision(for: Self.request()) == .undecided)
        #expect(!access.maySee(Self.git, accountType: "myGraphService", homeAccountID: "uid.utid"))
        access.forget(accountType: "myGraphService", homeAccountID: "uid.utid")
        #expect(access.all.isEmpty)
        #expect(changes == 4)
    }

    @Test("decisions survive a restart in an owner-only file; version 1's are read per resource, and more asks again")
    func keptInAFile() throws {
        let folder = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appending(path: "sesame/program-access.json")
        ProgramAccess(file: file).record(.always, for: Self.request())
        let again = ProgramAccess(file: file)
        #expect(again.decision(for: Self.request()) == .allowed)
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        let old =
            #"{"version": 1, "decisions": [{"program": {"kind": "executable", "id": "/usr/local/bin/git-credential-sesame"}, "#
            + #""accountType": "myGraphService", "homeAccountID": "uid.utid", "username": "alex@contoso.com", "#
            + #""scopes": ["user.read"], "allowed": true, "decidedAt": "2025-01-01T00:00:00Z"}]}"#
        try Data(old.utf8).write(to: file)
        let migrated = ProgramAccess(file: file)
        #expect(migrated.decision(for: Self.request(scopes: ["User.Read"])) == .allowed)
        #expect(migrated.decision(for: Self.request(scopes: ["User.Read", "User.ReadBasic.All"])) == .grew(allowed: ["user.read"]))
    }

    @Test("a hostile file is no decision: malformed, oversized, a link, odd entries dropped one by one")
    func hostileFile() throws {
        let folder = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appending(path: "program-access.json")
        for text in ["", "{", "[]", #"{"version": 3, "decisions": []}"#, String(repeating: " ", count: ProgramAccess.maximumFileSize + 1)] {
            try Data(text.utf8).write(to: file)
            #expect(ProgramAccess(file: file).all.isEmpty)
        }
        func entry(_ program: String, scopes: String = #"["User.Read"]"#, resource: String = "") -> String {
            #"{"program": \#(program), "accountType": "t", "homeAccountID": "h", "username": "u", "resource": "\#(resource)", "#
                + #""scopes": \#(scopes), "allowed": true, "decidedAt": "2025-01-01T00:00:00Z"}"#
        }
        let tool = #"{"kind": "executable", "id": "/usr/bin/tool"}"#
        let entries = [
            entry(tool),
            entry(#"{"kind": "executable", "id": "relative"}"#),
            entry(#"{"kind": "flatpak", "id": "x"}"#),
            entry(#"{"kind": "unverified", "id": "/usr/bin/other"}"#),
            entry(#"{"kind": "executable", "id": "/usr/bin/a"}"#, scopes: #"["User.Read", "Mail.Read"]"#),
            entry(#"{"kind": "executable", "id": "/usr/bin/b"}"#, scopes: #"["https://outlook.office.com/SMTP.Send"]"#),
            entry(#"{"kind": "executable", "id": "/usr/bin/c"}"#, scopes: #"["User.Read\u202e"]"#),
            #"{"allowed": "yes"}"#, "42",
        ]
        try Data(#"{"version": 2, "decisions": [\#(entries.joined(separator: ","))]}"#.utf8).write(to: file)
        let read = ProgramAccess(file: file)
        #expect(read.all.count == 1, "\(read.all)")
        let identity = try #require(ProgramIdentity.executable("/usr/bin/tool"))
        #expect(
            read.decision(
                for: AccessRequest(
                    program: identity, accountType: "t", homeAccountID: "h", username: "u", resource: "", scopes: ["User.Read"]))
                == .allowed)
        // A link to a file of decisions is not followed.
        let link = folder.appending(path: "link.json")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file)
        #expect(ProgramAccess(file: link).all.isEmpty)
    }

    @Test("the question's words: the name escaped and isolated, the full path for a name two programs share, new permissions marked")
    func questionText() {
        let spoof = ProgramIdentity.executable("/tmp/x/\u{202E}lanimret-emong")!
        let text = AccessQuestionText(Self.request(spoof))
        #expect(text.heading.contains("\u{2068}\\u{202E}lanimret-emong\u{2069}"), "\(text.heading)")
        #expect(!text.heading.unicodeScalars.contains("\u{202E}"), "a raw override reached the question")
        #expect(text.origin.contains("\\u{202E}"))
        #expect(text.offersAlways && text.warning == nil)
        let twin = AccessQuestionText(Self.request(Self.git), knownPrograms: [Self.copy])
        #expect(twin.heading.contains(Self.git.id), "two programs of one name: the path tells them apart")
        #expect(
            AccessQuestionText(Self.request(Self.git), knownPrograms: [Self.git]).heading.contains("\u{2068}git-credential-sesame\u{2069}"))
        let grown = AccessRequest(
            program: Self.git, accountType: "t", homeAccountID: "h", username: "u", resource: "", scopes: ["User.Read", "Mail.Read"],
            previouslyAllowed: ["User.Read"])
        #expect(AccessQuestionText(grown).permissions == [String(format: L("%@ (new)"), "Mail.Read"), "User.Read"])
        let unverified = AccessQuestionText(Self.request(ProgramIdentity.unverified(claiming: "/usr/bin/gnome-terminal")!))
        #expect(!unverified.offersAlways && unverified.warning != nil)
        #expect(DisplayText.escaped("a\u{200B}b\u{00A0}c\\") == "a\\u{200B}b\\u{A0}c\\\\")
        #expect(!DisplayText.hasHiddenCharacters("Ελληνικά 中文 O'Brien"))
    }

    @Test(
        "the question says what Always covers: every program an interpreter runs, every command of a shell or of a program that ran Sesame's command"
    )
    func questionSaysWhatAlwaysCovers() {
        let python = ProgramIdentity.executable("/usr/bin/python3.11")!
        #expect(python.reach == .interpreter)
        let script = AccessQuestionText(Self.request(python, context: ProgramContext(claimedScript: "/home/u/mail-app.py")))
        #expect(
            script.origin.contains(
                String(
                    formatting: L("%@ runs programs it is given: Always covers every program it runs, not only this one."),
                    "\u{2068}python3.11\u{2069}")), "\(script.origin)")
        #expect(script.origin.contains("\u{2068}/home/u/mail-app.py\u{2069}"), "the script it names is shown")
        #expect(
            script.origin.contains(
                L("It says it runs %@ (its own words: Sesame cannot check them).").replacingOccurrences(
                    of: "%@", with: "\u{2068}/home/u/mail-app.py\u{2069}")))
        #expect(script.offersAlways, "Always is offered, in these words")
        let shell = AccessQuestionText(Self.request(ProgramIdentity.executable("/usr/bin/bash")!))
        #expect(shell.origin.contains(String(formatting: L("%@ is a shell: Always covers every command it runs."), "\u{2068}bash\u{2069}")))
        let msmtp = ProgramIdentity.executable("/usr/bin/msmtp")!
        #expect(msmtp.reach == .itself)
        let mail = AccessQuestionText(Self.request(msmtp, context: ProgramContext(ranCommand: true)))
        #expect(
            mail.origin.contains(
                String(
                    formatting: L("%@ asked by running a command of its settings: Always covers every command it runs."),
                    "\u{2068}msmtp\u{2069}")), "\(mail.origin)")
        let plain = AccessQuestionText(Self.request(msmtp))
        #expect(plain.origin == String(formatting: L("The program %@"), "/usr/bin/msmtp"), "a program that asked itself covers itself")
        // The hint is never a key: two scripts are one decision for python.
        let other = Self.request(python, context: ProgramContext(claimedScript: "/tmp/hostile.py"))
        let access = ProgramAccess(file: nil)
        access.record(.always, for: Self.request(python, context: ProgramContext(claimedScript: "/home/u/mail-app.py")))
        #expect(access.decision(for: other) == .allowed)
    }
}

/// Who a process is, read from a made-up `/proc` and `$XDG_RUNTIME_DIR`: the executable in
/// Sesame's own mount namespace; a Flatpak app only when its instance checks out; anything else
/// in another namespace unverified.
@Suite("Who is calling, as /proc tells it")
struct ProcessIdentificationTests {
    /// A fake `/proc`: `self` in namespace 1, and one process per entry.
    struct FakeProc {
        let root = temporaryDirectory()
        var proc: URL { root.appending(path: "proc") }
        var runtime: URL { root.appending(path: "run") }

        func process(
            _ pid: Int, exe: String, namespace: Int, startTime: Int = 4242, flatpakInfo: String? = nil, parent: Int = 4,
            arguments: [String]? = nil, standardInput: String = "/dev/null"
        ) throws {
            let folder = proc.appending(path: "\(pid)")
            try FileManager.default.createDirectory(at: folder.appending(path: "ns"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: folder.appending(path: "fd"), withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: folder.appending(path: "fd/0").path, withDestinationPath: standardInput)
            try FileManager.default.createSymbolicLink(atPath: folder.appending(path: "exe").path, withDestinationPath: exe)
            try FileManager.default.createSymbolicLink(
                atPath: folder.appending(path: "ns/mnt").path, withDestinationPath: "mnt:[\(namespace)]")
            let fields = (["S", String(parent)] + (5...21).map(String.init) + [String(startTime)] + ["23", "24"]).joined(separator: " ")
            if let arguments { try Data(arguments.map { $0 + "\u{0}" }.joined().utf8).write(to: folder.appending(path: "cmdline")) }
            try Data("\(pid) (to ol) (x)) \(fields)\n".utf8).write(to: folder.appending(path: "stat"))
            let sandbox = folder.appending(path: "root")
            try FileManager.default.createDirectory(at: sandbox, withIntermediateDirectories: true)
            if let flatpakInfo { try Data(flatpakInfo.utf8).write(to: sandbox.appending(path: ".flatpak-info")) }
        }

        func bwrapInfo(instance: String, childPID: Int) throws {
            let folder = runtime.appending(path: ".flatpak/\(instance)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(#"{"child-pid": \#(childPID), "mnt-namespace": 1}"#.utf8).write(to: folder.appending(path: "bwrapinfo.json"))
        }

        var identification: ProcessIdentification { ProcessIdentification(proc: proc.path, runtimeDirectory: runtime.path) }

        func remove() { try? FileManager.default.removeItem(at: root) }
    }

    static let info = "[Application]\nname=org.example.Mail\nruntime=runtime/org.gnome.Platform\n\n[Instance]\ninstance-id=1234567\n"

    @Test("same namespace: the executable; a verified Flatpak instance: its app id; anything else in a namespace of its own: unverified")
    func identify() throws {
        let fake = FakeProc()
        defer { fake.remove() }
        try FileManager.default.createDirectory(at: fake.proc.appending(path: "self/ns"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: fake.proc.appending(path: "self/ns/mnt").path, withDestinationPath: "mnt:[1]")
        try fake.process(100, exe: "/usr/bin/tool", namespace: 1)
        try fake.process(200, exe: "/app/bin/mail", namespace: 2, flatpakInfo: Self.info)
        try fake.process(201, exe: "/usr/bin/bwrap", namespace: 2)
        try fake.bwrapInfo(instance: "1234567", childPID: 201)
        // bwrap binding another file over a path, and a .flatpak-info of its own making.
        try fake.process(300, exe: "/usr/bin/gnome-terminal", namespace: 3)
        try fake.process(400, exe: "/app/bin/mail", namespace: 4, flatpakInfo: Self.info)
        try fake.process(500, exe: "/app/bin/mail", namespace: 5, flatpakInfo: Self.info.replacingOccurrences(of: "1234567", with: "999"))
        let identification = fake.identification
        #expect(identification.caller(100)?.program == .executable("/usr/bin/tool"))
        #expect(identification.caller(100)?.fingerprint.startTime == 4242, "the start time after a name with spaces and parentheses")
        #expect(identification.caller(200)?.program == .flatpak("org.example.Mail"))
        #expect(identification.caller(300)?.program == .unverified(claiming: "/usr/bin/gnome-terminal"))
        #expect(
            identification.caller(400)?.program == .unverified(claiming: "/app/bin/mail"),
            "a .flatpak-info naming an instance whose process is in another namespace is not believed")
        #expect(identification.caller(500)?.program == .unverified(claiming: "/app/bin/mail"), "an instance Flatpak never started")
        #expect(identification.caller(600) == nil, "a process that is gone")
        #expect(ProcessIdentification(proc: fake.proc.path, runtimeDirectory: nil).caller(200)?.program.isVerified == false)
    }

    @Test(
        "`sesame token` run by a mail program's PassCmd is that program's request; typed at a terminal, the person's; fed to a shell, the feeder's"
    )
    func tokenCommandRequester() throws {
        let fake = FakeProc()
        defer { fake.remove() }
        try FileManager.default.createDirectory(at: fake.proc.appending(path: "self/ns"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: fake.proc.appending(path: "self/ns/mnt").path, withDestinationPath: "mnt:[1]")
        let token = ["/usr/bin/sesame", "token", "--account-type", "work", "--scope", "imap"]
        // /dev/tty: a terminal (major 5), whatever this machine's pseudo-terminals are.
        let terminal = "/dev/tty"
        // mbsync → sh -c "sesame token …" → sesame token
        try fake.process(10, exe: "/usr/bin/mbsync", namespace: 1, parent: 2, arguments: ["mbsync", "-a"])
        try fake.process(11, exe: "/usr/bin/dash", namespace: 1, parent: 10, arguments: ["sh", "-c", token.joined(separator: " ")])
        try fake.process(12, exe: "/usr/bin/sesame", namespace: 1, parent: 11, arguments: token)
        // msmtp runs it straight.
        try fake.process(20, exe: "/usr/bin/msmtp", namespace: 1, parent: 2, arguments: ["msmtp", "-a", "work"])
        try fake.process(21, exe: "/usr/bin/sesame", namespace: 1, parent: 20, arguments: token)
        // A person at a terminal: bash (interactive, reading the terminal) → sesame token.
        try fake.process(30, exe: "/usr/bin/bash", namespace: 1, parent: 2, arguments: ["bash"], standardInput: terminal)
        try fake.process(31, exe: "/usr/bin/sesame", namespace: 1, parent: 30, arguments: token)
        // A script the person wrote, run by neomutt: neomutt → sh -c → bash script → sesame token.
        try fake.process(40, exe: "/usr/bin/neomutt", namespace: 1, parent: 2, arguments: ["neomutt"])
        try fake.process(41, exe: "/usr/bin/dash", namespace: 1, parent: 40, arguments: ["sh", "-ec", "~/bin/mail-token"])
        try fake.process(42, exe: "/usr/bin/bash", namespace: 1, parent: 41, arguments: ["/bin/bash", "/home/u/bin/mail-token"])
        try fake.process(43, exe: "/usr/bin/sesame", namespace: 1, parent: 42, arguments: token)
        // Not `sesame token`: the window asking for itself.
        try fake.process(50, exe: "/usr/bin/sesame", namespace: 1, parent: 20, arguments: ["/usr/bin/sesame", "accounts"])
        // `echo "sesame token …" | bash` from a script: bash reads a pipe, even with -i; the script is asked about.
        try fake.process(60, exe: "/usr/bin/python3.11", namespace: 1, parent: 2, arguments: ["python3", "/home/u/hostile.py"])
        try fake.process(61, exe: "/usr/bin/bash", namespace: 1, parent: 60, arguments: ["bash", "-i"], standardInput: "/dev/null")
        try fake.process(62, exe: "/usr/bin/sesame", namespace: 1, parent: 61, arguments: token)
        // A parent that is gone (or another user's): nobody can be named, and it is not a person.
        try fake.process(70, exe: "/usr/bin/sesame", namespace: 1, parent: 9999, arguments: token)
        let identification = fake.identification
        let requester = { (pid: Int32) -> Caller? in
            guard case .program(let caller)? = identification.tokenCommandRequester(pid) else { return nil }
            return caller
        }
        #expect(requester(12)?.program == .executable("/usr/bin/mbsync"))
        #expect(requester(12)?.processID == 10)
        #expect(requester(12)?.context.ranCommand == true, "a decision for mbsync covers the commands it runs")
        #expect(requester(21)?.program == .executable("/usr/bin/msmtp"))
        #expect(identification.tokenCommandRequester(31) == .person, "typed by the person")
        #expect(requester(43)?.program == .executable("/usr/bin/neomutt"))
        #expect(identification.tokenCommandRequester(50) == nil)
        #expect(requester(62)?.program == .executable("/usr/bin/python3.11"), "a shell reading a pipe is no person")
        #expect(requester(62)?.program.reach == .interpreter)
        #expect(identification.tokenCommandRequester(70) == .unknown)
    }

    @Test(
        "a program driving a pseudo-terminal of its own (`bash -i` on it, `sesame token` written in) passes for the person: the kernel cannot tell it from a terminal window"
    )
    func programDrivingATerminal() throws {
        let fake = FakeProc()
        defer { fake.remove() }
        try FileManager.default.createDirectory(at: fake.proc.appending(path: "self/ns"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: fake.proc.appending(path: "self/ns/mnt").path, withDestinationPath: "mnt:[1]")
        let token = ["/usr/bin/sesame", "token", "--account-type", "work"]
        // A terminal window: gnome-terminal-server holds the master, bash leads the session on the follower.
        try fake.process(10, exe: "/usr/libexec/gnome-terminal-server", namespace: 1, parent: 2, arguments: ["gnome-terminal-server"])
        try fake.process(11, exe: "/usr/bin/bash", namespace: 1, parent: 10, arguments: ["bash"], standardInput: "/dev/tty")
        try fake.process(12, exe: "/usr/bin/sesame", namespace: 1, parent: 11, arguments: token)
        // A Python program that opened the pseudo-terminal itself (pty.openpty), started `bash -i`
        // on it and wrote the command into the master: the same shape, another holder.
        try fake.process(20, exe: "/usr/bin/python3.11", namespace: 1, parent: 2, arguments: ["python3", "/tmp/drive.py"])
        try fake.process(21, exe: "/usr/bin/bash", namespace: 1, parent: 20, arguments: ["bash", "-i"], standardInput: "/dev/tty")
        try fake.process(22, exe: "/usr/bin/sesame", namespace: 1, parent: 21, arguments: token)
        let identification = fake.identification
        #expect(identification.tokenCommandRequester(12) == .person)
        // What SECURITY.md's row says: naming the master's holder would not close this (terminal
        // emulators type what other programs send them: tmux send-keys, wezterm cli send-text,
        // Konsole's sendText), so Sesame does not pretend to; it is the person's, as it was.
        #expect(identification.tokenCommandRequester(22) == .person)
    }

    @Test("a script run by an interpreter is the interpreter: what its command line names is only a hint, however it is written")
    func scripts() throws {
        let fake = FakeProc()
        defer { fake.remove() }
        try FileManager.default.createDirectory(at: fake.proc.appending(path: "self/ns"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: fake.proc.appending(path: "self/ns/mnt").path, withDestinationPath: "mnt:[1]")
        let home = fake.root.appending(path: "home")
        try FileManager.default.createDirectory(at: home.appending(path: "bin"), withIntermediateDirectories: true)
        for name in ["bin/mail-app.py", "bin/teams.py"] { try Data("print()\n".utf8).write(to: home.appending(path: name)) }
        func run(_ pid: Int, _ exe: String, _ arguments: [String], in folder: URL) throws {
            try fake.process(pid, exe: exe, namespace: 1, arguments: arguments)
            try FileManager.default.createSymbolicLink(
                atPath: fake.proc.appending(path: "\(pid)/cwd").path, withDestinationPath: folder.path)
        }
        let allowed = home.appending(path: "bin/mail-app.py").path
        try run(10, "/usr/bin/python3.11", ["python3", "-u", "-X", "dev", "bin/mail-app.py", "--flag"], in: home)
        try run(11, "/usr/bin/python3.11", ["python3", home.appending(path: "bin/teams.py").path], in: fake.root)
        try run(12, "/usr/bin/python3.11", ["python3", "-c", "import msal"], in: home)
        try run(13, "/usr/bin/python3.11", ["python3"], in: home)
        // The three ways another script passed for an allowed one: its own argv rewritten (as
        // /proc/self/mem leaves it), `-Sc` code naming the file in a comment, `-I` before it.
        try run(14, "/usr/bin/python3.11", ["python3", allowed], in: home)
        try run(15, "/usr/bin/python3.11", ["python3", "-Sc", "exec(open('/tmp/hostile.py').read())#/../\(allowed)"], in: home)
        try run(16, "/usr/bin/python3.11", ["python3", "-I", "/tmp/hostile.py", allowed], in: home)
        try run(17, "/usr/bin/node", ["node", "bin/teams.py"], in: home)
        let identification = fake.identification
        for pid: Int32 in [10, 11, 12, 13, 14, 15, 16] {
            #expect(identification.caller(pid)?.program == .executable("/usr/bin/python3.11"), "process \(pid) is python")
            #expect(identification.caller(pid)?.program.reach == .interpreter)
        }
        #expect(identification.caller(17)?.program == .executable("/usr/bin/node"))
        // The hint is what the command line says — shown, marked as the program's own words.
        #expect(identification.caller(10)?.context.claimedScript == allowed)
        #expect(identification.caller(12)?.context.claimedScript == "", "code from -c names no file")
        #expect(identification.caller(15)?.context.claimedScript == "", "combined flags with c are code, not a file")
        #expect(identification.caller(16)?.context.claimedScript == "/tmp/hostile.py", "-I takes no value")
        // An earlier version's decision for a script does not decode: it is dropped, never trusted.
        let old = Data(#"{"kind":"script","id":"\#(allowed)","interpreter":"/usr/bin/python3.11"}"#.utf8)
        #expect(throws: (any Error).self) { try JSONDecoder().decode(ProgramIdentity.self, from: old) }
        // Kept as decisions are kept, and read back.
        let kept = try JSONEncoder().encode(try #require(identification.caller(10)?.program))
        #expect(try JSONDecoder().decode(ProgramIdentity.self, from: kept) == identification.caller(10)?.program)
    }

    @Test(
        "a browser's native host is the interpreter started by that browser: Always for it covers neither a Python program a shell started nor another browser's"
    )
    @MainActor
    func browserNativeHost() throws {
        let fake = FakeProc()
        defer { fake.remove() }
        try FileManager.default.createDirectory(at: fake.proc.appending(path: "self/ns"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: fake.proc.appending(path: "self/ns/mnt").path, withDestinationPath: "mnt:[1]")
        let python = "/usr/bin/python3.11"
        let firefox = "/usr/lib/firefox-esr/firefox-esr"
        let host = ["python3", "/usr/lib/linux-entra-sso/linux-entra-sso.py", "/usr/lib/mozilla/native-messaging-hosts/x.json", "id"]
        // Firefox starts the extension's host (`#!/usr/bin/env python3`: env execs python3 in place).
        try fake.process(10, exe: firefox, namespace: 1, parent: 2, arguments: ["firefox-esr"])
        try fake.process(11, exe: python, namespace: 1, parent: 10, arguments: host)
        // The same script, with the same arguments, run from a shell: a Python program of the user's.
        try fake.process(20, exe: "/usr/bin/bash", namespace: 1, parent: 2, arguments: ["bash"])
        try fake.process(21, exe: python, namespace: 1, parent: 20, arguments: host)
        // Chromium's host; and a program a browser started that is no interpreter is itself.
        try fake.process(30, exe: "/usr/lib/chromium/chromium", namespace: 1, parent: 2, arguments: ["chromium"])
        try fake.process(31, exe: python, namespace: 1, parent: 30, arguments: host)
        try fake.process(32, exe: "/usr/bin/entra-host", namespace: 1, parent: 30, arguments: ["entra-host"])
        // A browser in a namespace of its own (bwrap over another file) vouches for nothing.
        try fake.process(40, exe: firefox, namespace: 7, parent: 2, arguments: ["firefox-esr"])
        try fake.process(41, exe: python, namespace: 1, parent: 40, arguments: host)
        let identification = fake.identification
        let native = try #require(identification.caller(11)?.program)
        #expect(native == .executable(python, startedBy: firefox))
        #expect(native.reach == .interpreter)
        #expect(native.name == "python3.11 (firefox-esr)")
        #expect(identification.caller(21)?.program == .executable(python))
        #expect(identification.caller(31)?.program == .executable(python, startedBy: "/usr/lib/chromium/chromium"))
        #expect(identification.caller(32)?.program == .executable("/usr/bin/entra-host"))
        #expect(identification.caller(41)?.program == .executable(python))

        // The user's Always for the browser's single sign-on, kept and read again.
        let file = fake.root.appending(path: "program-access.json")
        let request = { (program: ProgramIdentity) in
            AccessRequest(
                program: program, accountType: "device", homeAccountID: "oid.tid", username: "alex@contoso.com", resource: "",
                scopes: ["Sign you in to every site and app of your organization as this computer (single sign-on)"])
        }
        ProgramAccess(file: file).record(.always, for: request(native))
        let kept = ProgramAccess(file: file)
        #expect(kept.decision(for: request(native)) == .allowed)
        for pid: Int32 in [21, 31, 41] {
            let other = try #require(identification.caller(pid)?.program)
            #expect(kept.decision(for: request(other)) == .undecided, "process \(pid), \(other), is covered by firefox's host's Always")
        }
        // The question names the browser and what Always covers.
        let question = AccessQuestionText(request(native)).origin
        #expect(question.contains("started by \u{2068}firefox-esr\u{2069}"), "\(question)")
        #expect(question.contains("Always covers the programs it runs when \u{2068}firefox-esr\u{2069} starts it"), "\(question)")
        #expect(question.hasPrefix("The program /usr/bin/python3.11, started by /usr/lib/firefox-esr/firefox-esr\n"), "\(question)")
    }

    @Test("this very process: its executable, and a fingerprint that holds between two reads")
    func ownProcess() throws {
        let identification = ProcessIdentification()
        let pid = ProcessInfo.processInfo.processIdentifier
        let me = try #require(identification.caller(pid))
        #expect(me.program.kind == .executable)
        #expect(me.program.id == (try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")))
        #expect(identification.fingerprint(pid) == me.fingerprint)
    }
}

/// The questions a test answers: each answer in turn, counting what was asked.
@MainActor
final class ScriptedQuestions: AccessQuestioner {
    var answers: [AccessAnswer?]
    private(set) var asked: [AccessRequest] = []
    /// Holds every question until released (so that concurrent requests pile up on it).
    var holding = false

    init(_ answers: [AccessAnswer?]) { self.answers = answers }

    func ask(_ request: AccessRequest) async -> AccessAnswer? {
        asked.append(request)
        while holding { await Task.yield() }
        return answers.isEmpty ? nil : answers.removeFirst()
    }
}

@MainActor
@Suite("The account service's decisions (no bus)")
struct AccountServiceTests {
    static let tool = ProgramIdentity.executable("/opt/a/tool")!
    static let sameName = ProgramIdentity.executable("/opt/b/tool")!
    static let sesame = ProgramIdentity.executable("/usr/bin/sesame")!

    static func signedIn() async throws -> (SamplesFixture, AccountService) {
        let fixture = try await SamplesFixture()
        _ = await fixture.session(.directory).signIn()
        let service = AccountService(
            store: fixture.model.store, accountTypes: fixture.model.samples.map(\.accountType), trace: fixture.trace,
            access: ProgramAccess(file: nil), trusted: [sesame])
        return (fixture, service)
    }

    @Test("a program sees only the accounts it was allowed: none before, its own after; Sesame's commands all; never a token")
    func listing() async throws {
        let (fixture, service) = try await Self.signedIn()
        defer { fixture.remove() }
        #expect(try await service.accounts(for: Self.tool).isEmpty, "an undecided program saw an account")
        let all = try await service.accounts(for: Self.sesame)
        #expect(all.count == 1)
        #expect(all.first?.accountType == "myGraphService")
        #expect(all.first?.username == fixture.provider.username)
        #expect(String(describing: all).contains("eyJ") == false)
        let questions = ScriptedQuestions([.always])
        service.questioner = questions
        _ = try await service.accessToken(for: Self.tool, accountType: "myGraphService", username: "", scopes: [])
        #expect(try await service.accounts(for: Self.tool).map(\.username) == [fixture.provider.username])
        #expect(try await service.accounts(for: Self.sameName).isEmpty)
    }

    @Test("the first request asks with the permissions the token carries; Allow once asks again next time; Always does not")
    func firstRequestAsks() async throws {
        let (fixture, service) = try await Self.signedIn()
        defer { fixture.remove() }
        let questions = ScriptedQuestions([.allowOnce, .always])
        service.questioner = questions
        let first = try await service.accessToken(for: Self.tool, accountType: "myGraphService", username: "", scopes: [])
        #expect(!first.secret.revealed.isEmpty)
        _ = try await service.accessToken(for: Self.tool, accountType: "myGraphService", username: "", scopes: [])
        _ = try await service.accessToken(for: Self.tool, accountType: "myGraphService", username: "", scopes: [])
        #expect(questions.asked.count == 2)
        #expect(questions.asked.first?.scopes == first.scopes, "the question shows what the token carries")
    }

    @Test("a program allowed one permission is asked again when the token would carry more, and the question lists the whole grant")
    func grantThatGrewAsksAgain() async throws {
        let (fixture, service) = try await Self.signedIn()
        defer { fixture.remove() }
        fixture.provider.echoesScope = true
        let questions = ScriptedQuestions([.always, .always])
        service.questioner = questions
        // The provider grants what is asked: a token for User.Read alone, which the user allows.
        fixture.provider.clock.advance(by: 3600)
        let narrow = try await service.accessToken(for: Self.tool, accountType: "myGraphService", username: "", scopes: ["User.Read"])
        #expect(ScopeResource.shown(narrow.scopes) == ["User.Read"])
        #expect(questions.asked.last?.scopes == ["User.Read"])
        // Now the grant is wider (the window asked for more; the cache answers the widest token):
        // the same request for User.Read would get User.Read and User.ReadBasic.All.
        fixture.provider.clock.advance(by: 3600)
        _ = try await service.accessToken(
            for: Self.sesame, accountType: "myGraphService", username: "", scopes: ["User.Read", "User.ReadBasic.All"])
        let wide = try await service.accessToken(for: Self.tool, accountType: "myGraphService", username: "", scopes: ["User.Read"])
        #expect(Set(wide.scopes.map { $0.lowercased() }) == ["user.read", "user.readbasic.all"])
        #expect(questions.asked.count == 2, "the wider token was handed over without a question")
        let again = try #require(questions.asked.last)
        #expect(Set(again.scopes.map { $0.lowercased() }) == ["user.read", "user.readbasic.all"], "the question hid a permission")
        #expect(again.newScopes.map { $0.lowercased() } == ["user.readbasic.all"])
    }

    @Test(
        "Deny, no answer and no window refuse without naming the account; a revoked decision asks again; another path is asked separately")
    func denied() async throws {
        let (fixture, service) = try await Self.signedIn()
        defer { fixture.remove() }
        await #expect(throws: AccountServiceError.self) {
            try await service.accessToken(for: Self.tool, accountType: "myGraphService", username: "", scopes: [])
        }
        let questions = ScriptedQuestions([.deny, .always, nil])
        service.questioner = questions
        for _ in 0..<2 {
            do {
                _ = try await service.accessToken(for: Self.tool, accountType: "myGraphService", username: "", scopes: [])
                Issue.record("a denied program got a token")
            } catch {
                #expect(error.kind == .accessDenied)
                #expect(error.name == "org.sesame.Accounts1.Error.AccessDenied")
                #expect(!error.message.contains(fixture.provider.username), "the refusal named the account")
            }
        }
        #expect(questions.asked.count == 1, "Deny is kept")
        service.access.revoke(try #require(service.access.all.first))
        _ = try await service.accessToken(for: Self.tool, accountType: "myGraphService", username: "", scopes: [])
        #expect(questions.asked.count == 2)
        await #expect(throws: AccountServiceError.self) {
            try await service.accessToken(for: Self.sameName, accountType: "myGraphService", username: "", scopes: [])
        }
        #expect(questions.asked.count == 3)
        #expect(questions.asked.last?.program == Self.sameName)
    }

    @Test("a guessed user name: an undecided program hears the same refusal whether it exists or not; Sesame's commands hear which")
    func guessedNames() async throws {
        let (fixture, service) = try await Self.signedIn()
        defer { fixture.remove() }
        let questions = ScriptedQuestions([.deny])
        service.questioner = questions
        var refusals: [String] = []
        for guess in [fixture.provider.username, "nobody@contoso.com"] {
            do {
                _ = try await service.accessToken(for: Self.tool, accountType: "myGraphService", username: guess, scopes: [])
            } catch {
                refusals.append(error.description)
                #expect(!error.message.contains("nobody") && !error.message.contains(fixture.provider.username))
            }
        }
        #expect(refusals.count == 2 && refusals[0] == refusals[1], "\(refusals)")
        // The user was asked about the account that exists (and said Deny), never about a guess.
        #expect(questions.asked.map(\.username) == [fixture.provider.username])
        await #expect(throws: AccountServiceError(.noSuchAccount, "nobody@contoso.com is not signed in for myGraphService.")) {
            try await service.accessToken(for: Self.sesame, accountType: "myGraphService", username: "nobody@contoso.com", scopes: [])
        }
    }

    @Test("Sesame's own commands are not asked; bad arguments (invisible characters, two resources) are InvalidArgument")
    func trustedAndArguments() async throws {
        let (fixture, service) = try await Self.signedIn()
        defer { fixture.remove() }
        _ = try await service.accessToken(for: Self.sesame, accountType: "myGraphService", username: "", scopes: [])
        let cases: [(String, String, [String], AccountServiceError.Kind)] = [
            ("", "", [], .invalidArgument),
            (String(repeating: "x", count: 600), "", [], .invalidArgument),
            ("myGraphService", "a\u{7}b", [], .invalidArgument),
            ("myGraphService", "", ["User.Read\u{202E}"], .invalidArgument),
            ("myGraphService", "", ["User\u{200B}.Read"], .invalidArgument),
            ("myGraphService", "", ["has space"], .invalidArgument),
            ("myGraphService", "", ["User.Read", "https://outlook.office.com/SMTP.Send"], .invalidArgument),
            ("myGraphService", "", Array(repeating: "s", count: 40), .invalidArgument),
            ("noSuchType", "", [], .unknownAccountType),
            ("myGraphService", "nobody@contoso.com", [], .noSuchAccount),
            ("B2C_Acccount", "", [], .noSuchAccount),
        ]
        for (accountType, username, scopes, kind) in cases {
            do {
                _ = try await service.accessToken(for: Self.sesame, accountType: accountType, username: username, scopes: scopes)
                Issue.record("no error for \(accountType.prefix(20)) \(username) \(scopes.prefix(2))")
            } catch {
                #expect(error.kind == kind, "\(error)")
            }
        }
    }

    @Test(
        "one question per program: its other requests meanwhile are Busy; at most a few programs wait; nothing for an unverified one is kept"
    )
    func busy() async throws {
        let (fixture, service) = try await Self.signedIn()
        defer { fixture.remove() }
        let questions = ScriptedQuestions(Array(repeating: .allowOnce, count: 10))
        questions.holding = true
        service.questioner = questions
        let programs = (1...(AccountService.maximumPendingQuestions + 1)).map { ProgramIdentity.executable("/opt/p\($0)/tool")! }
        let pending = programs.prefix(AccountService.maximumPendingQuestions).map { program in
            Task { try await service.accessToken(for: program, accountType: "myGraphService", username: "", scopes: []) }
        }
        try await until { questions.asked.count == AccountService.maximumPendingQuestions }
        // Meanwhile: the first program again (twice), and one program too many.
        for program in [programs[0], programs[0], programs.last!] {
            do {
                _ = try await service.accessToken(for: program, accountType: "myGraphService", username: "", scopes: [])
                Issue.record("\(program) got a token while the user was being asked")
            } catch {
                #expect(error.kind == .busy, "\(error)")
            }
        }
        questions.holding = false
        for request in pending { _ = try await request.value }
        #expect(questions.asked.count == AccountService.maximumPendingQuestions, "a second question for one program")

        // An unverified program is asked every time; Always is not kept for it.
        let unverified = ProgramIdentity.unverified(claiming: Self.tool.id)!
        let asking = ScriptedQuestions([.always, .deny])
        service.questioner = asking
        _ = try await service.accessToken(for: unverified, accountType: "myGraphService", username: "", scopes: [])
        await #expect(throws: AccountServiceError.self) {
            try await service.accessToken(for: unverified, accountType: "myGraphService", username: "", scopes: [])
        }
        #expect(asking.asked.count == 2)
        #expect(service.access.all.isEmpty)
    }

    @Test("SignIn for a signed-in account asks as GetAccessToken does, and answers an allowed program without asking again")
    func signInAsks() async throws {
        let (fixture, service) = try await Self.signedIn()
        defer { fixture.remove() }
        let questions = ScriptedQuestions([.deny, .always])
        service.questioner = questions
        await #expect(throws: AccountServiceError(.accessDenied, "The user did not allow this program to use that account.")) {
            try await service.signIn(for: Self.tool, accountType: "myGraphService")
        }
        #expect(questions.asked.count == 1)
        let account = try await service.signIn(for: Self.sameName, accountType: "myGraphService")
        #expect(account.username == fixture.provider.username)
        _ = try await service.signIn(for: Self.sameName, accountType: "myGraphService")
        #expect(questions.asked.count == 2, "an allowed program was asked again")
    }

    @Test("concurrent requests from several allowed programs share one refresh")
    func concurrentRequestsShareOneRefresh() async throws {
        let (fixture, service) = try await Self.signedIn()
        defer { fixture.remove() }
        let programs = (1...4).map { ProgramIdentity.executable("/opt/p\($0)/tool")! }
        let questions = ScriptedQuestions(Array(repeating: .always, count: programs.count))
        service.questioner = questions
        // The token endpoint answers the scopes granted, as Entra does: a caller that comes after
        // the refresh has ended finds its token in the cache instead of redeeming again.
        fixture.provider.echoesScope = true
        for program in programs {
            _ = try await service.accessToken(for: program, accountType: "myGraphService", username: "", scopes: [])
        }
        fixture.provider.clock.advance(by: 3600)
        let before = fixture.provider.refreshCount
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for program in programs {
                for _ in 0..<5 {
                    group.addTask {
                        try await service.accessToken(for: program, accountType: "myGraphService", username: "", scopes: []).secret.revealed
                    }
                }
            }
            var all: [String] = []
            for try await token in group { all.append(token) }
            return all
        }
        #expect(tokens.count == 20)
        #expect(Set(tokens).count == 1)
        #expect(fixture.provider.refreshCount - before == 1)
        #expect(questions.asked.count == programs.count, "one question per program")
    }

    @Test("a program allowed always may sign the account out; one never allowed may not, and is not told whose it is")
    func signingOut() async throws {
        let (fixture, service) = try await Self.signedIn()
        defer { fixture.remove() }
        let questions = ScriptedQuestions([.always])
        service.questioner = questions
        do {
            try await service.signOut(for: Self.tool, accountType: "myGraphService", username: "")
            Issue.record("a program never allowed signed the account out")
        } catch {
            #expect(error.kind == .accessDenied && !error.message.contains(fixture.provider.username))
        }
        _ = try await service.accessToken(for: Self.tool, accountType: "myGraphService", username: "", scopes: [])
        try await service.signOut(for: Self.tool, accountType: "myGraphService", username: "")
        #expect(try await service.accounts(for: Self.sesame).isEmpty)
        withExtendedLifetime(questions) {}
    }
}
