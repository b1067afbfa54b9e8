/// The frame every sign-in page shares: Microsoft's card on a grey field (workforce) or the B2C
/// "Ocean Blue" panel (B2C).
///
/// Keyboard first, as Microsoft's pages are: each form has one submit button, its primary action,
/// so Enter in a field goes forward; secondary and side actions (Back, No, Cancel, "Forgot your
/// password?") are `type="button"` with `data-name`/`data-value`, posted by ``keyboardScript``;
/// Escape presses the page's `data-secondary` button; focus starts in the first field, or on the
/// primary button of a page without one; Tab follows the page's visual order.
enum PageLayout {
    /// A workforce sign-in page: the Microsoft logo, then `body`.
    static func microsoft(title: String, body: HTML, banner: HTML? = nil) -> HTML {
        document(
            title: title,
            body: """
                <main class="card" aria-labelledby="pageTitle">
                  <div class="logo" role="img" \
                  aria-label="Microsoft"><span></span><span></span><span></span><span></span><b>Microsoft</b></div>
                  \(banner)
                  \(body)
                </main>
                <footer class="footer"><span>Identity emulator</span><a href="#">Terms of use</a><a href="#">Privacy &amp; \
                cookies</a></footer>
                """, bodyClass: "ms")
    }

    /// A B2C page under the tenant's name.
    static func b2c(tenant: String, title: String, body: HTML) -> HTML {
        document(
            title: title,
            body: """
                <main class="b2c" aria-labelledby="pageTitle">
                  <div class="b2c-brand">\(tenant)</div>
                  \(body)
                </main>
                """, bodyClass: "b2c-page")
    }

    /// A page of a federated organisation's own identity provider, in AD FS's look (not
    /// Microsoft's): the organisation's name over a white panel beside an illustration.
    static func organization(name: String, title: String, body: HTML) -> HTML {
        document(
            title: title,
            body: """
                <div id="fullPage">
                  <div id="brandingWrapper" class="float" aria-hidden="true"><div id="branding"></div></div>
                  <div id="contentWrapper" class="float">
                    <main id="content" aria-labelledby="companyName">
                      <div id="header"><div id="companyName" class="companyName">\(name)</div></div>
                      <div id="workArea">\(body)</div>
                      <div id="footerPlaceholder"></div>
                    </main>
                  </div>
                </div>
                """, bodyClass: "adfs")
    }

    /// The identity banner: the account being signed in, with a way back.
    static func identityBanner(_ username: String) -> HTML {
        """
        <div class="identity" id="displayName" title="\(username)">\(username)</div>
        """
    }

    /// An inline error (`role="alert"`) under the field it is about.
    static func error(_ message: String?, id: String) -> HTML {
        guard let message else { return HTML(raw: "<div id=\"\(id)\" class=\"alert-error\" hidden></div>") }
        return "<div id=\"\(id)\" class=\"alert-error\" role=\"alert\">\(message)</div>"
    }

    static func hidden(_ name: String, _ value: String) -> HTML {
        "<input type=\"hidden\" name=\"\(name)\" value=\"\(value)\">"
    }

    static func document(title: String, body: HTML, bodyClass: String, head: HTML = "") -> HTML {
        """
        <!DOCTYPE html>
        <html lang="en" dir="ltr">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(title)</title>
        <style>\(HTML(raw: stylesheet))</style>
        <script>\(HTML(raw: keyboardScript))</script>
        \(head)
        </head>
        <body class="\(bodyClass)">
        \(body)
        </body>
        </html>
        """
    }

    /// Posts a `data-name`/`data-value` button's action with the form, and makes Escape press the
    /// page's secondary button.
    private static let keyboardScript = """
        document.addEventListener('click', function (event) {
          var button = event.target.closest && event.target.closest('button[data-name]');
          if (!button || !button.form) return;
          event.preventDefault();
          var field = document.createElement('input');
          field.type = 'hidden'; field.name = button.dataset.name; field.value = button.dataset.value;
          button.form.appendChild(field);
          button.form.submit();
        });
        document.addEventListener('keydown', function (event) {
          if (event.key !== 'Escape') return;
          var secondary = document.querySelector('[data-secondary]');
          if (secondary) { event.preventDefault(); secondary.click(); }
        });
        """

    /// A secondary or side action: posts `name=value` with the form, never on Enter.
    static func actionButton(
        _ title: String, id: String, name: String, value: String, secondary: Bool = true, style: String = "btn btn-secondary"
    )
        -> HTML
    {
        let mark = secondary ? " data-secondary" : ""
        return HTML(
            raw: "<button type=\"button\" id=\"\(id)\" class=\"\(style)\" data-name=\"\(name)\" data-value=\"\(value)\"\(mark)>"
                + "\(HTML.escape(title))</button>")
    }

    private static let stylesheet = """
        *{box-sizing:border-box}
        body{margin:0;font-family:"Segoe UI","Segoe UI Web",Cantarell,"Noto Sans","Helvetica \
        Neue",Arial,sans-serif;color:#1b1b1b;font-size:15px}
        body.ms{background:#f2f2f2 linear-gradient(135deg,#e8eef6 0%,#f2f2f2 45%,#eef2f0 \
        100%);min-height:100vh;display:flex;flex-direction:column;align-items:center;justify-content:center}
        .card{background:#fff;width:440px;max-width:calc(100vw - 32px);padding:44px;box-shadow:0 2px 6px rgba(0,0,0,.2);margin-bottom:28px}
        .logo{display:grid;grid-template-columns:10px 10px auto;grid-template-rows:10px 10px;gap:1px;align-items:center;margin-bottom:16px}
        .logo span:nth-child(1){background:#f25022}.logo span:nth-child(2){background:#7fba00}
        .logo span:nth-child(3){background:#00a4ef;grid-row:2;grid-column:1}.logo \
        span:nth-child(4){background:#ffb900;grid-row:2;grid-column:2}
        .logo span{width:10px;height:10px;display:block}
        .logo b{grid-column:3;grid-row:1/3;margin-left:8px;font-weight:600;color:#737373;font-size:18px}
        h1{font-size:24px;font-weight:600;line-height:28px;margin:16px 0 12px}
        p{margin:0 0 12px;line-height:20px}
        .identity{font-size:15px;margin:0 0 4px;color:#1b1b1b;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
        input[type=email],input[type=text],input[type=password],input[type=tel]{width:100%;font-size:15px;padding:6px \
        0;border:none;border-bottom:1px solid #666;outline:none;margin:8px 0 16px;background:transparent;font-family:inherit}
        input:focus{border-bottom-color:#0067b8}
        .alert-error{color:#e81123;margin:4px 0 8px;line-height:20px}
        .links{margin:8px 0 20px;font-size:13px}
        .link{background:none;border:0;padding:0;color:#0067b8;cursor:pointer;font:inherit;text-decoration:underline}
        .displaySign{font-size:40px;font-weight:600;margin:16px 0;letter-spacing:2px}
        .qr svg{width:180px;height:180px}
        a{color:#0067b8;text-decoration:none}a:hover{text-decoration:underline}
        .buttons{display:flex;justify-content:flex-end;gap:8px;margin-top:24px}
        .btn{min-width:108px;min-height:32px;padding:4px 12px;font-size:15px;font-family:inherit;border:none;cursor:pointer}
        .btn-primary{background:#0067b8;color:#fff}.btn-primary:hover{background:#005da6}
        .btn-secondary{background:#cccccc;color:#1b1b1b}.btn-secondary:hover{background:#bbb}
        .btn-link{background:none;border:none;color:#2f6fba;cursor:pointer;font:inherit;padding:0}
        .demo{background:#fff4ce;border-left:4px solid #ffb900;padding:8px 12px;margin:8px 0 12px;font-size:14px}
        .demo code{font-size:16px;font-weight:600;letter-spacing:2px}
        .checkbox{display:flex;align-items:center;gap:8px;margin:12px 0}
        .permissions{margin:8px 0 16px;padding-left:20px}.permissions li{margin:6px 0}
        .app{display:flex;gap:12px;align-items:center;margin:12px 0}
        .app-icon{width:40px;height:40px;background:#0067b8;color:#fff;display:flex;align-items:center;justify-content:center;\
        font-weight:600;font-size:18px}
        .small{font-size:13px;color:#505050;line-height:18px}
        .tile{display:flex;width:100%;align-items:center;gap:12px;padding:12px \
        8px;border:none;background:transparent;text-align:left;font:inherit;cursor:pointer}
        .tile:hover{background:#e6e6e6}
        .avatar{width:40px;height:40px;border-radius:50%;background:#c7e0f4;display:flex;align-items:center;justify-content:center;\
        font-weight:600}
        .footer{font-size:12px;display:flex;gap:16px;color:#505050}.footer a{color:#505050}
        .details{font-size:12px;color:#505050;background:#f7f7f7;padding:8px 12px;margin-top:16px;word-break:break-all}
        .details div{margin:2px 0}
        body.b2c-page{background:#e9eef2;min-height:100vh;display:flex;justify-content:center;align-items:flex-start}
        .b2c{background:#fff;width:480px;max-width:calc(100vw - 32px);margin-top:48px;padding:32px 40px;border-top:6px solid \
        #2f6fba;box-shadow:0 1px 4px rgba(0,0,0,.15)}
        .b2c-brand{font-size:28px;font-weight:300;color:#2f6fba;margin-bottom:8px;letter-spacing:1px}
        .b2c label{display:block;font-size:14px;margin-top:8px;color:#333}
        .b2c input[type=email],.b2c input[type=text],.b2c input[type=password]{border:1px solid #aaa;padding:8px;margin:4px 0 8px}
        .b2c .btn{width:100%;margin-top:12px;min-height:40px}
        .b2c .btn-primary{background:#2f6fba}
        .b2c .row{display:flex;justify-content:space-between;font-size:14px;margin:8px 0}
        .b2c .divider{margin:20px 0 0;font-size:14px;text-align:center}
        body.adfs{background:#fff;font-family:"Segoe UI","Segoe",Cantarell,"Noto Sans",Tahoma,Helvetica,Arial,sans-serif;min-height:100vh}
        #fullPage{display:flex;min-height:100vh}
        #brandingWrapper{flex:1;background:#3c6e8f linear-gradient(160deg,#1f4e6e 0%,#3c6e8f 55%,#7aa6c2 100%)}
        #contentWrapper{width:500px;max-width:100vw;padding:60px 60px 40px;background:#fff}
        .companyName{font-size:28px;font-weight:300;color:#333;margin-bottom:44px}
        .groupMargin{margin-bottom:24px}#loginMessage,#openingMessage{font-size:17px;color:#333}
        .adfs .fullWidth{width:100%;font-size:15px;padding:8px;border:1px solid #bbb;margin:0 0 12px;font-family:inherit}
        .adfs .hidden{position:absolute;left:-9999px}
        .adfs .submit{background:#2672ec;color:#fff;border:none;min-width:120px;padding:8px 16px;font-size:15px;cursor:pointer}
        .adfs .submit:hover{background:#1f5fc5}
        .adfs .error{color:#c85305;margin-bottom:12px}.adfs .smallText{font-size:13px}
        #errorDetails{color:#666;margin-top:12px}
        """
}
