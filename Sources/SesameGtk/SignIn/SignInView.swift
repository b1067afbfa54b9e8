import CGtkWebKit
import Foundation
import SesameCore

/// The sign-in browser: a WebKitWebView whose `decide-policy` handler reproduces the seeds'
/// policy with the Core's parsed-URL classifier. Authorize and login pages (and everything
/// else: MFA, consent, error pages on other hosts) are shown; the redirect to the app is ignored
/// (never loaded), the view hides itself and hands the URL over.
@MainActor
public final class SignInView {
    /// The whole sign-in area: the host bar (current host and TLS state) above the web view.
    public let widget: UnsafeMutablePointer<GtkWidget>
    let webView: UnsafeMutablePointer<WebKitWebView>
    private let hostLabel: UnsafeMutablePointer<GtkWidget>
    private let trace: FlowTrace
    private let context: UnsafeMutablePointer<WebKitWebContext>
    private var pending: PendingAuthorization?
    /// Whether the load in progress failed or was interrupted (its FINISHED is no page load).
    private var currentLoadFailed = false

    /// Called with the intercepted redirect URL (the view is already hidden).
    public var onRedirect: ((URL) -> Void)?
    /// Called when the user closes sign-in.
    public var onCancel: (() -> Void)?

    /// - Parameter dataDirectory: where cookies and web data persist (per storage group), so SSO
    ///   survives a restart; nil for an ephemeral session (tests).
    /// - Parameter automation: allow WebKitWebDriver sessions; the session's browsing context is
    ///   this view (created as controlled by automation). The view is shown only while the app
    ///   signs someone in, as without WebDriver.
    public init(dataDirectory: URL?, trace: FlowTrace, automation: Bool = false) {
        self.trace = trace
        if let dataDirectory {
            try? FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let manager = sesame_website_data_manager_new(dataDirectory.path, dataDirectory.appending(path: "cache").path)
            context = webkit_web_context_new_with_website_data_manager(manager)!
            let cookies = webkit_web_context_get_cookie_manager(context)
            webkit_cookie_manager_set_persistent_storage(cookies, dataDirectory.appending(path: "cookies.sqlite").path, WEBKIT_COOKIE_PERSISTENT_STORAGE_SQLITE)
        } else {
            context = webkit_web_context_new_ephemeral()!
        }
        if automation { webkit_web_context_set_automation_allowed(context, 1) }
        let view = automation ? sesame_web_view_new_for_automation(context)! : webkit_web_view_new_with_context(context)!
        webView = sesame_web_view(view)
        // Software rendering: sign-in pages are simple, and WebKit's GPU paths fail on some machines.
        let settings = webkit_web_view_get_settings(webView)
        webkit_settings_set_hardware_acceleration_policy(settings, WEBKIT_HARDWARE_ACCELERATION_POLICY_NEVER)
        webkit_settings_set_enable_developer_extras(settings, 0)
        Widgets.setAccessibleName(view, L("Sign-in page"))

        hostLabel = Widgets.label("", xalign: 0)
        Widgets.setAccessibleName(hostLabel, L("Sign-in host"))
        gtk_widget_set_name(hostLabel, "sign-in-host")
        Widgets.margin(hostLabel, 6)
        widget = Widgets.box(vertical: true, spacing: 0)
        Widgets.pack(widget, hostLabel)
        Widgets.pack(widget, view, expand: true)
        gtk_widget_show_all(widget)
        gtk_widget_hide(widget)

        if automation {
            let webView = webView
            Signals.onAutomationStarted(context) { [weak self] session in
                sesame_automation_session_set_info(session, "sesame")
                Signals.onCreateWebView(session) {
                    self?.trace.record("automation-session")
                    return webView
                }
            }
        }
        Signals.onDecidePolicy(webView) { [weak self] decision, type in
            self?.decide(decision, type) ?? false
        }
        Signals.onLoadChanged(webView) { [weak self] event in self?.loadChanged(event) }
        Signals.onLoadFailed(webView) { [weak self] uri, error in self?.loadFailed(uri, error) ?? false }
        Signals.onTLSFailed(webView) { [weak self] uri, flags in self?.tlsFailed(uri, flags) ?? false }
    }

    /// Shows the view and loads the authorization URL.
    public func begin(_ authorization: PendingAuthorization) {
        pending = authorization
        gtk_widget_show(widget)
        webkit_web_view_load_uri(webView, authorization.url.absoluteString)
    }

    /// Stops and hides sign-in without a result.
    public func cancel() {
        webkit_web_view_stop_loading(webView)
        pending = nil
        gtk_widget_hide(widget)
    }

    public var isShown: Bool { Widgets.isVisible(widget) }

    /// The title of the page the view is showing.
    public var pageTitle: String? { webkit_web_view_get_title(webView).map { String(cString: $0) } }

    /// The address the view is showing.
    public var currentURI: String? { webkit_web_view_get_uri(webView).map { String(cString: $0) } }

    /// Deletes cookies and web data ("Forget sign-in data").
    public func forgetSignInData() {
        let manager = webkit_web_context_get_website_data_manager(context)
        webkit_website_data_manager_clear(manager, WEBKIT_WEBSITE_DATA_ALL, 0, nil, nil, nil)
    }

    /// Runs JavaScript in the page (automation and tests).
    public func runJavaScript(_ script: String) {
        webkit_web_view_evaluate_javascript(webView, script, -1, nil, nil, nil, nil, nil)
    }

    // MARK: Policy

    private func decide(_ decision: UnsafeMutablePointer<WebKitPolicyDecision>, _ type: WebKitPolicyDecisionType) -> Bool {
        guard type == WEBKIT_POLICY_DECISION_TYPE_NAVIGATION_ACTION || type == WEBKIT_POLICY_DECISION_TYPE_NEW_WINDOW_ACTION else {
            return false
        }
        let navigation = sesame_navigation_decision(decision)
        guard let action = webkit_navigation_policy_decision_get_navigation_action(navigation),
              let request = webkit_navigation_action_get_request(action),
              let uriText = webkit_uri_request_get_uri(request),
              let url = URL(string: String(cString: uriText)) else { return false }
        let kind = pending?.classifier.classify(url) ?? .other

        if kind == .redirect, let pending {
            webkit_policy_decision_ignore(decision)
            self.pending = nil
            gtk_widget_hide(widget)
            trace.record("navigation", [("url", FlowTrace.redacted(url)), ("kind", kind.rawValue), ("action", "intercept")])
            trace.record("redirect-intercepted", [("accountType", pending.accountType)])
            onRedirect?(url)
            return true
        }
        if type == WEBKIT_POLICY_DECISION_TYPE_NEW_WINDOW_ACTION {
            // Pop-ups stay inside the app: the same view follows them.
            webkit_policy_decision_ignore(decision)
            webkit_web_view_load_request(webView, request)
            return true
        }
        trace.record("navigation", [("url", FlowTrace.redacted(url)), ("kind", kind.rawValue), ("action", "show")])
        return false
    }

    private func loadChanged(_ event: WebKitLoadEvent) {
        switch event {
        case WEBKIT_LOAD_STARTED:
            currentLoadFailed = false
        case WEBKIT_LOAD_COMMITTED:
            updateHostBar()
        case WEBKIT_LOAD_FINISHED:
            // WebKit ends a failed or interrupted load (the redirect we ignored) with FINISHED too;
            // that is no page the user sees.
            if !currentLoadFailed, let uri = currentURI, let url = URL(string: uri) {
                trace.record("page-loaded", [("url", FlowTrace.redacted(url))])
            }
        default:
            break
        }
    }

    private func updateHostBar() {
        guard let uri = currentURI, let url = URL(string: uri), let host = url.host else {
            Widgets.setText(hostLabel, "")
            return
        }
        var certificate: UnsafeMutablePointer<GTlsCertificate>?
        var flags = GTlsCertificateFlags(rawValue: 0)
        let secure = webkit_web_view_get_tls_info(webView, &certificate, &flags) != 0 && flags.rawValue == 0
        let port = url.port.map { ":\($0)" } ?? ""
        Widgets.setText(hostLabel, secure ? "🔒 \(host)\(port) — " + L("secure connection") : "\(host)\(port) — " + L("not encrypted"))
    }

    /// The host bar's text (tests and accessibility read it).
    public var hostBarText: String { gtk_label_get_text(sesame_label(hostLabel)).map { String(cString: $0) } ?? "" }

    private func loadFailed(_ uri: String, _ error: GLibError) -> Bool {
        currentLoadFailed = true
        // Our own `ignore` of the redirect, or a page replaced by a newer navigation: not failures.
        if error.domain == "WebKitPolicyError" || (error.domain == "WebKitNetworkError" && error.code == 302) { return true }
        let host = URL(string: uri)?.host ?? uri
        trace.record("sign-in-failed", [("error", "load failed: \(error.message)")])
        showPage(title: String(format: L("Can’t reach %@"), host), message: error.message, for: uri)
        return true
    }

    private func tlsFailed(_ uri: String, _ flags: GTlsCertificateFlags) -> Bool {
        currentLoadFailed = true
        let host = URL(string: uri)?.host ?? uri
        var reasons: [String] = []
        if flags.rawValue & G_TLS_CERTIFICATE_UNKNOWN_CA.rawValue != 0 { reasons.append("it is signed by an authority this computer does not trust") }
        if flags.rawValue & G_TLS_CERTIFICATE_BAD_IDENTITY.rawValue != 0 { reasons.append("it was issued for another site") }
        if flags.rawValue & G_TLS_CERTIFICATE_EXPIRED.rawValue != 0 { reasons.append("it has expired") }
        if flags.rawValue & G_TLS_CERTIFICATE_NOT_ACTIVATED.rawValue != 0 { reasons.append("it is not valid yet") }
        if flags.rawValue & G_TLS_CERTIFICATE_REVOKED.rawValue != 0 { reasons.append("it was revoked") }
        let why = reasons.isEmpty ? "its certificate could not be verified" : "its certificate cannot be trusted: " + reasons.joined(separator: "; ")
        trace.record("sign-in-failed", [("error", "TLS: \(host): \(why)")])
        showPage(title: "This connection is not secure", message: "Sesame did not open \(host) because \(why). Sign-in stops here; it never continues over an untrusted connection.", for: uri)
        return true
    }

    /// A readable page in place of a failed load.
    func showPage(title: String, message: String, for uri: String) {
        let html = """
            <!DOCTYPE html><html><head><meta charset="utf-8"><title>\(Self.escape(title))</title>
            <style>body{font-family:Cantarell,"Noto Sans",sans-serif;background:#f6f5f4;color:#2e3436;display:flex;justify-content:center;margin-top:15vh}
            main{max-width:520px;background:#fff;padding:32px;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.2)}h1{font-size:22px}</style></head>
            <body><main><h1 id="errorTitle">\(Self.escape(title))</h1><p id="errorMessage">\(Self.escape(message))</p></main></body></html>
            """
        webkit_web_view_load_alternate_html(webView, html, uri, nil)
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
