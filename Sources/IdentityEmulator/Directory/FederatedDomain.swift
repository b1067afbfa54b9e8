import FoundationEssentials

/// A verified domain of a workforce tenant whose users sign in at their organisation's own
/// identity provider (AD FS, Okta, Ping) over WS-Federation: after the user name, Entra sends the
/// browser to the provider's passive endpoint, and trusts the signed SAML assertion the provider
/// posts back to `/login.srf` when its issuer, signature and audience are the registered ones.
///
/// The properties are those an administrator registers with `Set-MsolDomainAuthentication` (or
/// Graph's `internalDomainFederation`), named after them.
public struct FederatedDomain: Sendable {
    /// The domain (`DomainName`), e.g. `fabrikam.example`: users `…@fabrikam.example` are federated.
    public let name: String
    /// The tenant that verified the domain (its `tid`).
    public let tenantID: String
    /// The organisation the provider's pages name (`FederationBrandName`), e.g. "Fabrikam".
    public let displayName: String
    /// The provider's WS-Federation passive endpoint (`PassiveLogOnUri`), e.g.
    /// `http://localhost:8400/adfs/ls/`: where home realm discovery sends the browser.
    public let passiveEndpoint: URL
    /// The provider's issuer URI (`IssuerUri`), e.g. `http://localhost/adfs/services/trust`: the
    /// `Issuer` of its assertions, as AD FS writes it (always `http`, without a port).
    public let issuerURI: String
    /// The key the provider signs its assertions with. Entra reads only its public half, as the
    /// registered `SigningCertificate` gives it.
    let signingKey: SigningKey

    /// Whether `userName` (a UPN) is one of this domain's: it ends in `@` and the domain, any case.
    public func contains(userName: String) -> Bool {
        userName.lowercased().hasSuffix("@" + name.lowercased())
    }

    /// Contoso's federated domain.
    public static let fabrikamName = "fabrikam.example"

    /// Contoso's federated domain `fabrikam.example`, whose AD FS ("Fabrikam") the emulator serves
    /// under `/adfs/` at `identityProvider` (the emulator's scheme and port on the federation host
    /// name).
    static func fabrikam(identityProvider base: URL, signingKey: SigningKey) -> FederatedDomain {
        let root = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
        return FederatedDomain(
            name: fabrikamName, tenantID: Tenant.contoso.id, displayName: "Fabrikam",
            passiveEndpoint: URL(string: root + ADFSController.passivePath) ?? base,
            issuerURI: "http://\(base.host ?? "localhost")/adfs/services/trust", signingKey: signingKey)
    }
}
