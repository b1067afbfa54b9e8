import Foundation
import SesameSamples
import Testing

@Suite("git's credential protocol and git.conf (hostile input)")
struct GitCredentialTests {
    @Test("attributes up to the blank line; the first of each key; odd lines ignored")
    func parsing() {
        let read = GitCredential.parse("protocol=https\nhost=dev.azure.com\nhost=evil\nnonsense\npath=a=b\n\nhost=after\n")
        #expect(read == ["protocol": "https", "host": "dev.azure.com", "path": "a=b"])
        #expect(GitCredential.answer([("username", "u"), ("password", "a\nhost=evil")]) == "username=u\n")
    }

    @Test("git.conf maps hosts (with a port) to an account type and scopes; comments and short lines are skipped")
    func hosts() {
        let hosts = GitHosts(parsing: "# comment\nDev.Azure.com  myGraphService  499b/.default # Azure Repos\nlonely\n127.0.0.1:8080 t\n")
        #expect(hosts.entry(forHost: "dev.azure.com") == .init(accountType: "myGraphService", scopes: ["499b/.default"]))
        #expect(hosts.entry(forHost: "127.0.0.1:8080")?.accountType == "t")
        #expect(hosts.entry(forHost: "lonely") == nil)
        #expect(GitHosts.defaultFile(environment: ["XDG_CONFIG_HOME": "/x"]).path == "/x/sesame/git.conf")
    }
}
