import FoundationEssentials
import Glibc
import SesameGIO
import SesameGit
import SesameSystem

// git-credential-sesame: git's credential helper (`credential.helper=sesame`). For a remote that
// `$XDG_CONFIG_HOME/sesame/git.conf` lists, `get` answers with a fresh access token as the
// password — the way Azure Repos takes a Microsoft Entra token — from Sesame's account service,
// which asks the user the first time this program wants the account (and is started by D-Bus
// activation when no Sesame runs). Only over HTTPS: for `protocol=http` git would send the token
// unencrypted (plain HTTP only to this computer, opted in line by line). `store` and `erase` keep
// and forget nothing — the token is Sesame's — and, as git expects of them, print nothing. A
// remote not in the file gets no answer (git asks its other helpers, or the user). A refusal
// answers with no usable password, so git fails as for any refused credential ("Authentication
// failed") rather than prompting for a password nobody has.

let action = CommandLine.arguments.dropFirst().first ?? ""
let input = Posix.readStandardInput(limit: GitCredential.maximumInput)
let attributes = GitCredential.parse(String(decoding: input, as: UTF8.self))
let remotes = GitRemotes.load(from: GitRemotes.defaultFile(environment: ProcessInfo.processInfo.environment))

func warn(_ message: String) {
    Posix.writeStandardError("git-credential-sesame: \(message)\n")
}

let remote: GitRemotes.Remote
switch GitCredential.decide(action: action, attributes: attributes, remotes: remotes) {
case .stayQuiet(let note):
    if let note {
        warn(note)
        for problem in remotes.problems { warn(problem) }
    }
    exit(0)
case .ask(let match):
    remote = match
}

let username = attributes["username"] ?? "sesame"
let outcome: Result<[DBusValue], DBusError>? = MainActor.assumeIsolated {
    guard let client = DBusClient() else { return nil }
    return Result { () throws(DBusError) -> [DBusValue] in
        try client.call(
            "org.sesame.Sesame", path: "/org/sesame/Sesame", interface: "org.sesame.Accounts1", method: "GetAccessToken",
            arguments: [.string(remote.accountType), .string(""), .strings(remote.scopes)], startService: true, timeout: nil)
    }
}
switch outcome {
case .success(let values)?:
    guard case .string(let token)? = values.first, case .int64(let expiresAt)? = values.dropFirst().first else { exit(1) }
    print(GitCredential.answer([("username", username), ("password", token), ("password_expiry_utc", String(expiresAt))]), terminator: "")
case .failure(let error)?:
    warn("\(remote.host): \(error.message)")
    print(GitCredential.answer([("username", username), ("password", "")]), terminator: "")
case nil:
    warn("no session bus: Sesame cannot be asked.")
}
