import FoundationEssentials
import Hummingbird

/// B2C's user-flow pages (sign-in, sign-up, password reset), posted to `/{tenant}/login`.
struct B2CController: EmulatorController {
    let services: EmulatorServices
    /// The sign-in pages' controller, which B2C's pages end in (the code redirect, errors).
    private var signIn: SignInController { SignInController(services: services) }

    func b2cStep(_ form: FormFields, transaction input: SignInTransaction, now: Date) async throws -> Response {
        var transaction = input
        let authorization = transaction.request
        let endpoint = authorization.endpoint
        let tenantName = endpoint.tenant.displayName
        let action = signIn.loginAction(endpoint)
        let ctx = transaction.id

        if form["action"] == "cancel" {
            await state.finish(ctx)
            return signIn.flow.errorRedirect(.cancelledSelfAsserted, reply: authorization.reply, now: now)
        }

        switch form["step"] ?? "" {
        case "b2c-signin":
            switch form["action"] {
            case "forgotPassword":
                await state.finish(ctx)
                return signIn.flow.errorRedirect(.forgotPassword, reply: authorization.reply, now: now)
            case "signUp":
                return .html(B2CPages.signUp(action: action, ctx: ctx, tenant: tenantName, values: FormFields(), error: nil))
            default:
                let email = form.nonEmpty(SignInPageIDs.Fields.b2cSignInName) ?? ""
                guard !email.isEmpty, let password = form[SignInPageIDs.Fields.b2cPassword], !password.isEmpty else {
                    return .html(
                        B2CPages.signIn(
                            action: action, ctx: ctx, tenant: tenantName, email: email,
                            error: email.isEmpty ? "Please enter your Email Address" : "Please enter your password"))
                }
                guard let user = fabrikam.user(signInName: email) else {
                    return .html(
                        B2CPages.signIn(
                            action: action, ctx: ctx, tenant: tenantName, email: email, error: "We can't seem to find your account."))
                }
                guard user.checks(password: password) else {
                    return .html(
                        B2CPages.signIn(action: action, ctx: ctx, tenant: tenantName, email: email, error: "Your password is incorrect."))
                }
                transaction.userID = user.id
                transaction.passwordVerified = true
                return await signIn.flow.complete(transaction, session: nil, now: now)
            }

        case "b2c-signup":
            let email = form.nonEmpty("email") ?? ""
            let password = form["newPassword"] ?? ""
            let error: String? =
                if !Self.looksLikeEmail(email) { "Please enter a valid email address." } else if fabrikam.user(signInName: email) != nil {
                    "A user with the specified ID already exists. Please choose a different one."
                } else if let problem = Self.passwordProblem(password) { problem } else if password != form["reenterPassword"] {
                    "The password entry fields do not match. Please enter the same password in both fields and try again."
                } else { nil }
            if let error {
                return .html(B2CPages.signUp(action: action, ctx: ctx, tenant: tenantName, values: form, error: error))
            }
            let given = form.nonEmpty("givenName") ?? ""
            let surname = form.nonEmpty("surname") ?? ""
            let displayName = form.nonEmpty("displayName") ?? [given, surname].filter { !$0.isEmpty }.joined(separator: " ")
            let user = DirectoryUser(
                id: Identifiers.guid(), userPrincipalName: email.lowercased(),
                displayName: displayName.isEmpty ? email : displayName, givenName: given, surname: surname, mail: email.lowercased(),
                password: password)
            guard fabrikam.add(user) else {
                return .html(
                    B2CPages.signUp(
                        action: action, ctx: ctx, tenant: tenantName, values: form,
                        error: "A user with the specified ID already exists. Please choose a different one."))
            }
            await state.recordSignUp(user)
            transaction.userID = user.id
            transaction.passwordVerified = true
            transaction.newUser = true
            return await signIn.flow.complete(transaction, session: nil, now: now)

        case "b2c-reset":
            switch form["action"] {
            case "sendCode":
                let email = form.nonEmpty("email") ?? ""
                guard let user = fabrikam.user(signInName: email) else {
                    return .html(
                        B2CPages.passwordReset(
                            action: action, ctx: ctx, tenant: tenantName, stage: .email, email: email, demoCode: nil,
                            error: "An account could not be found for the provided user ID."))
                }
                let code = Identifiers.oneTimeCode()
                transaction.userID = user.id
                transaction.resetEmail = user.userPrincipalName
                transaction.resetCode = code
                transaction.resetVerified = false
                await state.update(transaction)
                configuration.announce("mfa-code \(user.userPrincipalName) \(code)")
                return .html(
                    B2CPages.passwordReset(
                        action: action, ctx: ctx, tenant: tenantName, stage: .code, email: user.userPrincipalName,
                        demoCode: configuration.demoMode ? code : nil, error: nil))
            case "verifyCode":
                guard let expected = transaction.resetCode else { break }
                guard form.nonEmpty("emailVerificationCode") == expected else {
                    return .html(
                        B2CPages.passwordReset(
                            action: action, ctx: ctx, tenant: tenantName, stage: .code, email: transaction.resetEmail,
                            demoCode: configuration.demoMode ? expected : nil,
                            error: "That code is incorrect. Please try again."))
                }
                transaction.resetVerified = true
                await state.update(transaction)
                return .html(
                    B2CPages.passwordReset(
                        action: action, ctx: ctx, tenant: tenantName, stage: .newPassword, email: transaction.resetEmail,
                        demoCode: nil, error: nil))
            case "setPassword":
                guard transaction.resetVerified, let userID = transaction.userID else { break }
                let password = form["newPassword"] ?? ""
                let problem =
                    Self.passwordProblem(password)
                    ?? (password == form["reenterPassword"]
                        ? nil : "The password entry fields do not match. Please enter the same password in both fields and try again.")
                if let problem {
                    return .html(
                        B2CPages.passwordReset(
                            action: action, ctx: ctx, tenant: tenantName, stage: .newPassword, email: transaction.resetEmail,
                            demoCode: nil, error: problem))
                }
                if let changed = fabrikam.setPassword(password, forUserID: userID) { await state.recordPasswordChange(changed) }
                transaction.passwordVerified = true
                return await signIn.flow.complete(transaction, session: nil, now: now)
            default:
                break
            }
            return .html(
                B2CPages.passwordReset(action: action, ctx: ctx, tenant: tenantName, stage: .email, email: nil, demoCode: nil, error: nil))

        default:
            break
        }
        return .html(B2CPages.signIn(action: action, ctx: ctx, tenant: tenantName, email: nil, error: nil))
    }

    static func looksLikeEmail(_ text: String) -> Bool {
        let parts = text.split(separator: "@")
        return parts.count == 2 && parts[1].contains(".") && !text.contains(" ")
    }

    /// B2C's default password policy: 8–64 characters, three of lower, upper, digit and symbol.
    static func passwordProblem(_ password: String) -> String? {
        guard (8...64).contains(password.count) else { return "The password must be between 8 and 64 characters." }
        let classes = [
            password.contains(where: \.isLowercase), password.contains(where: \.isUppercase),
            password.contains(where: \.isNumber), password.contains(where: { !$0.isLetter && !$0.isNumber }),
        ].filter { $0 }.count
        return classes >= 3
            ? nil
            : "The password must have at least 3 of the following: a lowercase letter, an uppercase letter, a digit, a symbol."
    }
}
