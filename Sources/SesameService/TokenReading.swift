import FoundationEssentials
import SesameCore

/// What the flow inspector may show of the tokens a token endpoint answered with, so that a
/// newcomer can read them: each JWT's header and claims, decoded (not checked: Sesame checks an
/// id_token elsewhere, and an access token is the API's to check) — never the token itself, its
/// signature, or a claim that is a secret or opaque (`nonce`, the hashes, session ids).
public enum TokenReading {
    /// The claims shown, in the order they are read: for whom, by whom, who, for which app, what
    /// it allows, how the user proved it, on which device, and when.
    public static let shownClaims = [
        "aud", "iss", "sub", "oid", "tid", "name", "preferred_username", "upn", "appid", "azp", "scp", "roles", "amr", "deviceid",
        "idtyp", "ver", "iat", "nbf", "exp",
    ]
    /// The header's fields shown (prefixed `header.` in the event).
    public static let shownHeader = ["alg", "typ", "kid"]
    /// A shown value is cut to this many characters.
    public static let longestShownValue = 256

    /// One event's fields per token in a token endpoint's JSON answer: `token` (`id_token`,
    /// `access_token`), `format` (`jwt`, or `opaque` for a token no client can read), the
    /// header's and the claims' shown fields, and for the access token the answer's `scope`.
    /// Empty for anything else (an error, a body too large or not JSON).
    public static func events(ofTokenResponse body: Data) -> [[(String, String)]] {
        guard body.count <= 256 * 1024, let answer = try? JSONDecoder().decode([String: JSONValue].self, from: body) else { return [] }
        var events: [[(String, String)]] = []
        for name in ["id_token", "access_token"] {
            guard let token = answer[name]?.stringValue, !token.isEmpty else { continue }
            var fields: [(String, String)] = [("token", name)]
            if let jwt = try? JSONWebToken(compact: Secret(token)) {
                fields.append(("format", "jwt"))
                fields += shownHeader.compactMap { key in jwt.header[key].flatMap(shown).map { ("header.\(key)", $0) } }
                fields += shownClaims.compactMap { key in jwt.claims[key].flatMap(shown).map { (key, $0) } }
            } else {
                fields.append(("format", "opaque"))
            }
            if name == "access_token", let scope = answer["scope"]?.stringValue { fields.append(("scope", clean(scope))) }
            events.append(fields)
        }
        return events
    }

    /// A claim's value as text: a string, a whole number, or a list of them joined by spaces.
    private static func shown(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text): clean(text)
        case .number(let number) where number.isFinite && number == number.rounded() && abs(number) < 1e15: String(Int64(number))
        case .bool(let flag): flag ? "true" : "false"
        case .array(let items): clean(items.compactMap { item in item.stringValue }.joined(separator: " "))
        default: nil
        }
    }

    /// Text from outside, as shown: no control characters, at most ``longestShownValue`` characters.
    private static func clean(_ text: String) -> String {
        let visible = String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
        return visible.count > longestShownValue ? String(visible.prefix(longestShownValue)) + "…" : visible
    }
}
