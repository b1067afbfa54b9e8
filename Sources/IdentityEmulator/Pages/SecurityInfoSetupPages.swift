import FoundationEssentials

/// The setup pages of "Security info": Microsoft Authenticator (the activation QR code, the test
/// notification), an authenticator app (its secret as a QR code and in words, then a code), a
/// phone (the number, then the texted code) and a passkey (`navigator.credentials.create`). Each
/// posts to `/security-info` with the session's `token`, as the list does (``SecurityInfoPages``).
enum SecurityInfoSetupPages {
    private typealias IDs = SignInPageIDs

    static let action = SecurityInfoController.path

    // MARK: Microsoft Authenticator

    /// "Scan the QR code": Microsoft Authenticator's activation, and the same in words.
    static func scanActivation(username: String, token: String, activation: AuthenticatorActivation, error: String? = nil) -> HTML {
        SecurityInfoPages.page(
            "Microsoft Authenticator", username: username,
            SecurityInfoPages.form(
                token,
                """
                \(PageLayout.hidden("action", "authenticator-scanned"))
                <h1 id="pageTitle">Microsoft Authenticator</h1>
                <p><b>Scan the QR code</b></p>
                <p>Use the Microsoft Authenticator app to scan the QR code. This will connect the Microsoft Authenticator app with your \
                account.</p>
                \(PageLayout.error(error, id: "securityInfoError"))
                \(RegistrationPages.activationCode(activation))
                <div class="buttons">\(SecurityInfoPages.cancelButton())<button type="submit" id="\(IDs.primaryButton)" class="btn btn-primary" \
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
            <div class="buttons">\(SecurityInfoPages.cancelButton())<button type="submit" id="\(IDs.primaryButton)" class="btn btn-primary">Next\
            </button></div>
            """
        return SecurityInfoPages.page(
            "Microsoft Authenticator", username: username,
            """
            \(SecurityInfoPages.form(token, content, id: "testForm"))
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
        return SecurityInfoPages.page(
            "Authenticator app", username: username,
            SecurityInfoPages.form(
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
                <div class="buttons">\(SecurityInfoPages.cancelButton())<button type="submit" id="\(IDs.primaryButton)" class="btn btn-primary" \
                autofocus>Next</button></div>
                """))
    }

    /// "Enter code": the app's six digits.
    static func enterAppCode(username: String, token: String, error: String?) -> HTML {
        SecurityInfoPages.page(
            "Authenticator app", username: username,
            SecurityInfoPages.form(
                token,
                """
                \(PageLayout.hidden("action", "app-verify"))
                <h1 id="pageTitle">Authenticator app</h1>
                <p><b>Enter code</b></p>
                <p>Enter the 6-digit code shown in the Authenticator app.</p>
                <input type="tel" name="otc" id="\(IDs.smsCode)" maxlength="6" inputmode="numeric" autocomplete="one-time-code" \
                placeholder="Enter code" aria-label="Code" autofocus>
                \(PageLayout.error(error, id: "securityInfoError"))
                <div class="buttons">\(SecurityInfoPages.cancelButton())<button type="submit" id="\(IDs.primaryButton)" class="btn btn-primary">Next\
                </button></div>
                """))
    }

    // MARK: Phone

    /// "Phone": the number to text a code to.
    static func phoneNumber(username: String, token: String, error: String?) -> HTML {
        SecurityInfoPages.page(
            "Phone", username: username,
            SecurityInfoPages.form(
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
                <div class="buttons">\(SecurityInfoPages.cancelButton())<button type="submit" id="\(IDs.primaryButton)" class="btn btn-primary">Next\
                </button></div>
                """))
    }

    /// "We just sent a 6 digit code to …": the texted code.
    static func enterPhoneCode(username: String, token: String, maskedPhone: String?, demoCode: String?, error: String?) -> HTML {
        let sent: HTML = maskedPhone.map { "<p>We just sent a 6 digit code to \($0). Enter the code below.</p>" } ?? ""
        let demo: HTML = demoCode.map { "<p class=\"demo\">Demo: the code is <code>\($0)</code></p>" } ?? ""
        return SecurityInfoPages.page(
            "Phone", username: username,
            SecurityInfoPages.form(
                token,
                """
                \(PageLayout.hidden("action", "phone-verify"))
                <h1 id="pageTitle">Phone</h1>
                \(sent)\(demo)
                <input type="tel" name="otc" id="\(IDs.smsCode)" maxlength="6" inputmode="numeric" autocomplete="one-time-code" \
                placeholder="Enter code" aria-label="Code" autofocus>
                \(PageLayout.error(error, id: "securityInfoError"))
                <div class="buttons">\(SecurityInfoPages.cancelButton())<button type="submit" id="\(IDs.primaryButton)" class="btn btn-primary">Next\
                </button></div>
                """))
    }

    // MARK: Passkey

    /// "Passkey or security key": the browser creates the credential (`navigator.credentials.create`
    /// with the options from `POST /security-info/passkey/options`) and the page posts it to
    /// `POST /security-info/passkey`; a browser without WebAuthn is told it can't.
    static func passkey(username: String, token: String) -> HTML {
        SecurityInfoPages.page(
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
