/// Azure AD B2C's self-asserted pages with B2C's element ids (`signInName`, `password`, `next`,
/// `forgotPassword`, `createAccount`, `continue`, `cancel`).
enum B2CPages {
    private typealias IDs = SignInPageIDs

    static func signIn(action: String, ctx: String, tenant: String, email: String?, error: String?) -> HTML {
        PageLayout.b2c(
            tenant: tenant, title: "Sign up or sign in",
            body: """
                <form method="post" action="\(action)" id="localAccountForm" novalidate>
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "b2c-signin"))
                  <h1 id="pageTitle">Sign in</h1>
                  <p>Sign in with your email address</p>
                  \(PageLayout.error(error, id: "pageError"))
                  <label for="\(IDs.b2cSignInName)">Email Address</label>
                  <input type="email" id="\(IDs.b2cSignInName)" name="\(IDs.Fields.b2cSignInName)" value="\(email ?? "")" placeholder="Email Address" \
                  aria-label="Email Address" autofocus required>
                  <label for="\(IDs.b2cPassword)">Password</label>
                  <input type="password" id="\(IDs.b2cPassword)" name="\(IDs.Fields.b2cPassword)" placeholder="Password" aria-label="Password" required>
                  <div class="row">\(PageLayout.actionButton(
                      "Forgot your password?", id: IDs.b2cForgotPassword, name: "action", value: "forgotPassword", secondary: false,
                      style: "btn-link"))</div>
                  <button type="submit" id="\(IDs.b2cNext)" class="btn btn-primary">Sign in</button>
                  <div class="divider">Don't have an account?
                    \(PageLayout.actionButton("Sign up now", id: IDs.b2cCreateAccount, name: "action", value: "signUp", secondary: false, style: "btn-link"))</div>
                </form>
                """)
    }

    static func signUp(action: String, ctx: String, tenant: String, values: FormFields, error: String?) -> HTML {
        PageLayout.b2c(
            tenant: tenant, title: "Sign up",
            body: """
                <form method="post" action="\(action)" id="attributeVerification" novalidate>
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "b2c-signup"))
                  <h1 id="pageTitle">Sign up</h1>
                  \(PageLayout.error(error, id: "pageError"))
                  <label for="email">Email Address</label>
                  <input type="email" id="email" name="email" value="\(values["email"] ?? "")" aria-label="Email Address" required \
                  autofocus>
                  <label for="newPassword">New Password</label>
                  <input type="password" id="newPassword" name="newPassword" aria-label="New Password" required>
                  <label for="reenterPassword">Confirm New Password</label>
                  <input type="password" id="reenterPassword" name="reenterPassword" aria-label="Confirm New Password" required>
                  <label for="displayName">Display Name</label>
                  <input type="text" id="displayName" name="displayName" value="\(values["displayName"] ?? "")" aria-label="Display Name">
                  <label for="givenName">Given Name</label>
                  <input type="text" id="givenName" name="givenName" value="\(values["givenName"] ?? "")" aria-label="Given Name">
                  <label for="surname">Surname</label>
                  <input type="text" id="surname" name="surname" value="\(values["surname"] ?? "")" aria-label="Surname">
                  <button type="submit" name="action" value="create" id="continue" class="btn btn-primary">Create</button>
                  \(PageLayout.actionButton("Cancel", id: "cancel", name: "action", value: "cancel"))
                </form>
                """)
    }

    enum ResetStage { case email, code, newPassword }

    static func passwordReset(
        action: String, ctx: String, tenant: String, stage: ResetStage, email: String?, demoCode: String?, error: String?
    ) -> HTML {
        let fields: HTML
        switch stage {
        case .email:
            fields = """
                <p>Enter your email address and we'll send you a verification code.</p>
                <label for="email">Email Address</label>
                <input type="email" id="email" name="email" value="\(email ?? "")" aria-label="Email Address" required autofocus>
                <button type="submit" name="action" value="sendCode" id="emailVer_but_send" class="btn btn-primary">Send verification \
                code</button>
                """
        case .code:
            let demo: HTML? = demoCode.map {
                "<div class=\"demo\" id=\"\(IDs.demoCode)\">Demo mode: the email says <code>\($0)</code></div>"
            }
            fields = """
                <p>Verification code has been sent to your inbox. Please copy it to the input box below.</p>
                <div class="identity">\(email ?? "")</div>
                \(demo)
                <label for="emailVerificationCode">Verification code</label>
                <input type="text" id="emailVerificationCode" name="emailVerificationCode" inputmode="numeric" \
                autocomplete="one-time-code" aria-label="Verification code" required autofocus>
                <button type="submit" name="action" value="verifyCode" id="emailVer_but_verify" class="btn btn-primary">Verify code</button>
                """
        case .newPassword:
            fields = """
                <div class="identity">\(email ?? "")</div>
                <label for="newPassword">New Password</label>
                <input type="password" id="newPassword" name="newPassword" aria-label="New Password" required autofocus>
                <label for="reenterPassword">Confirm New Password</label>
                <input type="password" id="reenterPassword" name="reenterPassword" aria-label="Confirm New Password" required>
                <button type="submit" name="action" value="setPassword" id="continue" class="btn btn-primary">Continue</button>
                """
        }
        return PageLayout.b2c(
            tenant: tenant, title: "Reset your password",
            body: """
                <form method="post" action="\(action)" id="attributeVerification" novalidate>
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "b2c-reset"))
                  <h1 id="pageTitle">Reset your password</h1>
                  \(PageLayout.error(error, id: "pageError"))
                  \(fields)
                  \(PageLayout.actionButton("Cancel", id: "cancel", name: "action", value: "cancel"))
                </form>
                """)
    }
}
