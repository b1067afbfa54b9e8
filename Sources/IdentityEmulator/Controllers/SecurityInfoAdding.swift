import FoundationEssentials
import Hummingbird

/// Adding a method in "Security info": Microsoft Authenticator (the activation QR code, then a
/// test notification the phone approves with its number), an authenticator app (its secret, then
/// its first code), a phone (its number, then the texted code), a passkey (the page's
/// `navigator.credentials.create`). Each step checks what ``SecurityInfoController`` checks
/// (the session, its token, MFA) and answers with the next setup page or the list.
struct SecurityInfoAdding: EmulatorController {
    let controller: SecurityInfoController
    var services: EmulatorServices { controller.services }

    func add(_ name: String, _ signedIn: SecurityInfoController.SignedIn) async -> Response {
        let method: AuthenticationMethod? =
            switch name {
            case "microsoftAuthenticator": .microsoftAuthenticator
            case "softwareOath": .softwareOath
            case "sms", "phone": .sms
            case "fido2", "passkey": .fido2
            default: nil
            }
        guard let method, await state.policy(for: contoso.tenant).authenticationMethods.enabled.contains(method) else {
            return await controller.overview(signedIn, notice: nil, error: "Your organization doesn't allow that sign-in method.")
        }
        if let sentence = await controller.changeRefusal(signedIn, adding: true) { return await controller.refused(sentence, signedIn) }
        let user = signedIn.user
        switch method {
        case .microsoftAuthenticator:
            let activation = await authenticator.beginActivation(userID: user.id, base: root, now: clock.now)
            return .html(
                SecurityInfoSetupPages.scanActivation(username: user.userPrincipalName, token: signedIn.token, activation: activation))
        case .softwareOath:
            let secret = TOTPSecret.random()
            controller.setups.update(signedIn.token, now: clock.now) { $0.appSecret = secret }
            return .html(
                SecurityInfoSetupPages.scanAppSecret(
                    username: user.userPrincipalName, token: signedIn.token, secret: secret,
                    uri: TOTP.keyURI(secret: secret, issuer: contoso.tenant.displayName, account: user.userPrincipalName)))
        case .sms:
            return .html(SecurityInfoSetupPages.phoneNumber(username: user.userPrincipalName, token: signedIn.token, error: nil))
        case .fido2:
            if let sentence = controller.passkeyRefusal(signedIn) { return await controller.refused(sentence, signedIn) }
            return .html(SecurityInfoSetupPages.passkey(username: user.userPrincipalName, token: signedIn.token))
        case .temporaryAccessPass:
            return await controller.overview(signedIn, notice: nil, error: nil)
        }
    }

    func pushID(_ signedIn: SecurityInfoController.SignedIn) -> String { "security-info|" + signedIn.session.sessionID }

    /// "Scan the QR code" → Next: once the phone activated, the test notification.
    func authenticatorScanned(_ signedIn: SecurityInfoController.SignedIn) async -> Response {
        if let sentence = await controller.changeRefusal(signedIn, adding: true) { return await controller.refused(sentence, signedIn) }
        let user = signedIn.user
        guard await authenticator.activatedAuthenticator(userID: user.id) != nil else {
            let activation = await authenticator.beginActivation(userID: user.id, base: root, now: clock.now)
            return .html(
                SecurityInfoSetupPages.scanActivation(
                    username: user.userPrincipalName, token: signedIn.token, activation: activation,
                    error: "We couldn't find your account in the app. Scan the QR code with the Microsoft Authenticator app, then "
                        + "choose Next."))
        }
        return await sendTestNotification(signedIn)
    }

    func sendTestNotification(_ signedIn: SecurityInfoController.SignedIn) async -> Response {
        let user = signedIn.user
        let number = await authenticator.sendPush(transactionID: pushID(signedIn), userID: user.id, appName: "My Signins", now: clock.now)
        configuration.announce("authenticator-push \(user.userPrincipalName) \(number)")
        return .html(SecurityInfoSetupPages.testNotification(username: user.userPrincipalName, token: signedIn.token, number: number))
    }

    /// "Let's try it out" answered: approved, the app is registered; otherwise another notification.
    func authenticatorTest(_ signedIn: SecurityInfoController.SignedIn) async -> Response {
        if let sentence = await controller.changeRefusal(signedIn, adding: true) { return await controller.refused(sentence, signedIn) }
        let user = signedIn.user
        guard let activation = await authenticator.activatedAuthenticator(userID: user.id) else {
            return await controller.overview(signedIn, notice: nil, error: nil)
        }
        let outcome = await authenticator.pushOutcome(
            transactionID: pushID(signedIn), now: clock.now, timeout: configuration.authenticatorTimeout)
        switch outcome {
        case .approved?:
            await authenticator.endPush(transactionID: pushID(signedIn))
            await authenticator.endActivation(userID: user.id)
            let device = activation.device ?? "Phone"
            await state.updateMethods(of: user) { $0.authenticatorDevice = device }
            return await controller.overview(signedIn, notice: "Microsoft Authenticator app was successfully registered", error: nil)
        case .pending?:
            let push = await authenticator.push(transactionID: pushID(signedIn))
            return .html(
                SecurityInfoSetupPages.testNotification(username: user.userPrincipalName, token: signedIn.token, number: push?.number ?? 0))
        default:
            return await sendTestNotification(signedIn)
        }
    }

    /// The authenticator app's QR code → Next: the code it shows.
    func appScanned(_ signedIn: SecurityInfoController.SignedIn) async -> Response {
        guard controller.setups.setup(signedIn.token, now: clock.now)?.appSecret != nil else {
            return await controller.overview(signedIn, notice: nil, error: nil)
        }
        return .html(SecurityInfoSetupPages.enterAppCode(username: signedIn.user.userPrincipalName, token: signedIn.token, error: nil))
    }

    /// The app's six digits: right, the secret is kept (and that code used); wrong, said.
    func appVerify(_ typed: String, _ signedIn: SecurityInfoController.SignedIn) async -> Response {
        if let sentence = await controller.changeRefusal(signedIn, adding: true) { return await controller.refused(sentence, signedIn) }
        guard let secret = controller.setups.setup(signedIn.token, now: clock.now)?.appSecret else {
            return await controller.overview(signedIn, notice: nil, error: nil)
        }
        var checker = AuthenticatorAppCode(secret: secret)
        guard typed.count <= 16, case .accepted(let step) = checker.verify(typed, now: clock.now) else {
            return .html(
                SecurityInfoSetupPages.enterAppCode(
                    username: signedIn.user.userPrincipalName, token: signedIn.token,
                    error: "The code you entered didn't match. Enter the 6-digit code shown in the app."))
        }
        controller.setups.end(signedIn.token)
        let base32 = secret.base32
        await state.updateMethods(of: signedIn.user) {
            $0.softwareOathSecret = base32
            $0.softwareOathLastStep = step
        }
        return await controller.overview(signedIn, notice: "Authenticator app was successfully registered", error: nil)
    }

    /// The phone number typed: a code texted to it (announced as the sign-in's are).
    func phoneNumber(_ typed: String, _ signedIn: SecurityInfoController.SignedIn) async -> Response {
        if let sentence = await controller.changeRefusal(signedIn, adding: true) { return await controller.refused(sentence, signedIn) }
        let user = signedIn.user
        let digits = String(typed.prefix(32)).filter(\.isNumber)
        guard typed.count <= 32, (6...15).contains(digits.count) else {
            return .html(
                SecurityInfoSetupPages.phoneNumber(
                    username: user.userPrincipalName, token: signedIn.token, error: "Enter a valid phone number.")
            )
        }
        let code = Identifiers.oneTimeCode()
        controller.setups.update(signedIn.token, now: clock.now) {
            $0.phoneCode = code
            $0.phoneAttempts = 0
        }
        configuration.announce("mfa-code \(user.userPrincipalName) \(code)")
        return .html(
            SecurityInfoSetupPages.enterPhoneCode(
                username: user.userPrincipalName, token: signedIn.token, maskedPhone: "+X XXXXXXX" + String(digits.suffix(2)),
                demoCode: configuration.demoMode ? code : nil, error: nil))
    }

    /// The texted code: right, the phone is registered; three wrong ones end the setup.
    func phoneVerify(_ typed: String, _ signedIn: SecurityInfoController.SignedIn) async -> Response {
        if let sentence = await controller.changeRefusal(signedIn, adding: true) { return await controller.refused(sentence, signedIn) }
        guard let setup = controller.setups.setup(signedIn.token, now: clock.now), let code = setup.phoneCode else {
            return await controller.overview(signedIn, notice: nil, error: nil)
        }
        guard typed.count <= 16, typed == code else {
            let attempts = setup.phoneAttempts + 1
            guard attempts < 3 else {
                controller.setups.end(signedIn.token)
                return await controller.overview(
                    signedIn, notice: nil, error: "Too many wrong codes. Add the phone again to get a new code.")
            }
            controller.setups.update(signedIn.token, now: clock.now) { $0.phoneAttempts = attempts }
            return .html(
                SecurityInfoSetupPages.enterPhoneCode(
                    username: signedIn.user.userPrincipalName, token: signedIn.token, maskedPhone: nil, demoCode: nil,
                    error: "The code you entered didn't match. Try again."))
        }
        controller.setups.end(signedIn.token)
        await state.updateMethods(of: signedIn.user) { $0.sms = true }
        return await controller.overview(signedIn, notice: "SMS verified. Your phone was registered successfully.", error: nil)
    }

    func cancelSetups(_ signedIn: SecurityInfoController.SignedIn) { controller.setups.end(signedIn.token) }
}
