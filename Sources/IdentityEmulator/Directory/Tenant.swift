/// A directory the emulator hosts: the Entra workforce tenant `contoso.onmicrosoft.com` and the
/// Azure AD B2C tenant `fabrikamb2c.onmicrosoft.com`.
public struct Tenant: Sendable, Hashable {
    public enum Kind: Sendable, Hashable { case workforce, b2c }

    /// The tenant's GUID: the `tid` claim, `utid` in `client_info`.
    public let id: String
    /// The initial domain, e.g. `contoso.onmicrosoft.com`.
    public let domain: String
    /// The name shown on sign-in pages ("Contoso", "Fabrikam").
    public let displayName: String
    public let kind: Kind
    /// B2C user flows, e.g. `B2C_1_SignUpSignIn` (empty for a workforce tenant).
    public let policies: [String]

    /// Microsoft's demo workforce tenant.
    public static let contoso = Tenant(
        id: "9f2b1c3e-5a7d-4e2b-8c41-0d6a3f5b7e21", domain: "contoso.onmicrosoft.com", displayName: "Contoso",
        kind: .workforce, policies: [])

    /// The B2C tenant of Microsoft's B2C samples, with their GUID.
    public static let fabrikamB2C = Tenant(
        id: "775527ff-9a37-4307-8b3d-cc311f58d925", domain: "fabrikamb2c.onmicrosoft.com", displayName: "Fabrikam",
        kind: .b2c, policies: ["B2C_1_SignUpSignIn", "B2C_1_PasswordReset"])

    /// The policy as registered (portal casing), matched case-insensitively as B2C does.
    public func policy(named name: String) -> String? {
        policies.first { $0.equalsIgnoringCase(name) }
    }

    /// The sign-up/sign-in user flow.
    public static let signUpSignInPolicy = "B2C_1_SignUpSignIn"
    /// The password-reset user flow.
    public static let passwordResetPolicy = "B2C_1_PasswordReset"
}
