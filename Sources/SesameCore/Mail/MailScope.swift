import FoundationEssentials

/// The permissions Exchange Online asks of a mail client: IMAP, POP and SMTP with OAuth (SASL
/// XOAUTH2 or OAUTHBEARER). They belong to Exchange's resource, not to Microsoft Graph — the
/// portal lists them under Graph, but a token request must name Exchange's resource
/// (`https://outlook.office.com/…`), and the token's `aud` is that resource.
public enum MailScope: String, Sendable, CaseIterable {
    /// Reading and changing mail over IMAP.
    case imap
    /// Reading mail over POP.
    case pop
    /// Sending mail over SMTP (submission).
    case smtp

    /// The resource the mail scopes are named under.
    public static let resource = "https://outlook.office.com"

    /// The scope, in full: `https://outlook.office.com/IMAP.AccessAsUser.All`.
    public var scope: String {
        switch self {
        case .imap: "\(Self.resource)/IMAP.AccessAsUser.All"
        case .pop: "\(Self.resource)/POP.AccessAsUser.All"
        case .smtp: "\(Self.resource)/SMTP.Send"
        }
    }

    /// The short names `sesame token --scope` and `sesame login --scope` take: each case's
    /// name, and `mail` for IMAP and SMTP together.
    public static let shortNames = ["imap", "pop", "smtp", "mail"]

    /// `name` as full scopes: a short name expanded (`imap`, `smtp`, `pop`, `mail`), and a mail
    /// permission named without its resource (`IMAP.AccessAsUser.All`, as the portal lists it
    /// under Microsoft Graph) qualified with Exchange's — Graph's token would open no mailbox;
    /// anything else as written.
    public static func expand(_ name: String) -> [String] {
        switch name.lowercased() {
        case "mail": return [MailScope.imap.scope, MailScope.smtp.scope]
        case let short:
            if let scope = MailScope(rawValue: short) { return [scope.scope] }
            if let bare = allCases.first(where: { String($0.scope.dropFirst(resource.count + 1)).lowercased() == short }) {
                return [bare.scope]
            }
            return [name]
        }
    }

    /// Whether `scope` is one of Exchange Online's (by its resource URI or app id).
    public static func isExchange(_ scope: String) -> Bool {
        let lower = scope.lowercased()
        return ["https://outlook.office.com/", "https://outlook.office365.com/", "00000002-0000-0ff1-ce00-000000000000/"]
            .contains { lower.hasPrefix($0) }
    }
}

/// An access token as a mail client hands it to the server: the SASL initial responses of
/// XOAUTH2 (Google's and Microsoft's) and OAUTHBEARER (RFC 7628), base64-encoded as they go on
/// the wire after `AUTHENTICATE` / `AUTH`.
public enum SASLResponse {
    /// XOAUTH2: `user=<user>^Aauth=Bearer <token>^A^A`, base64.
    public static func xoauth2(user: String, token: Secret) -> String {
        Data("user=\(user)\u{1}auth=Bearer \(token.revealed)\u{1}\u{1}".utf8).base64EncodedString()
    }

    /// OAUTHBEARER (RFC 7628 §3.1): `n,a=<user>,^A[host=<host>^Aport=<port>^A]auth=Bearer <token>^A^A`,
    /// base64; `,` and `=` in the user name escaped as the GS2 header requires.
    public static func oauthBearer(user: String, token: Secret, host: String? = nil, port: Int? = nil) -> String {
        let escaped = user.replacing("=", with: "=3D").replacing(",", with: "=2C")
        var text = "n,a=\(escaped),\u{1}"
        if let host { text += "host=\(host)\u{1}" }
        if let port { text += "port=\(port)\u{1}" }
        text += "auth=Bearer \(token.revealed)\u{1}\u{1}"
        return Data(text.utf8).base64EncodedString()
    }
}
