import FoundationEssentials
import Hummingbird

/// What an administrator does to users' authentication methods, under `/.emulator/users/{user}/`:
/// read and set the registered methods (as Graph's `/users/{id}/authentication/methods` would
/// list them), and issue a Temporary Access Pass (Graph's `temporaryAccessPassMethods`, whose
/// answer is the only place the pass is ever shown).
struct MethodsControlController: EmulatorController {
    let services: EmulatorServices

    /// `GET /.emulator/users/{user}/methods`.
    func methods(user key: String) async -> Response {
        guard let user = contoso.user(idOrPrincipalName: key) else { return noUser(key) }
        return await describe(user)
    }

    /// `POST /.emulator/users/{user}/methods` with `{"methods": ["microsoftAuthenticator", "sms"],
    /// "softwareOathSecretKey": "BASE32"}`: replaces the phone, Authenticator and app-code
    /// registrations (passkeys and passes keep theirs); a new app secret is made when none is given.
    func setMethods(user key: String, _ request: Request) async throws -> Response {
        guard let user = contoso.user(idOrPrincipalName: key) else { return noUser(key) }
        let data = Data(try await request.bodyText(limit: 16 * 1024).utf8)
        let registered: RegisteredMethods
        do {
            registered = try JSONDecoder().decode(RegisteredMethods.self, from: data)
        } catch {
            return .json(
                .object([
                    (
                        "error",
                        .string(
                            #"The body is {"methods": [...], "softwareOathSecretKey": "BASE32"} with methods among sms, "#
                                + #"microsoftAuthenticator, softwareOath: \#(error)"#)
                    )
                ]), status: .badRequest)
        }
        do throws(TOTPError) {
            try await apply(registered, to: user)
        } catch {
            return .json(.object([("error", .string("softwareOathSecretKey: \(error)"))]), status: .badRequest)
        }
        return await describe(user)
    }

    /// The policy file's `registeredMethods`, applied to each user it names.
    func register(_ policies: TenantPolicies) async throws(EmulatorConfigurationError) {
        for (name, registered) in policies.policy(for: contoso.tenant).registeredMethods {
            guard let user = contoso.user(idOrPrincipalName: name) else {
                throw EmulatorConfigurationError("registeredMethods names '\(name)', who is not a user of contoso.onmicrosoft.com.")
            }
            do throws(TOTPError) {
                try await apply(registered, to: user)
            } catch {
                throw EmulatorConfigurationError("registeredMethods of \(name): softwareOathSecretKey: \(error)")
            }
        }
    }

    /// Applies a policy file's (or a request's) registrations to `user`.
    func apply(_ registered: RegisteredMethods, to user: DirectoryUser) async throws(TOTPError) {
        var secret: String?
        if registered.methods.contains(.softwareOath) {
            if let key = registered.softwareOathSecretKey {
                secret = try TOTPSecret(base32: key).base32
            } else {
                secret = TOTPSecret.random().base32
            }
        }
        let methods = registered.methods
        await state.updateMethods(of: user) { [secret] current in
            current.sms = methods.contains(.sms)
            current.authenticatorDevice = methods.contains(.microsoftAuthenticator) ? (current.authenticatorDevice ?? "Phone") : nil
            if current.softwareOathSecret != secret { current.softwareOathLastStep = nil }
            current.softwareOathSecret = secret
        }
    }

    /// `POST /.emulator/users/{user}/temporaryAccessPass` with `{"lifetimeInMinutes": 60,
    /// "isUsableOnce": true}` (both optional: the tenant's defaults): a new pass, replacing any other.
    func issuePass(user key: String, _ request: Request) async throws -> Response {
        guard let user = contoso.user(idOrPrincipalName: key) else { return noUser(key) }
        let settings = await state.policy(for: contoso.tenant).authenticationMethods.temporaryAccessPass
        let body = try await request.bodyText(limit: 4 * 1024)
        let fields = body.isEmpty ? [:] : (JSON.parseObject(Data(body.utf8)) ?? ["": "not an object"])
        guard fields[""] == nil else {
            return .json(
                .object([("error", .string(#"The body is {"lifetimeInMinutes": 60, "isUsableOnce": true}."#))]), status: .badRequest)
        }
        let lifetime = (fields["lifetimeInMinutes"] as? Double).flatMap { Int(exactly: $0) } ?? settings.defaultLifetimeInMinutes
        guard TemporaryAccessPass.lifetimeRange.contains(lifetime) else {
            return .json(.object([("error", .string("lifetimeInMinutes is 10 to 43200."))]), status: .badRequest)
        }
        let usableOnce = settings.isUsableOnce || (fields["isUsableOnce"] as? Bool ?? false)
        let pass = Self.newPass(length: settings.defaultLength)
        let now = clock.now
        let record = TemporaryAccessPass(
            digest: Identifiers.digest(pass), startDateTime: now, lifetimeInMinutes: lifetime, isUsableOnce: usableOnce)
        await state.updateMethods(of: user) { $0.temporaryAccessPasses = [record] }
        return .json(
            .object([
                ("user", .string(user.userPrincipalName)), ("temporaryAccessPass", .string(pass)),
                ("startDateTime", .string(now.entraTimestamp)), ("lifetimeInMinutes", .int(lifetime)), ("isUsableOnce", .bool(usableOnce)),
            ]))
    }

    /// A pass as Entra makes them: letters, digits and a few symbols, never ambiguous ones.
    static func newPass(length: Int) -> String {
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789!@#$%&*+")
        var generator = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }

    private func describe(_ user: DirectoryUser) async -> Response {
        let now = clock.now
        let registered = await state.methods(of: user)
        let hasPasskey = await state.hasPasskey(userID: user.id)
        var members: [(String, JSON)] = [
            ("user", .string(user.userPrincipalName)),
            ("methods", .array(registered.methods(now: now, hasPasskey: hasPasskey).map { .string($0.rawValue) })),
        ]
        if let device = registered.authenticatorDevice { members.append(("microsoftAuthenticator", .string(device))) }
        if let text = registered.softwareOathSecret, let secret = try? TOTPSecret(base32: text) {
            members.append(
                (
                    "softwareOath",
                    .object([
                        ("secretKey", .string(secret.base32)),
                        ("otpauth", .string(TOTP.keyURI(secret: secret, issuer: "Contoso", account: user.userPrincipalName))),
                    ])
                ))
        }
        return .json(.object(members))
    }

    private func noUser(_ key: String) -> Response {
        .json(.object([("error", .string("No user '\(key)' in contoso."))]), status: .notFound)
    }
}
