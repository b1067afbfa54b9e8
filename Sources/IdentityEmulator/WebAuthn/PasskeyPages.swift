import FoundationEssentials

/// The passkey pages of a sign-in: "Sign-in options" (the first page's way to sign in without a
/// user name, whose tile is Entra's "Face, fingerprint, PIN, or security key") and the page that
/// runs `navigator.credentials.get` with the relying party's options and posts the browser's
/// answer (`step=fido`, field `credential`: `AuthenticationResponseJSON`).
enum PasskeyPages {
    private typealias IDs = SignInPageIDs

    /// The tile's words (Entra, 2024: "Face, fingerprint, PIN, or security key").
    static let tileText = "Face, fingerprint, PIN, or security key"

    /// "Sign-in options": sign in with a passkey without a user name, or go back.
    static func signInOptions(action: String, ctx: String) -> HTML {
        PageLayout.microsoft(
            title: "Sign-in options",
            body: """
                <form method="post" action="\(action)">
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "fido"))
                  <h1 id="pageTitle">Sign-in options</h1>
                  <div id="signInOptionsList" role="list">
                    <button type="submit" name="action" value="start" class="tile" id="fidoSignInOption" \
                data-value="FidoKey"><span>\(tileText)</span></button>
                  </div>
                  <div class="buttons">\(PageLayout.actionButton("Back", id: IDs.secondaryButton, name: "action", value: "back"))</div>
                </form>
                """)
    }

    /// "Sign in with a passkey or security key": asks the browser for an assertion over
    /// `options` (`PublicKeyCredentialRequestOptionsJSON`) and posts it; a browser without
    /// WebAuthn is told so and offered the other ways. `others`: the user has other methods
    /// ("Sign in another way"); `username` nil: a sign-in without a user name.
    static func signIn(
        action: String, ctx: String, username: String?, options: PublicKeyCredentialRequestOptionsJSON, error: String?, others: Bool
    ) -> HTML {
        let json = (try? JSONEncoder().encode(options)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        let back: HTML =
            username == nil
            ? PageLayout.actionButton("Back", id: IDs.secondaryButton, name: "action", value: "back")
            : PageLayout.actionButton("Cancel", id: IDs.secondaryButton, name: "action", value: "another-way")
        return PageLayout.microsoft(
            title: "Sign in with a passkey or security key",
            body: """
                <form method="post" action="\(action)" id="fidoForm" data-options="\(json)">
                  \(PageLayout.hidden("ctx", ctx))\(PageLayout.hidden("step", "fido"))
                  <input type="hidden" name="credential" id="fidoCredential" value="">
                  <h1 id="pageTitle">Sign in with a passkey or security key</h1>
                  <p id="fidoDescription">Follow your browser's instructions to use your face, fingerprint, PIN, or security key.</p>
                  \(PageLayout.error(error, id: "fidoError"))
                  <p id="fidoUnsupported" role="alert" hidden>This browser can't use a passkey or security key. Sign in another way.</p>
                  <div class="links">\(others ? SecondFactorPages.anotherWay() : nil)</div>
                  <div class="buttons">
                    \(back)
                    <button type="submit" id="\(IDs.primaryButton)" class="btn btn-primary" name="action" value="retry">Try again</button>
                  </div>
                </form>
                <script>\(HTML(raw: script))</script>
                """, banner: username.map(PageLayout.identityBanner))
    }

    /// Decodes the options (with `parseRequestOptionsFromJSON` where the browser has it), calls
    /// `navigator.credentials.get`, and posts the answer as `AuthenticationResponseJSON`.
    private static let script = """
        (function () {
          var form = document.getElementById('fidoForm');
          if (!window.PublicKeyCredential || !navigator.credentials) {
            document.getElementById('fidoUnsupported').hidden = false;
            return;
          }
          function fromBase64URL(text) {
            var base64 = text.replace(/-/g, '+').replace(/_/g, '/');
            while (base64.length % 4) { base64 += '='; }
            var binary = atob(base64), bytes = new Uint8Array(binary.length);
            for (var i = 0; i < binary.length; i++) { bytes[i] = binary.charCodeAt(i); }
            return bytes.buffer;
          }
          function toBase64URL(buffer) {
            var bytes = new Uint8Array(buffer), binary = '';
            for (var i = 0; i < bytes.length; i++) { binary += String.fromCharCode(bytes[i]); }
            return btoa(binary).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
          }
          var options = JSON.parse(form.dataset.options);
          var publicKey = PublicKeyCredential.parseRequestOptionsFromJSON
            ? PublicKeyCredential.parseRequestOptionsFromJSON(options)
            : Object.assign({}, options, {
                challenge: fromBase64URL(options.challenge),
                allowCredentials: options.allowCredentials.map(function (c) { return Object.assign({}, c, { id: fromBase64URL(c.id) }); })
              });
          navigator.credentials.get({ publicKey: publicKey }).then(function (credential) {
            var r = credential.response;
            var answer = {
              id: credential.id, rawId: toBase64URL(credential.rawId), type: credential.type,
              authenticatorAttachment: credential.authenticatorAttachment || undefined,
              response: {
                clientDataJSON: toBase64URL(r.clientDataJSON), authenticatorData: toBase64URL(r.authenticatorData),
                signature: toBase64URL(r.signature), userHandle: r.userHandle ? toBase64URL(r.userHandle) : undefined
              },
              clientExtensionResults: {}
            };
            document.getElementById('fidoCredential').value = JSON.stringify(answer);
            form.submit();
          }).catch(function () {
            var error = document.getElementById('fidoError');
            error.textContent = "We couldn't sign you in with a passkey or security key. Try again, or sign in another way.";
            error.hidden = false;
            error.setAttribute('role', 'alert');
          });
        })();
        """
}
