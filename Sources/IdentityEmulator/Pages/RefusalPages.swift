import FoundationEssentials

/// The pages a tenant refuses a sign-in with (``TenantPolicy``), as Entra words them: the
/// Conditional Access and account interrupts, each with its "Troubleshooting details" (what a help
/// desk asks for: error code, request id, correlation id, time, app, platform), "Update your
/// password", "More information required" and "Keep your account secure" (MFA registration), and
/// "Approval required" (the admin consent workflow).
enum RefusalPages {
    private typealias IDs = SignInPageIDs

    /// What the help desk needs about one refused request.
    struct Details {
        let failure: ServiceError
        let requestID: String
        let correlationID: String
        let time: Date
        let appName: String
        let appID: String
        let platform: String
    }

    /// The interrupt page for `details.failure`: its own title and sentence, the details below.
    static func interrupt(_ details: Details, username: String?) -> HTML {
        let (title, lead) = words(for: details.failure)
        let message = details.failure.message.replacing("{inner}", with: details.failure.codeText)
        let body: HTML = """
            <h1 id="pageTitle">\(title)</h1>
            <p id="errorMessage" role="alert">\(lead)</p>
            <div class="details" id="\(IDs.troubleshootingDetails)">
              <div><b>Troubleshooting details</b></div>
              <div>If you contact your administrator, send this info to them.</div>
              <div>Error Code: \(String(details.failure.codes.last ?? 0))</div>
              <div>Request Id: \(details.requestID)</div>
              <div>Correlation Id: \(details.correlationID)</div>
              <div>Timestamp: \(details.time.entraTimestamp)</div>
              <div>App name: \(details.appName)</div>
              <div>App id: \(details.appID)</div>
              <div>IP address: 127.0.0.1</div>
              <div>Device platform: \(details.platform)</div>
              <div>Device state: Unregistered</div>
              <div>Message: \(details.failure.codeText): \(message)</div>
            </div>
            """
        return PageLayout.microsoft(title: title, body: body, banner: username.map(PageLayout.identityBanner))
    }

    /// Each refusal's title and sentence, as Entra's pages put them.
    static func words(for failure: ServiceError) -> (title: String, lead: String) {
        switch failure.codes.last ?? 0 {
        case 53003:
            (
                "You cannot access this right now",
                "Your sign-in was successful but does not meet the criteria to access this resource. "
                    + "For example, you might be signing in from a browser, app, or location that is restricted by your admin."
            )
        case 53000:
            (
                "Help us keep your device secure",
                "Your admin requires the device requesting access to be managed by your organization "
                    + "and compliant with its policies."
            )
        case 530003:
            (
                "You can't get there from here",
                "This application contains sensitive information and can only be accessed from devices "
                    + "or client applications that meet your organization's management policy."
            )
        case 50053:
            (
                "Your account is locked",
                "Your account is temporarily locked to prevent unauthorized use. Try again later, and if you "
                    + "still have trouble, contact your admin."
            )
        case 50057:
            ("Your account has been locked", "Your account has been locked. Contact your support person to unlock it, then try again.")
        case 50020:
            ("Sign in", "The account you signed in with does not exist in this organization and cannot access the application.")
        default: ("Sign in", "Sorry, but we’re having trouble signing you in.")
        }
    }

    /// "Update your password": the password expired (AADSTS50055).
    static func updatePassword(action: String, ctx: String, username: String, error: String?) -> HTML {
        PageLayout.microsoft(
            title: "Update your password",
            body: """
                <form method="post" action="\(action)" autocomplete="off" novalidate>
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "password-update"))
                  <h1 id="pageTitle">Update your password</h1>
                  <p id="passwordExpiredMessage">You need to update your password because this is the first time you are signing in, or \
                  because your password has expired.</p>
                  \(PageLayout.error(error, id: IDs.passwordError))
                  <input type="password" name="\(IDs.Fields.currentPassword)" id="\(IDs.currentPassword)" placeholder="Current password" aria-label="Current password" autofocus>
                  <input type="password" name="\(IDs.Fields.newPassword)" id="\(IDs.newPassword)" placeholder="New password" aria-label="New password">
                  <input type="password" name="\(IDs.Fields.confirmPassword)" id="\(IDs.confirmPassword)" placeholder="Confirm password" aria-label="Confirm password">
                  <div class="buttons"><input type="submit" id="\(IDs.primaryButton)" class="btn btn-primary" value="Sign in"></div>
                </form>
                """, banner: PageLayout.identityBanner(username))
    }

    /// "More information required": the tenant requires MFA registration (AADSTS50079).
    static func moreInformationRequired(action: String, ctx: String, username: String) -> HTML {
        PageLayout.microsoft(
            title: "More information required",
            body: """
                <form method="post" action="\(action)">
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "proofup"))
                  <h1 id="pageTitle">More information required</h1>
                  <p id="proofUpMessage">Your organization needs more information to keep your account secure.</p>
                  <div class="links"><a href="https://aka.ms/mfasetup" id="proofUpLearnMore">Learn more</a></div>
                  <div class="buttons"><button type="submit" id="\(IDs.primaryButton)" class="btn btn-primary" autofocus>Next</button></div>
                </form>
                """, banner: PageLayout.identityBanner(username))
    }

    /// "Keep your account secure": a phone for the second factor.
    static func registerPhone(action: String, ctx: String, username: String, error: String?) -> HTML {
        PageLayout.microsoft(
            title: "Keep your account secure",
            body: """
                <form method="post" action="\(action)" autocomplete="off" novalidate>
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "proofup-phone"))
                  <h1 id="pageTitle">Keep your account secure</h1>
                  <p>Your organization requires you to set up the following methods of proving who you are: Phone.</p>
                  \(PageLayout.error(error, id: IDs.phoneError))
                  <input type="tel" name="\(IDs.Fields.phoneNumber)" id="\(IDs.phoneNumber)" placeholder="Phone number" aria-label="Phone number" autofocus>
                  <div class="buttons"><input type="submit" id="\(IDs.primaryButton)" class="btn btn-primary" value="Next"></div>
                </form>
                """, banner: PageLayout.identityBanner(username))
    }

    /// "Approval required": the tenant lets only administrators consent, and users may ask them.
    static func approvalRequired(action: String, ctx: String, username: String, appName: String) -> HTML {
        PageLayout.microsoft(
            title: "Approval required",
            body: """
                <form method="post" action="\(action)">
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "admin-request"))
                  <h1 id="pageTitle">Approval required</h1>
                  <div class="app"><div class="app-icon" aria-hidden="true">\(String(appName.prefix(1)))</div>
                    <div><div id="appName"><b>\(appName)</b></div><div class="small">unverified</div></div></div>
                  <p id="adminApprovalMessage">This app requires your admin's approval to access resources in your organization. Enter a \
                  justification for requesting this app.</p>
                  <textarea name="\(IDs.Fields.justification)" id="\(IDs.justification)" aria-label="Justification" maxlength="500"></textarea>
                  <div class="buttons">
                    \(PageLayout.actionButton("Back to app", id: IDs.secondaryButton, name: "approval", value: "return"))
                    <button type="submit" name="approval" value="request" id="\(IDs.primaryButton)" class="btn btn-primary" autofocus>Request \
                    approval</button>
                  </div>
                </form>
                """, banner: PageLayout.identityBanner(username))
    }
}
