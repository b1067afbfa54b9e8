import FoundationEssentials

/// The device code flow's verification pages (Microsoft's `microsoft.com/devicelogin`): the code
/// goes in `otc`; then "Are you trying to sign in to …?"; then the usual sign-in pages; then a
/// page saying the device is signed in.
enum DeviceCodePages {
    private typealias IDs = SignInPageIDs

    /// "Enter code": the code field, then the primary button.
    static func enterCode(error: String?, typed: String? = nil) -> HTML {
        PageLayout.microsoft(
            title: "Enter code",
            body: """
                <form method="post" action="/devicelogin" autocomplete="off" novalidate>
                  \(PageLayout.hidden("step", "code"))
                  <h1 id="pageTitle">Enter code</h1>
                  <p id="otcDescription">Enter the code displayed on your app or device.</p>
                  \(PageLayout.error(error, id: IDs.deviceCodeError))
                  <input type="text" name="\(IDs.Fields.deviceCode)" id="\(IDs.deviceCode)" value="\(typed ?? "")" placeholder="Code" maxlength="20"
                         aria-label="Code" aria-required="true" autocapitalize="characters" autofocus required>
                  <div class="buttons"><input type="submit" id="\(IDs.primaryButton)" class="btn btn-primary" value="Next"></div>
                </form>
                """)
    }

    /// "Are you trying to sign in to …?": Continue, or Cancel (the device is then refused).
    static func confirm(action: String, ctx: String, appName: String) -> HTML {
        PageLayout.microsoft(
            title: "Sign in",
            body: """
                <form method="post" action="\(action)">
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "device-confirm"))
                  <h1 id="pageTitle">Are you trying to sign in to \(appName)?</h1>
                  <div class="app"><div class="app-icon">\(String(appName.prefix(1)))</div><div id="appName">\(appName)</div></div>
                  <p id="deviceWarning">Only continue if you downloaded the app from a store or website that you trust.</p>
                  <div class="buttons">
                    \(PageLayout.actionButton("Cancel", id: IDs.secondaryButton, name: "action", value: "cancel"))
                    <button type="submit" name="action" value="continue" id="\(IDs.primaryButton)" class="btn btn-primary" autofocus>Continue</button>
                  </div>
                </form>
                """)
    }

    /// The end of the pages: the device's next poll gets its tokens.
    static func signedIn(appName: String) -> HTML {
        PageLayout.microsoft(
            title: "Sign in",
            body: """
                <h1 id="pageTitle">\(appName)</h1>
                <p id="deviceSignedIn">You have signed in to the \(appName) application on your device. You may now close this window.</p>
                """)
    }

    /// Cancel, or consent declined: the device is refused (`authorization_declined`).
    static func declined(appName: String) -> HTML {
        PageLayout.microsoft(
            title: "Sign in",
            body: """
                <h1 id="pageTitle">\(appName)</h1>
                <p id="deviceDeclined">You’ve declined to sign in to \(appName) on the other device. You may now close this window.</p>
                """)
    }
}
