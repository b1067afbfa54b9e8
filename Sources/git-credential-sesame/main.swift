import Foundation
import SesameGtk
import SesameSamples

// git-credential-sesame: git's credential helper (`credential.helper=sesame`). For a host that
// `$XDG_CONFIG_HOME/sesame/git.conf` maps to an account type, `get` answers with a fresh access
// token as the password — the way Azure Repos takes a Microsoft Entra token — from Sesame's
// account service, which asks the user the first time this program wants the account (and is
// started by D-Bus activation when no Sesame runs). `store` and `erase` keep nothing: the token
// is Sesame's. A host not in the file gets no answer (git asks its other helpers, or the user).
// A refusal answers with no usable password, so git fails as for any refused credential
// ("Authentication failed") rather than prompting for a password nobody has.

let action = CommandLine.arguments.dropFirst().first ?? ""
let input = FileHandle.standardInput.readData(ofLength: GitCredential.maximumInput)
let attributes = GitCredential.parse(String(decoding: input, as: UTF8.self))
guard action == "get", let host = attributes["host"],
    let entry = GitHosts.load(from: GitHosts.defaultFile(environment: ProcessInfo.processInfo.environment)).entry(forHost: host)
else { exit(0) }

let username = attributes["username"] ?? "sesame"
let outcome: Result<[DBusValue], DBusError>? = MainActor.assumeIsolated {
    guard let client = DBusClient() else { return nil }
    return Result { () throws(DBusError) -> [DBusValue] in
        try client.call(
            "org.sesame.Sesame", path: "/org/sesame/Sesame", interface: "org.sesame.Accounts1", method: "GetAccessToken",
            arguments: [.string(entry.accountType), .string(""), .strings(entry.scopes)], startService: true, timeout: nil)
    }
}
switch outcome {
case .success(let values)?:
    guard case .string(let token)? = values.first, case .int64(let expiresAt)? = values.dropFirst().first else { exit(1) }
    print(GitCredential.answer([("username", username), ("password", token), ("password_expiry_utc", String(expiresAt))]), terminator: "")
case .failure(let error)?:
    FileHandle.standardError.write(Data("git-credential-sesame: \(host): \(error.message)\n".utf8))
    print(GitCredential.answer([("username", username), ("password", "")]), terminator: "")
case nil:
    FileHandle.standardError.write(Data("git-credential-sesame: no session bus: Sesame cannot be asked.\n".utf8))
}
