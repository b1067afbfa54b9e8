import FoundationEssentials

/// "Keep your account secure": setting up Microsoft Authenticator during a sign-in (the
/// registration interrupt after a Temporary Access Pass, or the registration campaign's nudge),
/// as Entra's combined registration shows it: get the app, scan the QR code (or type the code and
/// URL under "Can't scan image?"), approve the test notification, done.
enum RegistrationPages {
    private typealias IDs = SignInPageIDs

    /// The first step. `skipDays`: the campaign's "Skip for now" (nil: registration is required).
    static func startWithTheApp(action: String, ctx: String, username: String, skipDays: Int?) -> HTML {
        let skip: HTML? = skipDays.map { days in
            PageLayout.actionButton(
                days == 0 ? "Skip for now" : "Skip for now (\(days) \(days == 1 ? "day" : "days") until this is required)",
                id: "skipMfaRegistration", name: "action", value: "skip", secondary: true, style: "link")
        }
        return PageLayout.microsoft(
            title: "Keep your account secure",
            body: """
                <form method="post" action="\(action)">
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "proofup-app"))
                  <h1 id="pageTitle">Keep your account secure</h1>
                  <p id="ProofUpDescription">Your organization requires you to set up the following methods of proving who you are.</p>
                  <h2>Microsoft Authenticator</h2>
                  <p><b>Start by getting the app</b></p>
                  <p>On your phone, install the Microsoft Authenticator app. After you install the Microsoft Authenticator app on your \
                  device, choose "Next".</p>
                  <div class="links">\(skip)</div>
                  <div class="buttons"><button type="submit" id="\(IDs.primaryButton)" class="btn btn-primary" autofocus>Next</button></div>
                </form>
                """, banner: PageLayout.identityBanner(username))
    }

    /// "Scan the QR code": the activation the phone reads, and the same in words.
    static func scanQRCode(action: String, ctx: String, username: String, activation: AuthenticatorActivation, error: String?) -> HTML {
        return PageLayout.microsoft(
            title: "Keep your account secure",
            body: """
                <form method="post" action="\(action)">
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "proofup-app-scanned"))
                  <h1 id="pageTitle">Keep your account secure</h1>
                  <h2>Microsoft Authenticator</h2>
                  <p><b>Scan the QR code</b></p>
                  <p>Use the Microsoft Authenticator app to scan the QR code. This will connect the Microsoft Authenticator app with your \
                  account.</p>
                  \(PageLayout.error(error, id: "proofUpError"))
                  \(activationCode(activation))
                  <div class="buttons"><button type="submit" id="\(IDs.primaryButton)" class="btn btn-primary" autofocus>Next</button></div>
                </form>
                """, banner: PageLayout.identityBanner(username))
    }

    /// The activation as a QR code, and in words under "Can't scan image?" (the same on the
    /// sign-in's interrupt and in Security info).
    static func activationCode(_ activation: AuthenticatorActivation) -> HTML {
        let qr: HTML =
            (try? QRCode(text: activation.uri)).map { HTML(raw: $0.svg(label: "QR code to scan with the Microsoft Authenticator app")) }
            ?? ""
        return """
            <div class="qr" id="\(IDs.qrCode)">\(qr)</div>
            <details><summary>Can't scan image?</summary>
              <p>Enter the following into your app:</p>
              <p>Code: <code id="\(IDs.activationCode)">\(activation.code)</code></p>
              <p>URL: <code id="\(IDs.activationURL)">\(activation.url)</code></p>
            </details>
            """
    }

    /// "Success!": the app is set up; Done goes on with the sign-in.
    static func success(action: String, ctx: String, username: String) -> HTML {
        PageLayout.microsoft(
            title: "Keep your account secure",
            body: """
                <form method="post" action="\(action)">
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "proofup-done"))
                  <h1 id="pageTitle">Success!</h1>
                  <p id="ProofUpDescription">Great job! You have successfully set up your security info. Choose "Done" to continue \
                  signing in.</p>
                  <p><b>Default sign-in method:</b> Microsoft Authenticator - notification</p>
                  <div class="buttons"><button type="submit" id="\(IDs.primaryButton)" class="btn btn-primary" autofocus>Done</button></div>
                </form>
                """, banner: PageLayout.identityBanner(username))
    }
}
