import FoundationEssentials

/// The workforce sign-in pages, with Microsoft's field names and element ids (`loginfmt`/`i0116`,
/// `passwd`/`i0118`, `otc`/`idTxtBx_SAOTCC_OTC`, primary `idSIButton9`, secondary `idBtn_Back`),
/// so automation written against Microsoft's pages works here.
enum SignInPages {
    private typealias IDs = SignInPageIDs

    static func username(action: String, ctx: String, hint: String?, error: String?, demoNote: Bool = false) -> HTML {
        let demo: HTML? =
            demoNote
            ? "<div class=\"demo\" id=\"demoAccounts\">Demo mode: alex@contoso.onmicrosoft.com, megan@contoso.onmicrosoft.com "
                + "(SMS code), or pat@fabrikam.example (federated: Fabrikam’s own sign-in page); the password is "
                + "<code>\(IDs.demoPassword)</code></div>"
            : nil
        return PageLayout.microsoft(
            title: "Sign in to your account",
            body: """
                <form method="post" action="\(action)" autocomplete="off" novalidate>
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "username"))
                  <h1 id="pageTitle">Sign in</h1>
                  \(demo)
                  \(PageLayout.error(error, id: "usernameError"))
                  <input type="email" name="\(IDs.Fields.userName)" id="\(IDs.userName)" value="\(hint ?? "")" placeholder="Email, phone, or Skype"
                         aria-label="Enter your email, phone, or Skype." aria-required="true" autofocus required>
                  <div class="links"><a href="#" id="cantAccessAccount">Can’t access your account?</a></div>
                  <div class="buttons"><input type="submit" id="\(IDs.primaryButton)" class="btn btn-primary" value="Next"></div>
                  <div class="links">\(PageLayout.actionButton("Sign-in options", id: "signInOptions", name: "action", value: "sign-in-options", secondary: false, style: "link"))</div>
                </form>
                """)
    }

    static func password(action: String, ctx: String, username: String, error: String?) -> HTML {
        PageLayout.microsoft(
            title: "Sign in to your account",
            body: """
                <form method="post" action="\(action)" autocomplete="off" novalidate>
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "password"))
                  <h1 id="pageTitle">Enter password</h1>
                  \(PageLayout.error(error, id: IDs.passwordError))
                  <input type="password" name="\(IDs.Fields.password)" id="\(IDs.password)" placeholder="Password" aria-label="Enter the password for \(username)"
                         aria-required="true" autofocus required>
                  <div class="links"><a href="#" id="idA_PWD_ForgotPassword">Forgot my password</a></div>
                  <div class="buttons">
                    \(PageLayout.actionButton("Back", id: IDs.secondaryButton, name: "action", value: "back"))
                    <input type="submit" id="\(IDs.primaryButton)" class="btn btn-primary" value="Sign in">
                  </div>
                </form>
                """, banner: PageLayout.identityBanner(username))
    }

    static func staySignedIn(action: String, ctx: String, username: String) -> HTML {
        PageLayout.microsoft(
            title: "Stay signed in?",
            body: """
                <form method="post" action="\(action)">
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "kmsi"))
                  <h1 id="pageTitle">Stay signed in?</h1>
                  <p>Stay signed in so you don’t have to sign in again next time.</p>
                  <label class="checkbox"><input type="checkbox" name="DontShowAgain" id="\(IDs.staySignedIn)" value="true"> Don’t show \
                  this again</label>
                  <div class="buttons">
                    \(PageLayout.actionButton("No", id: IDs.secondaryButton, name: "kmsi", value: "no"))
                    <button type="submit" name="kmsi" value="yes" id="\(IDs.primaryButton)" class="btn btn-primary" autofocus>Yes</button>
                  </div>
                </form>
                """, banner: PageLayout.identityBanner(username))
    }

    /// What each permission is called on the consent page.
    static func permissionText(_ key: String) -> String {
        switch key {
        case "graph:User.Read": "Sign you in and read your profile"
        case "graph:User.ReadBasic.All": "Read all users’ basic profiles"
        case "graph:User.Read.All": "Read all users’ full profiles"
        case "graph:Directory.Read.All": "Read directory data"
        case "graph:Mail.Read": "Read your mail"
        case "graph:Calendars.Read": "Read your calendars"
        case "graph:People.Read": "Read your relevant people list"
        case "exchange:IMAP.AccessAsUser.All": "Read and write access to your mail (IMAP)"
        case "exchange:POP.AccessAsUser.All": "Read your mail (POP)"
        case "exchange:SMTP.Send": "Send mail as you (SMTP)"
        case "offline_access": "Maintain access to data you have given it access to"
        case "profile": "View your basic profile"
        case "email": "View your email address"
        default: key
        }
    }

    static func consent(action: String, ctx: String, username: String, appName: String, permissions: [String]) -> HTML {
        let items = permissions.map { HTML("<li>\(permissionText($0))</li>") }
        return PageLayout.microsoft(
            title: "Permissions requested",
            body: """
                <form method="post" action="\(action)">
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "consent"))
                  <h1 id="pageTitle">Permissions requested</h1>
                  <div class="app"><div class="app-icon" aria-hidden="true">\(String(appName.prefix(1)))</div>
                    <div><div id="appName"><b>\(appName)</b></div><div class="small">unverified</div></div></div>
                  <p>This app would like to:</p>
                  <ul class="permissions" id="\(IDs.permissionList)">\(items)</ul>
                  <p class="small">Accepting these permissions means that you allow this app to use your data as specified in their terms \
                  of service and privacy statement. You can change these permissions at https://myapps.microsoft.com.</p>
                  <div class="buttons">
                    \(PageLayout.actionButton("Cancel", id: IDs.secondaryButton, name: "consent", value: "cancel"))
                    <button type="submit" name="consent" value="accept" id="\(IDs.primaryButton)" class="btn btn-primary" autofocus>Accept</button>
                  </div>
                </form>
                """, banner: PageLayout.identityBanner(username))
    }

    /// Entra's "Need admin approval": the tenant lets only an administrator consent.
    static func needAdminApproval(action: String, ctx: String, username: String, appName: String) -> HTML {
        PageLayout.microsoft(
            title: "Need admin approval",
            body: """
                <form method="post" action="\(action)">
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "admin-approval"))
                  <h1 id="pageTitle">Need admin approval</h1>
                  <div class="app"><div class="app-icon" aria-hidden="true">\(String(appName.prefix(1)))</div>
                    <div><div id="appName"><b>\(appName)</b></div><div class="small">unverified</div></div></div>
                  <p id="adminApprovalMessage">\(appName) needs permission to access resources in your organization that only an admin \
                  can grant. Please ask an admin to grant permission to this app before you can use it.</p>
                  <div class="links"><a href="#" id="adminAccountLink">Have an admin account? Sign in with that account</a></div>
                  <div class="buttons">
                    <button type="submit" name="approval" value="return" id="\(IDs.primaryButton)" class="btn btn-primary" autofocus>Return to the \
                    application without granting consent</button>
                  </div>
                </form>
                """, banner: PageLayout.identityBanner(username))
    }

    static func pickAccount(action: String, ctx: String, user: DirectoryUser) -> HTML {
        PageLayout.microsoft(
            title: "Pick an account",
            body: """
                <form method="post" action="\(action)">
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "pick"))
                  <h1 id="pageTitle">Pick an account</h1>
                  <button type="submit" name="account" value="session" class="tile" id="signedInAccount" autofocus aria-label="Sign in with \
                  \(user.userPrincipalName)">
                    <span class="avatar" aria-hidden="true">\(String(user.displayName.prefix(1)))</span>
                    <span><div>\(user.displayName)</div><div class="small">\(user.userPrincipalName)</div><div class="small">Signed \
                    in</div></span>
                  </button>
                  <button type="submit" name="account" value="other" class="tile" id="otherTile">
                    <span class="avatar" aria-hidden="true">+</span><span>Use another account</span>
                  </button>
                </form>
                """)
    }

    /// Entra's error page: for a client or redirect URI it cannot trust, it never redirects.
    static func error(_ failure: ServiceError, traceID: String, correlationID: String, at time: Date) -> HTML {
        let message = failure.message.replacing("{inner}", with: failure.codeText)
        let body: HTML = """
            <h1 id="pageTitle">Sign in</h1>
            <p>Sorry, but we’re having trouble signing you in.</p>
            <p id="errorMessage" role="alert"><b>\(failure.codeText)</b>: \(message)</p>
            <div class="details" id="\(IDs.troubleshootingDetails)">
              <div><b>Troubleshooting details</b></div>
              <div>Error Code: \(String(failure.codes.last ?? 0))</div>
              <div>Request Id: \(traceID)</div>
              <div>Correlation Id: \(correlationID)</div>
              <div>Timestamp: \(time.entraTimestamp)</div>
              <div>Message: \(failure.codeText)</div>
            </div>
            """
        return failure.service == .b2c
            ? PageLayout.b2c(tenant: "Fabrikam", title: "Error", body: body)
            : PageLayout.microsoft(title: "Sign in to your account", body: body)
    }

    /// Microsoft's "page not found", for a path this host does not serve (the federated
    /// identity provider's, asked of Entra's host).
    static func notFound() -> HTML {
        PageLayout.microsoft(
            title: "Page not found",
            body: """
                <h1 id="pageTitle">We couldn’t find that page</h1>
                <p id="errorMessage" role="alert">The address is not served by this host (HTTP 404).</p>
                """)
    }

    /// `response_mode=form_post`: an auto-submitting form to the redirect URI.
    static func formPost(to uri: String, fields: FormFields) -> HTML {
        let inputs = fields.pairs.map { PageLayout.hidden($0.name, $0.value) }
        return PageLayout.document(
            title: "Working...",
            body: """
                <form method="POST" name="hiddenform" action="\(uri)">
                  \(inputs)
                  <noscript><p>Script is disabled. Click Submit to continue.</p><input type="submit" value="Submit"></noscript>
                </form>
                <script>document.forms[0].submit();</script>
                """, bodyClass: "ms")
    }
}
