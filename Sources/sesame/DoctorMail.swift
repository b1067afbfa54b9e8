import FoundationEssentials
import SesameCore

/// `sesame doctor --mail URL`: whether an account's token opens a mailbox — the permission
/// granted, the token's audience (Exchange Online's, not Graph's), and a real sign-in to the
/// server with SASL XOAUTH2. This part asks for a token (silently) and signs in to the server;
/// nothing secret is printed.
struct DoctorMail {
    /// A line of the report: OK, FIX or `--`, a subject, a sentence.
    struct Line: Equatable {
        enum Mark: String {
            case ok = "OK "
            case fix = "FIX"
            case notChecked = "-- "
        }
        let mark: Mark
        let subject: String
        let text: String
    }

    let store: AccountStore
    let accountType: String
    let username: String?
    let servers: [MailServerAddress]
    var probe = MailServerProbe()

    /// The checks, in order; a later one is `--` when an earlier one failed.
    func lines() async -> [Line] {
        var lines: [Line] = []
        let accounts = (try? await store.accounts(ofType: accountType)) ?? []
        let account: Account
        if let username {
            guard let match = accounts.first(where: { $0.username.equalsIgnoringCase(username) }) else {
                return [
                    Line(
                        mark: .fix, subject: "account",
                        text:
                            "\(username) is not signed in for \(accountType): run `sesame login --account-type \(accountType) --scope mail`."
                    )
                ]
            }
            account = match
        } else {
            guard accounts.count == 1, let only = accounts.first else {
                let text =
                    accounts.isEmpty
                    ? "nobody is signed in for \(accountType): run `sesame login --account-type \(accountType) --scope mail`."
                    : "\(accountType) has several accounts: name one with --account."
                return [Line(mark: .fix, subject: "account", text: text)]
            }
            account = only
        }
        lines.append(Line(mark: .ok, subject: "account", text: "\(account.username) (\(accountType))"))
        for server in servers {
            let scope = server.mailScope
            let token: AccessToken
            do {
                token = try await store.accessToken(for: account, scopes: [scope.scope])
            } catch let error as AccountStoreError {
                let why =
                    error.serviceCode == "AADSTS65001"
                    ? "Sesame may not use \(scope.rawValue.uppercased()) for this account yet" : error.message
                lines.append(
                    Line(
                        mark: .fix, subject: "\(scope.rawValue) token",
                        text: "\(why). Run `sesame login --account-type \(accountType) --scope \(scope.rawValue)`."))
                lines.append(Line(mark: .notChecked, subject: server.description, text: "not checked (no token for it)"))
                continue
            } catch {
                lines.append(Line(mark: .fix, subject: "\(scope.rawValue) token", text: "\(error)"))
                continue
            }
            lines += Self.inspect(token, for: scope)
            switch await probe.signIn(to: server, user: account.username, token: token.secret) {
            case .accepted:
                lines.append(Line(mark: .ok, subject: server.description, text: "signed in with XOAUTH2 as \(account.username)"))
            case .refused(let said):
                lines.append(Line(mark: .fix, subject: server.description, text: "refused the token: \(said) " + Self.refusalAdvice))
            case .failed(let why): lines.append(Line(mark: .fix, subject: server.description, text: why))
            }
        }
        return lines
    }

    static let refusalAdvice =
        "Check that IMAP/SMTP AUTH is enabled for the mailbox (Exchange admin center → the mailbox → Email apps) and that the user name is the mailbox's."

    /// What the token carries: its audience (Exchange's resource) and the permission.
    static func inspect(_ token: AccessToken, for scope: MailScope) -> [Line] {
        guard let parsed = try? JSONWebToken(compact: token.secret) else {
            return [Line(mark: .notChecked, subject: "token", text: "not checked (the token is not a JWT Sesame can read)")]
        }
        var lines: [Line] = []
        let audience: String? = if case .string(let value)? = parsed.claims["aud"] { value } else { nil }
        let graph = ["00000003-0000-0000-c000-000000000000", "https://graph.microsoft.com"]
        switch audience {
        case let audience? where MailScope.isExchange(audience + "/"):
            lines.append(Line(mark: .ok, subject: "token audience", text: "\(audience) (Exchange Online)"))
        case let audience? where graph.contains(audience):
            lines.append(
                Line(
                    mark: .fix, subject: "token audience",
                    text: "\(audience) is Microsoft Graph: a mailbox takes only Exchange Online's tokens. The portal lists IMAP and "
                        + "SMTP permissions under Microsoft Graph, but the token request must name Exchange's resource: \(scope.scope)."))
        default:
            lines.append(Line(mark: .fix, subject: "token audience", text: "\(audience ?? "none"), not Exchange Online's resource"))
        }
        let granted: [String] =
            if case .string(let value)? = parsed.claims["scp"] { value.split(separator: " ").map(String.init) } else { [] }
        let needed = String(scope.scope.split(separator: "/").last ?? "")
        if granted.contains(where: { $0.equalsIgnoringCase(needed) }) {
            lines.append(Line(mark: .ok, subject: "permissions granted", text: granted.joined(separator: " ")))
        } else {
            lines.append(
                Line(
                    mark: .fix, subject: "permissions granted",
                    text:
                        "\(granted.isEmpty ? "none" : granted.joined(separator: " ")), without \(needed): add it to the app registration's "
                        + "API permissions (Office 365 Exchange Online) and sign in again with --scope \(scope.rawValue)."))
        }
        return lines
    }
}
