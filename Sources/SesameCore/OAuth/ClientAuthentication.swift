import FoundationEssentials

/// How a client with a secret authenticates at the token endpoint (RFC 6749 §2.3.1, OIDC Core
/// §9): the methods discovery's `token_endpoint_auth_methods_supported` names. A public client
/// (no secret) sends only `client_id`, and PKCE protects its code.
public enum ClientAuthentication: String, Sendable, Hashable {
    /// `client_secret_basic`: HTTP Basic with the form-encoded id and secret; OAuth's default,
    /// and discovery's when it names none.
    case clientSecretBasic = "client_secret_basic"
    /// `client_secret_post`: `client_secret` in the form (what Microsoft's libraries send).
    case clientSecretPost = "client_secret_post"
    /// `none`: no secret; PKCE.
    case none

    /// The method for a client with (or without) a secret at a provider whose discovery names
    /// `supported` (`nil`: it names none). Microsoft's authorities get `client_secret_post`, as
    /// MSAL sends it; others their first of basic and post, basic when discovery says nothing.
    public static func choose(hasSecret: Bool, supported: [String]?, microsoftAuthority: Bool) -> ClientAuthentication {
        guard hasSecret else { return .none }
        if microsoftAuthority { return .clientSecretPost }
        guard let supported, !supported.isEmpty else { return .clientSecretBasic }
        if supported.contains(ClientAuthentication.clientSecretBasic.rawValue) { return .clientSecretBasic }
        if supported.contains(ClientAuthentication.clientSecretPost.rawValue) { return .clientSecretPost }
        return .clientSecretBasic
    }

    /// The `Authorization` header value of `client_secret_basic`: each part form-encoded first
    /// (RFC 6749 §2.3.1), then `id:secret` in base64.
    static func basicCredentials(clientID: String, secret: Secret) -> String {
        let pair = FormEncoding.escape(clientID) + ":" + FormEncoding.escape(secret.revealed)
        return "Basic " + Data(pair.utf8).base64EncodedString()
    }
}
