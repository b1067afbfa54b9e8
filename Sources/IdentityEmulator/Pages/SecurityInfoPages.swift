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

    private static func form(_ token: String, _ content: HTML, id: String? = nil) -> HTML {
        let identifier: HTML = id.map { " id=\"\($0)\"" } ?? ""
        return """
            <form method="post" action="\(action)"\(identifier)>\(PageLayout.hidden("token", token))\(content)</form>
            """
    }

    private static func page(_ title: String, username: String, _ body: HTML) -> HTML {
        PageLayout.microsoft(title: title, body: body, banner: PageLayout.identityBanner(username))
    }

    private static func cancelButton() -> HTML {
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

    // MARK: Microsoft Authenticator

    /// "Scan the QR code": Microsoft Authenticator's activation, and the same in words.
    static func scanActivation(username: String, token: String, activation: AuthenticatorActivation, error: String? = nil) -> HTML {
        let qr: HTML =
            (try? QRCode(text: activation.uri)).map {
                HTML(raw: $0.svg(label: "QR code to scan with the Microsoft Authenticator app"))
            } ?? ""
        return page(
            "Microsoft Authenticator", username: username,
            form(
                token,
                """
                \(PageLayout.hidden("action", "authenticator-scanned"))
                <h1 id="pageTitle">Microsoft Authenticator</h1>
                <p><b>Scan the QR code</b></p>
                <p>Use the Microsoft Authenticator app to scan the QR code. This will connect the Microsoft Authenticator app with your \
                account.</p>
                \(PageLayout.error(error, id: "securityInfoError"))
                <div class="qr" id="\(IDs.qrCode)">\(qr)</div>
                <details><summary>Can't scan image?</summary>
                  <p>Enter the following into your app:</p>
                  <p>Code: <code id="\(IDs.activationCode)">\(activation.code)</code></p>
                  <p>URL: <code id="\(IDs.activationURL)">\(activation.url)</code></p>
                </details>
                <div class="buttons">\(cancelButton())<button type="submit" id="\(IDs.primaryButton)" class="btn btn-primary" \
                autofocus>Next</button></div>
                """))
    }

    /// "Let's try it out": the test notification's number; the page asks the status until the
    /// phone answered, then posts (a browser without scripts presses Next itself).
    static func testNotification(username: String, token: String, number: Int) -> HTML {
        let content: HTML = """
            \(PageLayout.hidden("action", "authenticator-test"))
            <h1 id="pageTitle">Let's try it out</h1>
            <p>Approve the notification we're sending to your app by entering the number shown below.</p>
            <div id="\(IDs.displaySign)" class="displaySign" aria-live="polite" aria-label="Number to enter: \(number)">\(number)</div>
            <div class="buttons">\(cancelButton())<button type="submit" id="\(IDs.primaryButton)" class="btn btn-primary">Next\
            </button></div>
            """
        return page(
            "Microsoft Authenticator", username: username,
            """
            \(form(token, content, id: "testForm"))
            <script>\(HTML(raw: statusScript(token: token)))</script>
            """)
    }

    private static func statusScript(token: String) -> String {
        """
        (function () {
          function ask() {
            fetch('\(action)/authenticator/status', { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
              body: 'token=' + encodeURIComponent('\(token)') })
              .then(function (answer) { return answer.json(); })
              .then(function (result) {
                if (result.ResultValue === 'AuthenticationPending') { setTimeout(ask, 1000); }
                else { document.getElementById('testForm').submit(); }
              })
              .catch(function () { setTimeout(ask, 2000); });
          }
          ask();
        })();
        """
    }

    // MARK: Authenticator app (TOTP)

    /// "Scan the QR code" for another authenticator app: the `otpauth://` URI as a QR code, and
    /// under "Can't scan image?" the account name and secret key.
    static func scanAppSecret(username: String, token: String, secret: TOTPSecret, uri: String) -> HTML {
        let qr: HTML = (try? QRCode(text: uri)).map { HTML(raw: $0.svg(label: "QR code to scan with your authenticator app")) } ?? ""
        return page(
            "Authenticator app", username: username,
            form(
                token,
                """
                \(PageLayout.hidden("action", "app-scanned"))
                <h1 id="pageTitle">Authenticator app</h1>
                <p><b>Scan the QR code</b></p>
                <p>Use the authenticator app to scan the QR code. This will connect your authenticator app with your account.</p>
                <p>After you scan the QR code, choose "Next".</p>
                <div class="qr" id="\(IDs.qrCode)">\(qr)</div>
                <details id="cantScan"><summary>Can't scan image?</summary>
                  <p>Enter the following into your app:</p>
                  <p>Account name: <code id="accountName">\(username)</code></p>
                  <p>Secret key: <code id="secretKey">\(secret.base32)</code></p>
                </details>
                <div class="buttons">\(cancelButton())<button type="submit" id="\(IDs.primaryButton)" class="btn btn-primary" \
                autofocus>Next</button></div>
                """))
    }

    /// "Enter code": the app's six digits.
    static func enterAppCode(username: String, token: String, error: String?) -> HTML {
        page(
            "Authenticator app", username: username,
            form(
                token,
                """
                \(PageLayout.hidden("action", "app-verify"))
                <h1 id="pageTitle">Authenticator app</h1>
                <p><b>Enter code</b></p>
                <p>Enter the 6-digit code shown in the Authenticator app.</p>
                <input type="tel" name="otc" id="\(IDs.smsCode)" maxlength="6" inputmode="numeric" autocomplete="one-time-code" \
                placeholder="Enter code" aria-label="Code" autofocus>
                \(PageLayout.error(error, id: "securityInfoError"))
                <div class="buttons">\(cancelButton())<button type="submit" id="\(IDs.primaryButton)" class="btn btn-primary">Next\
                </button></div>
                """))
    }

    // MARK: Phone

    /// "Phone": the number to text a code to.
    static func phoneNumber(username: String, token: String, error: String?) -> HTML {
        page(
            "Phone", username: username,
            form(
                token,
                """
                \(PageLayout.hidden("action", "phone-number"))
                <h1 id="pageTitle">Phone</h1>
                <p>You can prove who you are by texting a code to your phone.</p>
                <p>What phone number would you like to use?</p>
                <input type="tel" name="phone" id="\(IDs.phoneNumber)" maxlength="32" placeholder="Enter phone number" \
                aria-label="Phone number" autocomplete="tel" autofocus>
                \(PageLayout.error(error, id: "securityInfoError"))
                <p class="small">Message and data rates may apply.</p>
                <div class="buttons">\(cancelButton())<button type="submit" id="\(IDs.primaryButton)" class="btn btn-primary">Next\
                </button></div>
                """))
    }

    /// "We just sent a 6 digit code to …": the texted code.
    static func enterPhoneCode(username: String, token: String, maskedPhone: String?, demoCode: String?, error: String?) -> HTML {
        let sent: HTML = maskedPhone.map { "<p>We just sent a 6 digit code to \($0). Enter the code below.</p>" } ?? ""
        let demo: HTML = demoCode.map { "<p class=\"demo\">Demo: the code is <code>\($0)</code></p>" } ?? ""
        return page(
            "Phone", username: username,
            form(
                token,
                """
                \(PageLayout.hidden("action", "phone-verify"))
                <h1 id="pageTitle">Phone</h1>
                \(sent)\(demo)
                <input type="tel" name="otc" id="\(IDs.smsCode)" maxlength="6" inputmode="numeric" autocomplete="one-time-code" \
                placeholder="Enter code" aria-label="Code" autofocus>
                \(PageLayout.error(error, id: "securityInfoError"))
                <div class="buttons">\(cancelButton())<button type="submit" id="\(IDs.primaryButton)" class="btn btn-primary">Next\
                </button></div>
                """))
    }

    // MARK: Passkey

    /// "Passkey or security key": the browser creates the credential (`navigator.credentials.create`
    /// with the options from `POST /security-info/passkey/options`) and the page posts it to
    /// `POST /security-info/passkey`; a browser without WebAuthn is told it can't.
    static func passkey(username: String, token: String) -> HTML {
        page(
            "Passkey or security key", username: username,
            """
            <h1 id="pageTitle">Passkey or security key</h1>
            <p>Sign in with your face, fingerprint, PIN or a security key instead of a password and code.</p>
            <label for="passkeyName" class="small">Name (optional)</label>
            <input type="text" id="passkeyName" maxlength="64" aria-label="Passkey name">
            <div id="passkeyError" class="alert-error" role="alert" hidden></div>
            <noscript><p class="alert-error">This browser can't create a passkey: it runs no scripts.</p></noscript>
            <div class="buttons"><a class="btn btn-secondary" href="\(action)" id="\(IDs.secondaryButton)">Cancel</a>\
            <button type="button" id="\(IDs.primaryButton)" class="btn btn-primary">Next</button></div>
            <script>\(HTML(raw: passkeyScript(token: token)))</script>
            """)
    }

    /// Creates the passkey: feature detection, the options, `create()`, the answer posted.
    private static func passkeyScript(token: String) -> String {
        """
        (function () {
          var token = '\(token)';
          var error = document.getElementById('passkeyError');
          function say(text) { error.textContent = text; error.hidden = false; }
          function bytes(text) {
            var base64 = text.replace(/-/g, '+').replace(/_/g, '/');
            while (base64.length % 4) { base64 += '='; }
            var raw = atob(base64), out = new Uint8Array(raw.length);
            for (var i = 0; i < raw.length; i++) { out[i] = raw.charCodeAt(i); }
            return out.buffer;
          }
          function text(buffer) {
            var raw = '', view = new Uint8Array(buffer);
            for (var i = 0; i < view.length; i++) { raw += String.fromCharCode(view[i]); }
            return btoa(raw).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
          }
          var next = document.getElementById('\(IDs.primaryButton)');
          if (!window.PublicKeyCredential || !navigator.credentials) {
            say("This browser can't create a passkey. Use another browser, or add another sign-in method.");
            next.disabled = true;
            return;
          }
          next.addEventListener('click', function () {
            next.disabled = true;
            fetch('\(action)/passkey/options', { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
              body: 'token=' + encodeURIComponent(token) })
              .then(function (answer) { return answer.json().then(function (json) { return { ok: answer.ok, json: json }; }); })
              .then(function (result) {
                if (!result.ok) { throw new Error(result.json.error || 'The passkey could not be set up.'); }
                var options = result.json;
                options.challenge = bytes(options.challenge);
                options.user.id = bytes(options.user.id);
                (options.excludeCredentials || []).forEach(function (item) { item.id = bytes(item.id); });
                return navigator.credentials.create({ publicKey: options });
              })
              .then(function (credential) {
                var response = credential.response;
                var body = { token: token, name: document.getElementById('passkeyName').value.slice(0, 64), credential: {
                  id: credential.id, rawId: text(credential.rawId), type: credential.type,
                  authenticatorAttachment: credential.authenticatorAttachment || null,
                  clientExtensionResults: credential.getClientExtensionResults ? credential.getClientExtensionResults() : {},
                  response: { clientDataJSON: text(response.clientDataJSON), attestationObject: text(response.attestationObject),
                    transports: response.getTransports ? response.getTransports() : [] } } };
                return fetch('\(action)/passkey', { method: 'POST', headers: { 'Content-Type': 'application/json' },
                  body: JSON.stringify(body) });
              })
              .then(function (answer) { return answer.json().then(function (json) { return { ok: answer.ok, json: json }; }); })
              .then(function (result) {
                if (!result.ok) { throw new Error(result.json.error || 'The passkey could not be saved.'); }
                window.location.assign('\(action)');
              })
              .catch(function (failure) { say(failure && failure.message ? failure.message : String(failure)); next.disabled = false; });
          });
        })();
        """
    }
}
