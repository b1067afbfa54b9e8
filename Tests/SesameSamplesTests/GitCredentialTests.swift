import Foundation
import SesameGit
import SesameSamples
import SesameWindowModel
import Testing

@Suite("git's credential protocol and git.conf (hostile input)")
struct GitCredentialTests {
    @Test("attributes up to the blank line; the first of each key; odd lines ignored")
    func parsing() {
        let read = GitCredential.parse("protocol=https\nhost=dev.azure.com\nhost=evil\nnonsense\npath=a=b\n\nhost=after\n")
        #expect(read == ["protocol": "https", "host": "dev.azure.com", "path": "a=b"])
        #expect(GitCredential.answer([("username", "u"), ("password", "a\nhost=evil")]) == "username=u\n")
    }

    static let conf = GitRemotes(
        parsing: """
            # comment
            Dev.Azure.com  myGraphService  499b/.default # Azure Repos, any path
            https://git.contoso.com/team/app  contosoGit  api://git/.default
            git.contoso.com  contosoAll
            lonely
            http://dev.example.com  t --allow-plain-http
            http://127.0.0.1:8080  t
            http://127.0.0.1:9090/repo.git  loopbackTests --allow-plain-http
            ssh://dev.azure.com  t
            127.0.0.1:8443 t --everything
            """)

    static func decide(_ attributes: [String: String], action: String = "get") -> GitCredential.Decision {
        GitCredential.decide(action: action, attributes: attributes, remotes: conf)
    }

    @Test("git.conf: hosts (with a port) and https URLs with a path; http only on loopback and opted in; bad lines say why")
    func remotes() {
        let remotes = Self.conf.remotes.map { "\($0.scheme)://\($0.host)/\($0.pathPrefix) \($0.accountType) \($0.scopes)" }
        #expect(
            remotes == [
                "https://dev.azure.com/ myGraphService [\"499b/.default\"]",
                "https://git.contoso.com/team/app contosoGit [\"api://git/.default\"]",
                "https://git.contoso.com/ contosoAll []", "http://127.0.0.1:9090/repo.git loopbackTests []",
            ])
        #expect(Self.conf.problems.count == 5, "\(Self.conf.problems)")
        #expect(Self.conf.problems.contains { $0.hasPrefix("git.conf line 5:") && $0.contains("account type") })
        #expect(Self.conf.problems.contains { $0.hasPrefix("git.conf line 6:") && $0.contains("only to this computer") })
        #expect(Self.conf.problems.contains { $0.hasPrefix("git.conf line 7:") && $0.contains("--allow-plain-http") })
        #expect(GitRemotes.defaultFile(environment: ["XDG_CONFIG_HOME": "/x"]).path == "/x/sesame/git.conf")
    }

    @Test("a token only for https (or opted-in loopback http), for a listed host; never for http to a listed https host")
    func onlyOverHTTPS() {
        guard case .ask(let azure) = Self.decide(["protocol": "https", "host": "dev.azure.com"]) else {
            Issue.record("no token for a listed https host")
            return
        }
        #expect(azure.accountType == "myGraphService")
        guard case .stayQuiet(let note?) = Self.decide(["protocol": "http", "host": "dev.azure.com"]) else {
            Issue.record("plain http to a listed host was answered, or silently refused")
            return
        }
        #expect(note.contains("only over HTTPS"))
        #expect(Self.decide(["protocol": "https", "host": "unlisted.example"]) == .stayQuiet(note: nil))
        #expect(Self.decide(["protocol": "ssh", "host": "dev.azure.com"]) == .stayQuiet(note: nil))
        #expect(Self.decide(["host": "dev.azure.com"]) == .stayQuiet(note: nil), "no protocol: no answer")
        #expect(Self.decide(["protocol": "https", "host": "127.0.0.1:9090"]) == .stayQuiet(note: nil), "https is not the listed http")
        guard case .ask(let loopback) = Self.decide(["protocol": "http", "host": "127.0.0.1:9090", "path": "repo.git"]) else {
            Issue.record("the opted-in loopback http remote was not answered")
            return
        }
        #expect(loopback.accountType == "loopbackTests")
    }

    @Test("paths: the longest listed prefix wins, whole segments; a listed path without git's path says how to send it")
    func paths() {
        func accountType(_ path: String?) -> String? {
            var attributes = ["protocol": "https", "host": "git.contoso.com"]
            attributes["path"] = path
            if case .ask(let remote) = Self.decide(attributes) { return remote.accountType }
            return nil
        }
        #expect(accountType("team/app") == "contosoGit")
        #expect(accountType("/team/app/sub.git") == "contosoGit")
        #expect(accountType("team/application") == "contosoAll", "a prefix is whole segments")
        #expect(accountType(nil) == "contosoAll")
        let pathOnly = GitRemotes(parsing: "https://git.example.com/team x\n")
        guard
            case .stayQuiet(let note?) = GitCredential.decide(
                action: "get", attributes: ["protocol": "https", "host": "git.example.com"], remotes: pathOnly)
        else {
            Issue.record("a path-only remote answered without git's path")
            return
        }
        #expect(note.contains("useHttpPath"))
    }

    @Test("store and erase keep nothing and say nothing, as git expects; unknown actions too")
    func storeAndErase() {
        for action in ["store", "erase", "capability", ""] {
            #expect(Self.decide(["protocol": "https", "host": "dev.azure.com", "password": "x"], action: action) == .stayQuiet(note: nil))
        }
    }
}
