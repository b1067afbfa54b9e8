import FoundationEssentials
import Hummingbird

/// OpenID Connect discovery and the signing keys.
struct DiscoveryController: EmulatorController {
    let services: EmulatorServices

    func discovery(_ request: Request, endpoint: IdentityEndpoint) throws -> Response {
        let prefix = root + endpoint.pathPrefix
        if endpoint.tenant.kind == .b2c {
            return .json(
                .object([
                    ("issuer", .string(issuer.issuer(for: endpoint.tenant))),
                    ("authorization_endpoint", .string("\(prefix)/oauth2/v2.0/authorize")),
                    ("token_endpoint", .string("\(prefix)/oauth2/v2.0/token")),
                    ("end_session_endpoint", .string("\(prefix)/oauth2/v2.0/logout")),
                    ("jwks_uri", .string("\(prefix)/discovery/v2.0/keys")),
                    ("response_modes_supported", .array(["query", "fragment", "form_post"].map(JSON.string))),
                    (
                        "response_types_supported",
                        .array(
                            [
                                "code", "code id_token", "code token", "code id_token token", "id_token", "id_token token", "token",
                                "token id_token",
                            ].map(JSON.string))
                    ),
                    ("scopes_supported", .array([.string("openid")])),
                    ("subject_types_supported", .array([.string("pairwise")])),
                    ("id_token_signing_alg_values_supported", .array([.string("RS256")])),
                    ("token_endpoint_auth_methods_supported", .array(["client_secret_post", "client_secret_basic"].map(JSON.string))),
                    (
                        "claims_supported",
                        .array(
                            [
                                "name", "given_name", "family_name", "emails", "newUser", "oid", "sub", "tfp", "iss", "iat", "exp", "aud",
                                "acr", "nonce", "auth_time",
                            ].map(JSON.string))
                    ),
                ]))
        }
        let tenantPart = endpoint.isMultiTenant ? "{tenantid}" : endpoint.tenant.id
        let issuerText = endpoint.isMultiTenant ? "\(root)/{tenantid}/v2.0" : issuer.issuer(for: endpoint.tenant)
        return .json(
            .object([
                ("token_endpoint", .string("\(prefix)/oauth2/v2.0/token")),
                (
                    "token_endpoint_auth_methods_supported",
                    .array(["client_secret_post", "private_key_jwt", "client_secret_basic"].map(JSON.string))
                ),
                ("jwks_uri", .string("\(prefix)/discovery/v2.0/keys")),
                ("response_modes_supported", .array(["query", "fragment", "form_post"].map(JSON.string))),
                ("subject_types_supported", .array([.string("pairwise")])),
                ("id_token_signing_alg_values_supported", .array([.string("RS256")])),
                ("response_types_supported", .array(["code", "id_token", "code id_token", "id_token token"].map(JSON.string))),
                ("scopes_supported", .array(["openid", "profile", "email", "offline_access"].map(JSON.string))),
                ("issuer", .string(issuerText)),
                ("request_uri_parameter_supported", .bool(false)),
                ("userinfo_endpoint", .string("\(root)/oidc/userinfo")),
                ("authorization_endpoint", .string("\(prefix)/oauth2/v2.0/authorize")),
                ("device_authorization_endpoint", .string("\(prefix)/oauth2/v2.0/devicecode")),
                ("http_logout_supported", .bool(true)),
                ("frontchannel_logout_supported", .bool(true)),
                ("end_session_endpoint", .string("\(prefix)/oauth2/v2.0/logout")),
                (
                    "claims_supported",
                    .array(
                        [
                            "sub", "iss", "cloud_instance_name", "cloud_instance_host_name", "cloud_graph_host_name", "msgraph_host", "aud",
                            "exp", "iat", "auth_time", "acr", "nonce", "preferred_username", "name", "tid", "ver", "at_hash", "c_hash",
                            "email",
                        ].map(JSON.string))
                ),
                ("kerberos_endpoint", .string("\(root)/\(tenantPart)/kerberos")),
                ("tenant_region_scope", endpoint.isMultiTenant ? .null : .string("NA")),
                ("cloud_instance_name", .string("microsoftonline.com")),
                ("cloud_graph_host_name", .string("graph.windows.net")),
                ("msgraph_host", .string("graph.microsoft.com")),
                ("rbac_url", .string("https://pas.windows.net")),
            ]))
    }

    /// JWKS. Entra keys carry `issuer` (the `{tenantid}` template on `common`), B2C keys do not.
    func keys(endpoint: IdentityEndpoint) throws -> Response {
        let keyIssuer: String? =
            endpoint.tenant.kind == .b2c
            ? nil
            : endpoint.isMultiTenant ? "\(root)/{tenantid}/v2.0" : issuer.issuer(for: endpoint.tenant)
        let published = services.keys.published.map { $0.jwk(issuer: keyIssuer, b2c: endpoint.tenant.kind == .b2c) }
        return .json(.object([("keys", .array(published))]))
    }
}
