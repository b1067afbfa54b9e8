import FoundationEssentials

/// "Security info" (My Sign-Ins, https://mysignins.microsoft.com/security-info), as Entra shows
/// it: "These are the methods you use to sign into your account or reset your password.", the
/// default sign-in method, one row per method with Delete, "+ Add sign-in method", and the
/// setup of each method. Every form posts to `/security-info` with the session's `token`.
enum SecurityInfoPages {
    private typealias IDs = SignInPageIDs

    static let action = SecurityInfoController.path

    /// What a change without MFA in the session says.
    static let needsMFA =
        "To add or delete a sign-in method, verify your identity first: your sign-in didn't use multifactor authentication. "
        + "Sign in again with a second method, then try again."
    /// What adding a passkey says when the session's MFA is older than five minutes.
    static let passkeyNeedsRecentMFA =
        "Before you can add a passkey, you must complete multifactor authentication within the past five minutes. "
        + "Sign in again with a second method, then add the passkey."

    /// One registered method as the list shows it.
    struct Row: Sendable {
        let method: AuthenticationMethod
        /// The phone's masked number, the Authenticator's device name, a pass's expiry, a passkey's name.
        let detail: String?
        /// What Delete posts as `method`: the method's name, or `passkey:<credential id>`.
        var key: String

        init(method: AuthenticationMethod, detail: String?, key: String? = nil) {
            self.method = method
            self.detail = detail
            self.key = key ?? method.rawValue
        }
    }

    /// The list's name of a method.
    static func name(_ method: AuthenticationMethod) -> String {
        switch method {
        case .sms: "Phone"
        case .microsoftAuthenticator: "Microsoft Authenticator"
        case .softwareOath: "Authenticator app"
        case .temporaryAccessPass: "Temporary Access Pass"
        case .fido2: "Passkey"
        }
    }

    /// What the list says under a method's name.
    static func kind(_ method: AuthenticationMethod) -> String {
        switch method {
        case .sms: "Text a code"
        case .microsoftAuthenticator: "Push multi-factor authentication (MFA)"
        case .softwareOath: "Time-based one-time password (TOTP)"
        case .temporaryAccessPass: "Sign in without a password until it expires"
        case .fido2: "Passkey or security key"
        }
    }

    /// "Default sign-in method: …" for `method`.
    static func defaultText(_ method: AuthenticationMethod, maskedPhone: String) -> String {
        switch method {
        case .sms: "Phone - text \(maskedPhone)"
        case .microsoftAuthenticator: "Microsoft Authenticator - notification"
        case .softwareOath: "Authenticator app or hardware token - code"
        case .fido2: "Passkey"
        case .temporaryAccessPass: "Temporary Access Pass"
        }
    }

    /// The chooser's entries for adding a method.
    private static func addChoice(_ method: AuthenticationMethod) -> (value: String, title: String, text: String)? {
        switch method {
        case .microsoftAuthenticator:
            ("microsoftAuthenticator", "Microsoft Authenticator", "Approve sign-in requests or use one-time codes")
        case .softwareOath: ("softwareOath", "Authenticator app", "I want to use a different authenticator app")
        case .sms: ("sms", "Phone", "Get a text to sign in with a code")
        case .fido2: ("passkey", "Passkey or security key", "Sign in with your face, fingerprint, PIN or security key")
        case .temporaryAccessPass: nil
        }
    }

    static func form(_ token: String, _ content: HTML, id: String? = nil) -> HTML {
        let identifier: HTML = id.map { " id=\"\($0)\"" } ?? ""
        return """
            <form method="post" action="\(action)"\(identifier)>\(PageLayout.hidden("token", token))\(content)</form>
            """
    }

    static func page(_ title: String, username: String, _ body: HTML) -> HTML {
        PageLayout.microsoft(title: title, body: body, banner: PageLayout.identityBanner(username))
    }

    static func cancelButton() -> HTML {
        PageLayout.actionButton("Cancel", id: IDs.secondaryButton, name: "action", value: "cancel")
    }

    // MARK: The list

    /// The methods, the default one, the chooser, and a notice or an error (with "Sign in
    /// again" when the session lacks MFA).
    static func overview(
        username: String, token: String, rows: [Row], defaultMethod: String?, offered: [AuthenticationMethod], onlyPass: Bool,
        notice: String?, error: String?, signInAgain: String?
    ) -> HTML {
        let list: [HTML] = rows.map { row in
            let detail: HTML = row.detail.map { "<span class=\"small\" id=\"detail-\(row.key)\">\($0)</span>" } ?? ""
            let delete = form(
                token,
                """
                \(PageLayout.hidden("action", "delete"))\(PageLayout.hidden("method", row.key))\
                <button type="submit" class="btn-link" id="delete-\(row.key)">Delete</button>
                """)
            return """
                <li class="method" id="method-\(row.key)"><b>\(name(row.method))</b> \
                <span class="small">\(kind(row.method))</span> \(detail) \(delete)</li>
                """
        }
        let choices: [HTML] = offered.compactMap(addChoice).map { choice in
            """
            <button type="submit" name="method" value="\(choice.value)" class="tile" id="add-\(choice.value)">\
            <span><b>\(choice.title)</b><br><span class="small">\(choice.text)</span></span></button>
            """
        }
        let defaultLine: HTML =
            defaultMethod.map { "<p id=\"defaultMethod\"><b>Default sign-in method:</b> \($0)</p>" } ?? ""
        let banner: HTML =
            onlyPass
            ? "<p class=\"demo\" id=\"addMethodBanner\">You don't have a sign-in method yet besides a Temporary Access Pass. "
                + "Add a sign-in method now.</p>" : ""
        let noticeLine: HTML = notice.map { "<p class=\"demo\" role=\"status\" id=\"securityInfoNotice\">\($0)</p>" } ?? ""
        let again: HTML =
            error == nil
            ? "" : signInAgain.map { "<p><a id=\"signInAgain\" href=\"\($0)\">Sign in again with multifactor authentication</a></p>" } ?? ""
        let chooser = form(
            token, "\(PageLayout.hidden("action", "add"))<p><b>Add a sign-in method</b></p><div role=\"list\">\(choices)</div>")
        return page(
            "Security info", username: username,
            """
            <h1 id="pageTitle">Security info</h1>
            <p>These are the methods you use to sign into your account or reset your password.</p>
            \(banner)\(noticeLine)
            \(PageLayout.error(error, id: "securityInfoError"))
            \(again)
            \(defaultLine)
            <ul class="permissions" id="methodList">\(list)</ul>
            <details id="addMethod"><summary>+ Add sign-in method</summary>
            \(chooser)
            </details>
            """)
    }

    /// What a form without this session's anti-forgery value is told.
    static let forgedSentence =
        "This request didn't come from your Security info page, so nothing was changed. Open Security info again and retry."

    /// A form whose anti-forgery value is missing or not this session's.
    static func forged() -> HTML {
        PageLayout.microsoft(
            title: "Security info",
            body: """
                <h1 id="pageTitle">Security info</h1>
                \(PageLayout.error(forgedSentence, id: "securityInfoError"))
                <p><a href="\(action)">Security info</a></p>
                """)
    }
}
