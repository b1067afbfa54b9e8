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
        // Entra names a tenant's endpoints by its id, whichever name the request used (a domain
        // name: Microsoft's broker client refuses a "non-canonical realm"); `common` and
        // `organizations` keep their own name.
        let canonical = endpoint.isMultiTenant ? prefix : "\(root)/\(endpoint.tenant.id)"
        return .json(
            .object([
                ("token_endpoint", .string("\(canonical)/oauth2/v2.0/token")),
                (
                    "token_endpoint_auth_methods_supported",
                    .array(["client_secret_post", "private_key_jwt", "client_secret_basic"].map(JSON.string))
                ),
                ("jwks_uri", .string("\(canonical)/discovery/v2.0/keys")),
                ("response_modes_supported", .array(["query", "fragment", "form_post"].map(JSON.string))),
                ("subject_types_supported", .array([.string("pairwise")])),
                ("id_token_signing_alg_values_supported", .array([.string("RS256")])),
                ("response_types_supported", .array(["code", "id_token", "code id_token", "id_token token"].map(JSON.string))),
                ("scopes_supported", .array(["openid", "profile", "email", "offline_access"].map(JSON.string))),
                ("issuer", .string(issuerText)),
                ("request_uri_parameter_supported", .bool(false)),
                ("userinfo_endpoint", .string("\(root)/oidc/userinfo")),
                ("authorization_endpoint", .string("\(canonical)/oauth2/v2.0/authorize")),
                ("device_authorization_endpoint", .string("\(canonical)/oauth2/v2.0/devicecode")),
                ("http_logout_supported", .bool(true)),
                ("frontchannel_logout_supported", .bool(true)),
                ("end_session_endpoint", .string("\(canonical)/oauth2/v2.0/logout")),
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

    /// The v1.0 endpoints' document (`/{tenant}/.well-known/openid-configuration`), as Entra
    /// shapes it: issuer `https://sts.windows.net/{tid}/`, v1 paths, the tenant by its id.
    func discoveryVersionOne(endpoint: IdentityEndpoint) throws -> Response {
        guard endpoint.tenant.kind == .workforce else { throw JSONFailure(EndpointError.notFound.serviceError) }
        let tenantPart = endpoint.isMultiTenant ? endpoint.tenantSegment.lowercased() : endpoint.tenant.id
        let issuerText = endpoint.isMultiTenant ? "https://sts.windows.net/{tenantid}/" : "https://sts.windows.net/\(endpoint.tenant.id)/"
        return .json(
            .object([
                ("token_endpoint", .string("\(root)/\(tenantPart)/oauth2/token")),
                (
                    "token_endpoint_auth_methods_supported",
                    .array(["client_secret_post", "private_key_jwt", "client_secret_basic"].map(JSON.string))
                ),
                ("jwks_uri", .string("\(root)/common/discovery/keys")),
                ("response_modes_supported", .array(["query", "fragment", "form_post"].map(JSON.string))),
                ("subject_types_supported", .array([.string("pairwise")])),
                ("id_token_signing_alg_values_supported", .array([.string("RS256")])),
                ("response_types_supported", .array(["code", "id_token", "code id_token", "token id_token", "token"].map(JSON.string))),
                ("scopes_supported", .array([.string("openid")])),
                ("issuer", .string(issuerText)),
                ("microsoft_multi_refresh_token", .bool(true)),
                ("authorization_endpoint", .string("\(root)/\(tenantPart)/oauth2/authorize")),
                ("device_authorization_endpoint", .string("\(root)/\(tenantPart)/oauth2/devicecode")),
                ("http_logout_supported", .bool(true)),
                ("frontchannel_logout_supported", .bool(true)),
                ("end_session_endpoint", .string("\(root)/\(tenantPart)/oauth2/logout")),
                (
                    "claims_supported",
                    .array(
                        [
                            "sub", "iss", "cloud_instance_name", "cloud_instance_host_name", "cloud_graph_host_name", "msgraph_host", "aud",
                            "exp", "iat", "auth_time", "acr", "amr", "nonce", "email", "given_name", "family_name", "nickname",
                        ].map(JSON.string))
                ),
                ("check_session_iframe", .string("\(root)/\(tenantPart)/oauth2/checksession")),
                ("userinfo_endpoint", .string("\(root)/\(tenantPart)/openid/userinfo")),
                ("kerberos_endpoint", .string("\(root)/\(tenantPart)/kerberos")),
                ("tenant_region_scope", endpoint.isMultiTenant ? .null : .string("NA")),
                ("cloud_instance_name", .string("microsoftonline.com")),
                ("cloud_graph_host_name", .string("graph.windows.net")),
                ("msgraph_host", .string("graph.microsoft.com")),
                ("rbac_url", .string("https://pas.windows.net")),
            ]))
    }

    /// Instance discovery (`/common/discovery/instance?api-version=1.1&authorization_endpoint=…`),
    /// as Entra answers MSAL: where the tenant's metadata is, and which host names are one cloud
    /// (a cache written under one alias is read under another). The emulator's own host — under
    /// `--hostname login.microsoftonline.com` that is Microsoft's — is in the first entry. An
    /// authorization endpoint of a host that is no cloud's is `invalid_instance` (AADSTS50049).
    func instanceDiscovery(_ request: Request) throws -> Response {
        let fields = request.queryFields
        guard let text = fields["authorization_endpoint"], let url = URL(string: text), let host = url.host?.lowercased() else {
            throw JSONFailure(
                .entra("invalid_request", 90014, "The request body must contain the following parameter: 'authorization_endpoint'."))
        }
        let ownHost = base.host?.lowercased() ?? ""
        let own = base.port.map { "\(ownHost):\($0)" } ?? ownHost
        var clouds: [[String]] = [
            ["login.microsoftonline.com", "login.windows.net", "login.microsoft.com", "sts.windows.net"],
            ["login.partner.microsoftonline.cn", "login.chinacloudapi.cn"],
            ["login.microsoftonline.de"],
            ["login.microsoftonline.us", "login.usgovcloudapi.net"],
            ["login-us.microsoftonline.com"],
        ]
        if !clouds.joined().contains(ownHost) { clouds.insert([own], at: 0) }
        let named = url.port.map { "\(host):\($0)" } ?? host
        guard clouds.joined().contains(named) || clouds.joined().contains(host) && url.port == nil else {
            throw JSONFailure(.entra("invalid_instance", 50049, "Unknown or invalid instance."))
        }
        // The tenant named in the authorization endpoint (…/{tenant}/oauth2/…), the document's place.
        let segments = url.path.split(separator: "/").map(String.init)
        let tenant = segments.first ?? "common"
        let metadata: [JSON] = clouds.map { aliases in
            let preferredCache = aliases.contains("login.windows.net") ? "login.windows.net" : aliases[0]
            return .object([
                ("preferred_network", .string(aliases[0])), ("preferred_cache", .string(preferredCache)),
                ("aliases", .array(aliases.map(JSON.string))),
            ])
        }
        let scheme = base.scheme ?? "https"
        return .json(
            .object([
                ("tenant_discovery_endpoint", .string("\(scheme)://\(named)/\(tenant)/v2.0/.well-known/openid-configuration")),
                ("api-version", .string("1.1")),
                ("metadata", .array(metadata)),
            ]))
    }

    /// v1 realm discovery (`/common/UserRealm/{user}?api-version=1.0`): whether a user name signs
    /// in here (`Managed`) or at its organization's identity provider (`Federated`, WS-Trust).
    func userRealm(_ userName: String, request: Request) -> Response {
        let name = FormFields.decode(userName)
        let domain = name.split(separator: "@").last.map(String.init)?.lowercased() ?? ""
        if let federated = services.federatedDomain(forUserName: name, in: contoso.tenant) {
            return .json(
                .object([
                    ("ver", .string("1.0")), ("account_type", .string("Federated")), ("domain_name", .string(domain)),
                    ("federation_protocol", .string("WSTrust")),
                    ("federation_active_auth_url", .string(federated.passiveEndpoint.absoluteString)),
                    ("cloud_instance_name", .string("microsoftonline.com")),
                    ("cloud_audience_urn", .string("urn:federation:MicrosoftOnline")),
                ]))
        }
        let known = contoso.user(signInName: name) != nil || domain == contoso.tenant.domain
        return .json(
            .object([
                ("ver", .string("1.0")), ("account_type", .string(known ? "Managed" : "Unknown")), ("domain_name", .string(domain)),
                ("cloud_instance_name", .string("microsoftonline.com")), ("cloud_audience_urn", .string("urn:federation:MicrosoftOnline")),
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
