/// Which tenant (and, for B2C, which user flow) a request's path names:
/// `/{tenant}/oauth2/v2.0/…`, `/{tenant}/{policy}/oauth2/v2.0/…`, `/tfp/{tenant}/{policy}/…` or
/// `/{tenant}/oauth2/v2.0/…?p={policy}`.
struct IdentityEndpoint: Sendable, Equatable {
    let tenant: Tenant
    /// The tenant as written in the path (`common`, `organizations`, a domain or a GUID).
    let tenantSegment: String
    /// The B2C policy as registered (`B2C_1_SignUpSignIn`), nil for the workforce tenant.
    let policy: String?

    /// Tenant names the workforce tenant answers to.
    static func resolve(tenant segment: String, policy policySegment: String?, tenants: [Tenant]) throws(EndpointError) -> IdentityEndpoint
    {
        let lower = segment.lowercased()
        let tenant = tenants.first { tenant in
            if lower == tenant.id || lower == tenant.domain { return true }
            if tenant.kind == .b2c, lower == tenant.domain.replacing(".onmicrosoft.com", with: "") { return true }
            return tenant.kind == .workforce && (lower == "common" || lower == "organizations")
        }
        guard let tenant else { throw .tenantNotFound(segment) }
        switch tenant.kind {
        case .workforce:
            guard policySegment == nil else { throw .notFound }
            return IdentityEndpoint(tenant: tenant, tenantSegment: segment, policy: nil)
        case .b2c:
            guard let policySegment, !policySegment.isEmpty else { throw .policyMissing }
            guard let policy = tenant.policy(named: policySegment) else { throw .unknownPolicy(policySegment, tenant: tenant.domain) }
            return IdentityEndpoint(tenant: tenant, tenantSegment: segment, policy: policy)
        }
    }

    /// `common` and `organizations` are multi-tenant: their discovery issuer is a template.
    var isMultiTenant: Bool { ["common", "organizations"].contains(tenantSegment.lowercased()) }

    /// The path before `/oauth2/v2.0/…` and `/v2.0/.well-known/…` as a client would build it.
    var pathPrefix: String {
        if let policy { return "/\(tenant.domain)/\(policy.lowercased())" }
        return "/\(tenantSegment)"
    }
}

/// Why a path names no endpoint; shown as a page (authorize) or JSON (token, discovery).
enum EndpointError: Error, Sendable, Equatable {
    case tenantNotFound(String)
    case policyMissing
    case unknownPolicy(String, tenant: String)
    case notFound

    var serviceError: ServiceError {
        switch self {
        case .tenantNotFound(let tenant): .tenantNotFound(tenant)
        case .policyMissing:
            .b2c(
                "invalid_request", 90008, "The request does not contain a policy: use /{tenant}/{policy}/oauth2/v2.0/… or add ?p={policy}.")
        case .unknownPolicy(let policy, let tenant):
            .b2c("invalid_request", 90057, "The policy '\(policy)' does not exist in the tenant '\(tenant)'.")
        case .notFound: .entra("invalid_request", 90002, "No such endpoint.")
        }
    }
}
