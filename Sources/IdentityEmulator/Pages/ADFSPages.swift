import FoundationEssentials

/// The federated organisation's identity provider's pages, with AD FS's look, texts and element
/// ids (`loginForm`, `userNameInput`/`UserName`, `passwordInput`/`Password`, `submitButton`,
/// `errorText`), so automation written against AD FS works here.
enum ADFSPages {
    private typealias IDs = SignInPageIDs

    /// AD FS's forms sign-in page, posting to `action` (the passive endpoint with the request's
    /// query).
    static func signIn(action: String, organization: String, userName: String?, error: String?, demoUsers: [String]?) -> HTML {
        let demo: HTML? = demoUsers.map { users in
            "<div class=\"demo\" id=\"demoAccounts\">Demo mode: \(users.joined(separator: " or ")); the password is "
                + "<code>\(IDs.demoPassword)</code></div>"
        }
        let errorArea: HTML =
            error.map {
                "<div id=\"error\" class=\"fieldMargin error smallText\"><span id=\"\(IDs.adfsError)\" aria-live=\"assertive\" "
                    + "role=\"alert\">\($0)</span></div>"
            } ?? "<div id=\"error\" class=\"fieldMargin error smallText\" hidden><span id=\"\(IDs.adfsError)\"></span></div>"
        return PageLayout.organization(
            name: organization, title: "Sign In",
            body: """
                <div id="loginArea">
                  <div id="loginMessage" class="groupMargin">Sign in with your organizational account</div>
                  \(demo)
                  <form method="post" id="\(IDs.adfsLoginForm)" autocomplete="off" novalidate action="\(action)">
                    \(errorArea)
                    <div id="formsAuthenticationArea">
                      <div id="userNameArea">
                        <label id="userNameInputLabel" for="\(IDs.adfsUserName)" class="hidden">User Account</label>
                        <input id="\(IDs.adfsUserName)" name="\(IDs.Fields.adfsUserName)" type="email" value="\(userName ?? "")" class="text fullWidth" \
                spellcheck="false" placeholder="someone@example.com" autocomplete="off"\(userName == nil ? " autofocus" : "")>
                      </div>
                      <div id="passwordArea">
                        <label id="passwordInputLabel" for="\(IDs.adfsPassword)" class="hidden">Password</label>
                        <input id="\(IDs.adfsPassword)" name="\(IDs.Fields.adfsPassword)" type="password" class="text fullWidth" placeholder="Password" \
                autocomplete="off"\(userName == nil ? "" : " autofocus")>
                      </div>
                      <input id="optionForms" type="hidden" name="\(IDs.Fields.adfsAuthMethod)" value="FormsAuthentication">
                      <div id="submissionArea" class="submitMargin">
                        <button type="submit" id="\(IDs.adfsSubmit)" class="submit">Sign in</button>
                      </div>
                    </div>
                  </form>
                </div>
                """)
    }

    /// AD FS's answer to the relying party: an auto-submitting form that posts the signed token
    /// (`wresult`) and the relying party's context (`wctx`) to `action` (Entra's `/login.srf`).
    static func signedAnswer(to action: String, wresult: String, wctx: String?) -> HTML {
        var inputs = [PageLayout.hidden("wa", WSFederation.signIn), PageLayout.hidden("wresult", wresult)]
        if let wctx { inputs.append(PageLayout.hidden("wctx", wctx)) }
        return PageLayout.document(
            title: "Working...",
            body: """
                <form method="POST" name="\(IDs.adfsHiddenForm)" action="\(action)">
                  \(inputs)
                  <noscript><p>Script is disabled. Click Submit to continue.</p><input type="submit" value="Submit"></noscript>
                </form>
                <script>window.setTimeout(function () { document.forms[0].submit(); }, 0);</script>
                """, bodyClass: "adfs")
    }

    /// AD FS's error page ("An error occurred"), with the details AD FS shows.
    static func error(organization: String, message: String, activityID: String, at time: Date) -> HTML {
        PageLayout.organization(
            name: organization, title: "Sign In",
            body: """
                <div id="errorArea">
                  <div id="openingMessage" class="groupMargin">An error occurred</div>
                  <div id="errorMessage" class="groupMargin" role="alert">\(message)</div>
                  <div id="errorDetails" class="smallText">
                    <div>Activity ID: \(activityID)</div>
                    <div>Error time: \(time.entraTimestamp)</div>
                  </div>
                </div>
                """)
    }

    /// The provider's host's answer to a path it does not serve.
    static func notFound(organization: String) -> HTML {
        PageLayout.organization(
            name: organization, title: "Not Found",
            body: """
                <div id="errorArea">
                  <div id="openingMessage" class="groupMargin">404 — Not Found</div>
                  <div id="errorMessage" class="groupMargin" role="alert">The resource you are looking for is not served here.</div>
                </div>
                """)
    }
}
