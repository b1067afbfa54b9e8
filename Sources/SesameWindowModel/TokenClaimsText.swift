import FoundationEssentials
import SesameService
import SesameSystem

/// A token read aloud: the inspector's text for a `token-read` event (``TokenReading``), each
/// header field and claim named in words, with its value; times as the local time of day and how
/// long after issue. Only what the event holds: never the token, its signature or a secret.
enum TokenClaimsText {
    /// The lines of the table, after a heading that says which token it is and what it is for.
    static func lines(of fields: [(String, String)]) -> [String] {
        func field(_ name: String) -> String? { fields.first { $0.0 == name }?.1 }
        var lines: [String] =
            field("token") == "id_token"
            ? [L("ID token: who signed in, for this app. Sesame checks its signature, issuer, audience and nonce before it uses it.")]
            : [L("Access token: for the API it names, which checks it. The app only passes it on.")]
        if field("format") == "opaque" {
            lines.append(L("Not a JWT: only the service that issued it can read it."))
            return lines
        }
        let issued = field("iat").flatMap { Int64($0) }
        for (name, value) in fields where !["token", "format"].contains(name) {
            guard let meaning = meaning(of: name) else { continue }
            lines.append("\(name) · \(meaning): \(shown(name, value, issued: issued))")
        }
        return lines
    }

    /// The checks Sesame made on an ID token (`id-token-checked`), each ✓, ✗ or – (not reached).
    static func checkLines(of fields: [(String, String)]) -> [String] {
        let checks: [(String, String)] = [
            ("signature", L("signed with one of the service’s published keys")),
            ("issuer", L("issued by the service the app trusts (iss)")),
            ("audience", L("issued to this app (aud)")),
            ("lifetime", L("within its lifetime (exp, nbf)")),
            ("nonce", L("answers this sign-in’s request (nonce)")),
        ]
        return checks.compactMap { name, meaning in
            guard let outcome = fields.first(where: { $0.0 == name })?.1 else { return nil }
            let mark = String(outcome.prefix(1))
            let key = outcome.count > 2 ? " (" + String(outcome.dropFirst(2)) + ")" : ""
            return "\(mark) \(name) · \(meaning)\(key)"
        }
    }

    /// What a header field or claim is for, in words.
    static func meaning(of name: String) -> String? {
        switch name {
        case "header.alg": L("how it is signed")
        case "header.typ": L("what kind of token it is")
        case "header.kid": L("which of the service’s keys signed it")
        case "aud": L("who the token is for (its audience)")
        case "iss": L("who issued it")
        case "sub": L("the user, as this app knows them")
        case "oid": L("the user’s id in the organization")
        case "tid": L("the organization (tenant)")
        case "name": L("the user’s name")
        case "preferred_username", "upn": L("the user’s sign-in name")
        case "appid", "azp": L("the app it was issued to")
        case "scp": L("what the app may do for the user (its permissions)")
        case "roles": L("the roles it carries")
        case "amr": L("how the user proved who they are")
        case "deviceid": L("this computer’s id in the organization")
        case "idtyp": L("whether a user or an app holds it")
        case "ver": L("the token format’s version")
        case "iat": L("when it was issued")
        case "nbf": L("not valid before")
        case "exp": L("when it expires")
        case "scope": L("the permissions the service granted")
        default: nil
        }
    }

    /// A value as shown: a time as the local time of day (and, for the expiry, how long after
    /// issue); everything else as it came.
    private static func shown(_ name: String, _ value: String, issued: Int64?) -> String {
        guard ["iat", "nbf", "exp"].contains(name), let seconds = Int64(value),
            let (hour, minute, second) = Posix.localTimeOfDay(secondsSince1970: seconds)
        else { return value }
        let time = String(formatting: "%02d:%02d:%02d", hour, minute, second)
        guard name == "exp", let issued, seconds > issued else { return time }
        let minutes = Int((seconds - issued + 30) / 60)
        return String(
            formatting: minutes == 1 ? L("%@, %d minute after it was issued") : L("%@, %d minutes after it was issued"), time, minutes)
    }
}
