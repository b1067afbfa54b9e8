import FoundationEssentials

/// The `amr` claim (Authentication Methods References, RFC 8176) Entra writes for a sign-in:
/// `pwd` for a password (Entra's or a federated provider's, with `fed`), the method's own value
/// for a second factor (`sms`, `otp`, `rsa`, `fido`), and `mfa` once two factors were passed.
enum AuthenticationMethodReferences {
    static func values(
        password: Bool, federated: Bool, secondFactor: AuthenticationMethod?, passwordless: AuthenticationMethod?,
        inherited: [String] = []
    ) -> [String] {
        var values: [String] = inherited.filter { $0 != "mfa" }
        if password, !values.contains("pwd") { values.append("pwd") }
        if federated, !values.contains("fed") { values.append("fed") }
        for method in [secondFactor, passwordless].compactMap(\.self) {
            values.append(contentsOf: value(of: method).filter { !values.contains($0) })
        }
        if secondFactor != nil || passwordless != nil || inherited.contains("mfa") { values.append("mfa") }
        return values
    }

    /// What a method adds besides `mfa`.
    static func value(of method: AuthenticationMethod) -> [String] {
        switch method {
        case .sms: []
        case .softwareOath: ["otp"]
        case .microsoftAuthenticator: ["rsa"]
        case .fido2: ["fido"]
        case .temporaryAccessPass: []
        }
    }
}
