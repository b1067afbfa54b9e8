import FoundationEssentials

/// The second-factor pages, as Entra shows them: "Verify your identity" (the registered methods,
/// "Sign in another way"), "Approve sign in request" (Microsoft Authenticator's number matching,
/// which waits on `/{tenant}/SAS/EndAuth`), "Enter code" for an authenticator app, "Enter
/// Temporary Access Pass", and what a denied or unanswered request says. Texts and ids from
/// Microsoft's pages (docs/EMULATOR.md names the sources).
enum SecondFactorPages {
    private typealias IDs = SignInPageIDs

    /// "Sign in another way": a link-styled button that posts `action=another-way`.
    static func anotherWay(_ text: String = "Sign in another way") -> HTML {
        PageLayout.actionButton(text, id: IDs.signInAnotherWay, name: "action", value: "another-way", secondary: false, style: "link")
    }

    /// "Verify your identity": one row per method the user can use now, strongest first.
    static func verifyIdentity(
        action: String, ctx: String, username: String, methods: [AuthenticationMethod], maskedPhone: String, note: String? = nil
    ) -> HTML {
        let rows: [HTML] = methods.map { method in
            let text = method == .sms ? "Text \(maskedPhone)" : method.choiceText
            return """
                <button type="submit" name="\(IDs.Fields.authMethodID)" value="\(method.authMethodID)" class="tile" \
                data-value="\(method.authMethodID)" id="proof_\(method.authMethodID)"><span>\(text)</span></button>
                """
        }
        return PageLayout.microsoft(
            title: "Verify your identity",
            body: """
                <form method="post" action="\(action)">
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "verify-identity"))
                  <h1 id="pageTitle">Verify your identity</h1>
                  \(PageLayout.error(note, id: "verifyIdentityNote"))
                  <div id="\(IDs.proofList)" role="list">\(rows)</div>
                  <div class="buttons">\(PageLayout.actionButton("Cancel", id: IDs.secondaryButton, name: "action", value: "back"))</div>
                </form>
                """, banner: PageLayout.identityBanner(username))
    }

    /// "Approve sign in request": the number to type into the Authenticator app; the page asks
    /// `EndAuth` until the phone answered, then posts the step (a browser without scripts presses
    /// the button itself).
    static func approveSignIn(
        action: String, ctx: String, username: String, number: Int, endAuth: String, step: String = "sas", title: String? = nil
    ) -> HTML {
        PageLayout.microsoft(
            title: title ?? "Approve sign in request",
            body: """
                <form method="post" action="\(action)" id="sasForm">
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", step))
                  <h1 id="pageTitle">\(title ?? "Approve sign in request")</h1>
                  <p id="idDiv_SAOTCAS_Description">Open your Authenticator app, and enter the number shown to sign in.</p>
                  <div id="\(IDs.displaySign)" class="displaySign" aria-live="polite" aria-label="Number to enter: \(number)">\(number)</div>
                  <p class="small" id="idDiv_SAOTCAS_Hint">No numbers in your app? Make sure to upgrade to the latest version.</p>
                  <noscript><input type="submit" class="btn btn-primary" value="I entered the number"></noscript>
                  <div class="links">\(anotherWay("I can't use my Microsoft Authenticator app right now"))</div>
                </form>
                <script>\(HTML(raw: pollScript(endAuth: endAuth, ctx: ctx)))</script>
                """, banner: PageLayout.identityBanner(username))
    }

    /// Asks `EndAuth` at once, and again while it answers `AuthenticationPending` (it holds each
    /// question a few seconds while nothing changes), then submits the page's form.
    private static func pollScript(endAuth: String, ctx: String) -> String {
        """
        (function () {
          var count = 0;
          function ask() {
            count += 1;
            fetch('\(endAuth)', { method: 'POST', headers: { 'Content-Type': 'application/json' },
              body: JSON.stringify({ AuthMethodId: 'PhoneAppNotification', Method: 'EndAuth', FlowToken: '\(ctx)', PollCount: count }) })
              .then(function (answer) { return answer.json(); })
              .then(function (result) {
                if (result.ResultValue === 'AuthenticationPending') { ask(); }
                else { document.getElementById('sasForm').submit(); }
              })
              .catch(function () { setTimeout(ask, 1000); });
          }
          ask();
        })();
        """
    }

    /// What a request the phone did not approve says: denied, or no answer in time.
    static func requestNotApproved(
        action: String, ctx: String, username: String, outcome: AuthenticatorPushes.Outcome
    ) -> HTML {
        let (title, sentence) =
            outcome == .timedOut
            ? (
                "We didn't hear from you",
                "We sent an identity verification request to your Microsoft Authenticator app, but we didn't "
                    + "hear from you in time."
            )
            : ("Request denied", "We sent an identity verification request to your mobile device, but you denied it.")
        return PageLayout.microsoft(
            title: title,
            body: """
                <form method="post" action="\(action)">
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "sas-retry"))
                  <h1 id="pageTitle">\(title)</h1>
                  <p id="errorMessage" role="alert">\(sentence)</p>
                  <div class="links">\(anotherWay())</div>
                  <div class="buttons">
                    <button type="submit" id="\(IDs.primaryButton)" class="btn btn-primary" autofocus>Send another request to my \
                    Microsoft Authenticator app</button>
                  </div>
                </form>
                """, banner: PageLayout.identityBanner(username))
    }

    /// "Enter code": the six digits an authenticator app shows (TOTP), or the texted code.
    static func enterCode(
        action: String, ctx: String, username: String, method: AuthenticationMethod, maskedPhone: String, demoCode: String?,
        error: String?, others: Bool
    ) -> HTML {
        let description =
            method == .sms
            ? "We texted your phone \(maskedPhone). Please enter the code to sign in."
            : "Enter the code displayed in the authenticator app on your mobile device"
        let demo: HTML? = demoCode.map {
            "<div class=\"demo\" id=\"\(IDs.demoCode)\">Demo mode: the text message says <code>\($0)</code></div>"
        }
        return PageLayout.microsoft(
            title: "Enter code",
            body: """
                <form method="post" action="\(action)" autocomplete="off" novalidate>
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "otc"))\(PageLayout.hidden("mfaMethod", method.rawValue))
                  <h1 id="pageTitle">Enter code</h1>
                  <p id="idDiv_SAOTCC_Description">\(description)</p>
                  \(demo)
                  \(PageLayout.error(error, id: "idSpan_SAOTCC_Error_OTC"))
                  <input type="tel" name="\(IDs.Fields.smsCode)" id="\(IDs.smsCode)" inputmode="numeric" autocomplete="one-time-code" \
                  maxlength="8" placeholder="Code" aria-label="Code" aria-required="true" autofocus required>
                  <div class="links">\(others ? anotherWay("Having trouble? Sign in another way") : nil)</div>
                  <div class="buttons">
                    \(PageLayout.actionButton("Back", id: IDs.secondaryButton, name: "action", value: "back"))
                    <input type="submit" id="\(IDs.smsContinue)" class="btn btn-primary" value="Verify">
                  </div>
                </form>
                """, banner: PageLayout.identityBanner(username))
    }

    /// "Enter Temporary Access Pass", in place of the password.
    static func temporaryAccessPass(action: String, ctx: String, username: String, error: String?) -> HTML {
        let usePassword = PageLayout.actionButton(
            "Use your password instead", id: "usePassword", name: "action", value: "password", secondary: false, style: "link")
        return PageLayout.microsoft(
            title: "Enter Temporary Access Pass",
            body: """
                <form method="post" action="\(action)" autocomplete="off" novalidate>
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "tap"))
                  <h1 id="pageTitle">Enter Temporary Access Pass</h1>
                  \(PageLayout.error(error, id: IDs.accessPassError))
                  <input type="password" name="\(IDs.Fields.accessPass)" id="\(IDs.accessPass)" autocomplete="off" \
                  placeholder="Temporary Access Pass" aria-label="Temporary Access Pass" aria-required="true" autofocus required>
                  <div class="links">\(usePassword)</div>
                  <div class="buttons"><input type="submit" id="\(IDs.primaryButton)" class="btn btn-primary" value="Sign in"></div>
                </form>
                """, banner: PageLayout.identityBanner(username))
    }
}
