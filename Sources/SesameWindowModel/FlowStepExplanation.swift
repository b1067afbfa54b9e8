import FoundationEssentials
import SesameService

/// What a step of the flow is and why, for a newcomer: one or two sentences per kind of step, and
/// the specification or Microsoft page it comes from. Shown above a selected row's details.
/// Navigations name the tutorial's rule the sign-in view's policy applied (its `authURL`,
/// `loginURL` and redirect URI) and the URL parts it compared.
enum FlowStepExplanation {
    struct Explanation: Equatable {
        let text: String
        /// Where it comes from: a section of an RFC or a Microsoft page, and its address.
        let source: String
    }

    static let authCodeFlow = "https://learn.microsoft.com/entra/identity-platform/v2-oauth2-auth-code-flow"
    static let prtDocs = "https://learn.microsoft.com/entra/identity/devices/concept-primary-refresh-token"

    static func explanation(of event: FlowTrace.Event) -> Explanation? {
        func field(_ name: String) -> String? { event.fields.first { $0.0 == name }?.1 }
        switch event.name {
        case "navigation":
            switch field("kind") {
            case "authorize":
                return Explanation(
                    text: L(
                        "The authorization request (the tutorial’s authURL: the view shows it). It names the app (client_id), where the answer goes (redirect_uri), what it asks for (scope), and carries state and nonce, which tie the answer and the ID token to this request, and code_challenge (PKCE), which only this app can answer later."
                    ), source: "RFC 6749 §4.1.1, RFC 7636 §4.3 — https://www.rfc-editor.org/rfc/rfc6749#section-4.1.1")
            case "login":
                return Explanation(
                    text: L(
                        "The sign-in form’s answer (the tutorial’s loginURL: the view shows it). The password goes from the service’s own page to the service; Sesame never sees it."
                    ), source: authCodeFlow)
            case "redirect" where field("action") == "ignore":
                return Explanation(
                    text: L(
                        "An answer at the app’s redirect URI that is not this request’s (its state differs): the sign-in view’s policy neither loads it nor hands it on, and the sign-in goes on."
                    ), source: "RFC 6749 §10.12 — https://www.rfc-editor.org/rfc/rfc6749#section-10.12")
            case "redirect":
                return Explanation(
                    text: L(
                        "The redirect to the app’s redirect URI (the tutorial’s rule for it): the sign-in view’s policy compared this URL’s scheme, host, port and path with the redirect URI, found them equal, and handed the URL to the app instead of loading it."
                    ), source: "RFC 6749 §4.1.2, RFC 8252 §7 — https://www.rfc-editor.org/rfc/rfc6749#section-4.1.2")
            default:
                return Explanation(
                    text: L(
                        "Another page of the sign-in (a second factor, consent, the organization’s own sign-in page): the view shows it, since it is neither the app’s redirect URI nor to be hidden."
                    ), source: authCodeFlow)
            }
        case "step-waiting":
            // The step about to happen, explained before it happens.
            let step = FlowTrace.Event(time: event.time, name: field("step") ?? "", fields: event.fields.filter { $0.0 != "step" })
            let next = explanation(of: step)
            return Explanation(
                text: L("Step-through: this step waits for you. Next (or Space) lets it happen; Continue runs the rest.")
                    + (next.map { " " + $0.text } ?? ""), source: next?.source ?? authCodeFlow)
        case "step-released" where field("by") == "limit":
            return Explanation(
                text: L(
                    "A step waits at most 8 minutes, then goes ahead by itself: the authorization code it may carry expires about 10 minutes after the redirect."
                ), source: authCodeFlow)
        case "page-loaded":
            return Explanation(text: L("The page is on screen, in the sign-in view: the user acts there."), source: authCodeFlow)
        case SignInPageStep.eventName:
            return SignInPageStep(fields: event.fields).map(explanation(of:))
        case "redirect-intercepted":
            return Explanation(
                text: L(
                    "The authorization code reaches the app, checked first: its state must be this request’s, or it is ignored. The code alone is worth nothing without the app’s code_verifier."
                ), source: "RFC 6749 §4.1.2 — https://www.rfc-editor.org/rfc/rfc6749#section-4.1.2")
        case "token-request":
            return Explanation(
                text: L(
                    "The token request: the app sends the code with its code_verifier, which proves it is the app that asked (a stolen code is useless), or a refresh token to renew its tokens without a page."
                ), source: "RFC 6749 §4.1.3 and §6, RFC 7636 §4.5 — https://www.rfc-editor.org/rfc/rfc6749#section-4.1.3")
        case "discovery":
            return Explanation(
                text: L(
                    "The service’s OpenID configuration or its signing keys: where its endpoints are, and the keys an ID token’s signature is checked with."
                ), source: "OpenID Connect Discovery 1.0 §4 — https://openid.net/specs/openid-connect-discovery-1_0.html#ProviderConfig")
        case "api-call":
            return Explanation(
                text: L(
                    "An API call with the access token in its Authorization header (Bearer): the API checks the token and the permission it needs (scp)."
                ), source: "RFC 6750 §2.1 — https://www.rfc-editor.org/rfc/rfc6750#section-2.1")
        case "token-read":
            return Explanation(
                text: L("A token of the answer, read aloud: its header and claims in words, never the token itself."),
                source: "RFC 7519 §4, OpenID Connect Core §2 — https://openid.net/specs/openid-connect-core-1_0.html#IDToken")
        case "id-token-checked":
            return Explanation(
                text: L(
                    "Sesame checked the ID token before trusting who it names: its signature with the service’s published key, who issued it, that it is for this app, its lifetime, and that it answers this sign-in’s nonce."
                ), source: "OpenID Connect Core §3.1.3.7 — https://openid.net/specs/openid-connect-core-1_0.html#IDTokenValidation")
        case "token-acquired":
            return Explanation(
                text: L("Signed in: the tokens are kept (in the keyring), for the next request that needs no page."), source: authCodeFlow)
        case "token-silent":
            return Explanation(
                text: L("A token without a page: from the cache while it is valid, else from the refresh token."),
                source: "RFC 6749 §6 — https://www.rfc-editor.org/rfc/rfc6749#section-6")
        case "sign-in-failed":
            return Explanation(
                text: L("The sign-in ended without tokens: its error code says why (the message bar says it in words)."),
                source: "https://learn.microsoft.com/entra/identity-platform/reference-error-codes")
        case "window-shown":
            return Explanation(text: L("The app’s window is on screen: the flow starts from here."), source: authCodeFlow)
        case "list-rendered":
            return Explanation(
                text: L("The app shows what the API answered: the rows are on screen, the end of this flow."), source: authCodeFlow)
        case "signed-out", "sign-in-cancelled", "sign-in-data-forgotten":
            return Explanation(
                text: L("The user ended it: the app forgets the tokens, and the next sign-in asks who signs in."),
                source: "https://learn.microsoft.com/entra/identity-platform/v2-protocols-oidc#send-a-sign-out-request")
        case "broker-call", "broker-token", "broker-sso-cookie", "broker-refused":
            return Explanation(
                text: L(
                    "Another program asked Sesame as the desktop’s identity broker (Microsoft’s interface): it gets tokens for its own app only, with the user’s say."
                ), source: "https://learn.microsoft.com/entra/msal/python/advanced/linux-broker-py")
        case "device-sign-in", "device-credential-sent", "device-registered", "device-lost", "device-registration-started",
            "device-registration-failed", "device-removed":
            return Explanation(
                text: L(
                    "This computer’s Primary Refresh Token: registered with the organization, it signs apps and pages in without a password, naming the device."
                ), source: "[MS-OAPXBC] — " + prtDocs)
        default:
            return nil
        }
    }

    static let methodDocs = "https://learn.microsoft.com/entra/identity/authentication/"

    /// What a page that asks for a way of proving who you are is for, and what it protects
    /// against: the number of a push, a code's weakness, a passkey's strength.
    static func explanation(of page: SignInPageStep) -> Explanation {
        switch page.step {
        case .oneTimeCode where page.codeMethod == .sms || page.codeMethod == .voice:
            return Explanation(
                text: L(
                    "A second factor: the service sent a one-time code to the phone number you registered, and typing it proves you hold that phone. A code is only as safe as the place you type it: a look-alike page can ask for it and pass it on at once (phishing), and a phone number can be moved to another SIM card."
                ), source: "Microsoft: phone authentication — " + methodDocs + "concept-authentication-phone-options")
        case .oneTimeCode:
            return Explanation(
                text: L(
                    "A second factor: a six-digit code from an authenticator app, computed from a secret the app and the service share and the current 30-second window (TOTP), so it needs no network and changes every 30 seconds. It is only as safe as the place you type it: a look-alike page can ask for it and use it within those seconds (phishing). Check the address above the page before you type it."
                ),
                source: "RFC 6238 §4 — https://www.rfc-editor.org/rfc/rfc6238#section-4; " + methodDocs
                    + "concept-authentication-oath-tokens")
        case .authenticatorPush:
            return Explanation(
                text: L(
                    "A second factor: Microsoft Authenticator on your phone asks you to approve this sign-in and to type the number this page shows. The number ties the phone’s approval to this screen: someone who only makes your phone ask (with your stolen password, again and again: push bombing) cannot get an approval without seeing your screen. Meanwhile the page asks the service whether the phone has answered (…/SAS/EndAuth), and goes on when it has."
                ), source: "Microsoft: number matching — " + methodDocs + "how-to-mfa-number-match")
        case .temporaryAccessPass:
            return Explanation(
                text: L(
                    "A Temporary Access Pass: a pass an administrator issued, valid for a limited time (once, or several times), that signs you in without another method, so that you can set up your methods (the Authenticator app, a passkey) on a new account or after losing a phone. Until it expires, whoever has it signs in as you."
                ), source: "Microsoft: Temporary Access Pass — " + methodDocs + "howto-authentication-temporary-access-pass")
        case .passkey:
            return Explanation(
                text: L(
                    "A passkey or security key (FIDO2, WebAuthn): the page asks the browser for a signature over the service’s challenge (navigator.credentials.get). The browser writes the page’s origin into what the authenticator signs (clientDataJSON), so a look-alike site gets a signature for its own address, which the service refuses: a passkey cannot be phished, and its private key never leaves the authenticator. Sesame’s sign-in view cannot answer this page yet: sign in with your browser."
                ),
                source: "W3C Web Authentication §7.2 (C.origin) — https://www.w3.org/TR/webauthn-2/#sctn-verifying-assertion; " + methodDocs
                    + "concept-authentication-passkeys-fido2")
        case .verifyIdentity:
            return Explanation(
                text: L(
                    "“Verify your identity”: the ways of signing in you registered. The service offers the strongest first (system-preferred MFA); “Sign in another way” lists the others. Your organization’s policy decides which count: an authentication strength may accept only some of them."
                ), source: "Microsoft: system-preferred MFA — " + methodDocs + "concept-system-preferred-multifactor-authentication")
        case .registration:
            return Explanation(
                text: L(
                    "Registration (“Keep your account secure”): your organization asks you to set up a way of signing in before you go on, such as the Authenticator app (a QR code to scan, then a test approval), an app’s codes, or a passkey. What you register here is what later sign-ins ask for."
                ), source: "Microsoft: combined registration — " + methodDocs + "concept-registration-mfa-sspr-combined")
        }
    }
}
