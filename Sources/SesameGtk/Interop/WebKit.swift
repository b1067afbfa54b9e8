import CGtkWebKit
import FoundationEssentials
import SesameGIO

/// A WebKit web context: the cookie jar and web data one sign-in view uses.
@MainActor
public final class WebContext: GObjectReference {
    /// A context whose cookies and web data persist under `dataDirectory` (so the identity
    /// service's single sign-on survives a restart), or live in memory when it is nil.
    /// - Parameter automation: lets WebKitWebDriver open sessions in this context.
    public init(dataDirectory: URL?, automation: Bool) {
        let context: UnsafeMutablePointer<WebKitWebContext>
        if let dataDirectory {
            try? FileManager.default.createDirectory(
                at: dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            // The context takes its own reference to the manager.
            context = GObjectReference.withNewObject(
                sesame_website_data_manager_new(dataDirectory.path, dataDirectory.appending(path: "cache").path)
            ) { webkit_web_context_new_with_website_data_manager($0) }
            webkit_cookie_manager_set_persistent_storage(
                webkit_web_context_get_cookie_manager(context), dataDirectory.appending(path: "cookies.sqlite").path,
                WEBKIT_COOKIE_PERSISTENT_STORAGE_SQLITE)
        } else {
            context = webkit_web_context_new_ephemeral()
        }
        super.init(context, .new)
        if automation { webkit_web_context_set_automation_allowed(self.context, 1) }
    }

    var context: UnsafeMutablePointer<WebKitWebContext> { object.assumingMemoryBound(to: WebKitWebContext.self) }

    /// Trusts the certificate in the PEM file `file` for `host`, whoever signed it: a local
    /// authority's (the emulator's `--tls`) that the system does not know. False when the file
    /// holds no certificate.
    public func trust(certificateFile file: URL, forHost host: String) -> Bool {
        var error: UnsafeMutablePointer<GError>?
        guard let certificate = g_tls_certificate_new_from_file(file.path, &error) else {
            if let error { g_error_free(error) }
            return false
        }
        GObjectReference.withNewObject(certificate) { webkit_web_context_allow_tls_certificate_for_host(context, $0, host) }
        return true
    }

    /// Deletes every cookie and all web data ("Forget sign-in data").
    public func clearWebsiteData() {
        webkit_website_data_manager_clear(webkit_web_context_get_website_data_manager(context), WEBKIT_WEBSITE_DATA_ALL, 0, nil, nil, nil)
    }

    /// WebKitWebDriver opened a session: `viewForSession` answers which view it drives (the
    /// session is told this browser's name and WebKit's version first).
    public func onAutomationStarted(browserName: String, _ viewForSession: @escaping @MainActor () -> WebView) {
        Signals.object(self, "automation-started") { [weak self] session in
            // Tells WebDriver which browser this is: the WebKit version it was built with.
            let info = webkit_application_info_new()
            webkit_application_info_set_name(info, browserName)
            webkit_application_info_set_version(
                info, UInt(sesame_webkit_major_version()), UInt(sesame_webkit_minor_version()), UInt(sesame_webkit_micro_version()))
            webkit_automation_session_set_application_info(sesame_automation_session(session), info)
            webkit_application_info_unref(info)
            let owner = GObjectReference(session, .shared)
            Signals.returningObject(owner, "create-web-view") { viewForSession().object }
            self?.automationSessions.append(owner)
        }
    }

    private var automationSessions: [GObjectReference] = []
}

/// What a `decide-policy` signal asks about.
public enum PolicyDecisionKind: Sendable {
    /// The page is about to navigate the view.
    case navigation
    /// The page asks for a new window (a pop-up, `target=_blank`).
    case newWindow
    /// A response arrived (download or show).
    case response
}

/// One `decide-policy` question: what the view is about to do, and the way to answer it.
@MainActor
public struct PolicyDecision {
    /// What is being decided.
    public let kind: PolicyDecisionKind
    /// The address the navigation (or new window) goes to, as WebKit reports it.
    public let requestURI: String?
    /// The request's HTTP method (`GET`, or `POST` for a form).
    public let method: String
    /// For a response: its address.
    public let responseURI: String?
    /// For a response: it would be saved rather than shown (`Content-Disposition: attachment`,
    /// or a type the view cannot display).
    public let isDownload: Bool
    /// For a navigation: a server's redirect of the load in progress (WebKit asks before it
    /// sends the redirected request, which carries the first request's own headers again).
    public let isRedirect: Bool
    private let decision: UnsafeMutablePointer<WebKitPolicyDecision>
    private let request: UnsafeMutablePointer<WebKitURIRequest>?

    init?(_ pointer: UnsafeMutableRawPointer, type: UInt32) {
        decision = pointer.assumingMemoryBound(to: WebKitPolicyDecision.self)
        switch type {
        case WEBKIT_POLICY_DECISION_TYPE_NAVIGATION_ACTION.rawValue: kind = .navigation
        case WEBKIT_POLICY_DECISION_TYPE_NEW_WINDOW_ACTION.rawValue: kind = .newWindow
        case WEBKIT_POLICY_DECISION_TYPE_RESPONSE.rawValue: kind = .response
        default: return nil
        }
        if kind == .response {
            request = nil
            isRedirect = false
            let response = sesame_response_decision(pointer).flatMap { webkit_response_policy_decision_get_response($0) }
            responseURI = response.flatMap { webkit_uri_response_get_uri($0) }.map { String(cString: $0) }
            let disposition = response.flatMap { webkit_uri_response_get_http_headers($0) }.flatMap {
                soup_message_headers_get_one($0, "Content-Disposition")
            }.map { String(cString: $0) }
            let displayable =
                sesame_response_decision(pointer).map { webkit_response_policy_decision_is_mime_type_supported($0) != 0 } ?? true
            isDownload = !displayable || disposition?.lowercased().hasPrefix("attachment") == true
        } else {
            responseURI = nil
            isDownload = false
            let action = webkit_navigation_policy_decision_get_navigation_action(sesame_navigation_decision(pointer))
            request = action.flatMap { webkit_navigation_action_get_request($0) }
            isRedirect = action.map { webkit_navigation_action_is_redirect($0) != 0 } ?? false
        }
        requestURI = request.flatMap { webkit_uri_request_get_uri($0) }.map { String(cString: $0) }
        method = request.flatMap { webkit_uri_request_get_http_method($0) }.map { String(cString: $0) } ?? "GET"
    }

    /// The value of the request's header `name`, if the request WebKit is about to send has it.
    public func requestHeader(_ name: String) -> String? {
        request.flatMap { webkit_uri_request_get_http_headers($0) }.flatMap { soup_message_headers_get_one($0, name) }.map {
            String(cString: $0)
        }
    }

    /// Refuses: the view does not go there.
    public func ignore() { webkit_policy_decision_ignore(decision) }

    /// Lets the view do what it was about to (WebKit's own answer).
    public func use() { webkit_policy_decision_use(decision) }

    /// Keeps the question open after the signal returns `true`: the view waits until ``use()``
    /// or ``ignore()`` is called on the held decision.
    public func hold() -> HeldPolicyDecision { HeldPolicyDecision(self, pointer: decision) }
}

/// A `decide-policy` question answered later (its reference kept until then).
@MainActor
public final class HeldPolicyDecision: GObjectReference {
    public let decision: PolicyDecision

    fileprivate init(_ decision: PolicyDecision, pointer: UnsafeMutablePointer<WebKitPolicyDecision>) {
        self.decision = decision
        super.init(UnsafeMutableRawPointer(pointer), .shared)
    }
}

/// The stages of a page load (`load-changed`).
public enum LoadEvent: Sendable {
    case started, redirected, committed, finished

    init?(_ value: UInt32) {
        switch value {
        case WEBKIT_LOAD_STARTED.rawValue: self = .started
        case WEBKIT_LOAD_REDIRECTED.rawValue: self = .redirected
        case WEBKIT_LOAD_COMMITTED.rawValue: self = .committed
        case WEBKIT_LOAD_FINISHED.rawValue: self = .finished
        default: return nil
        }
    }
}

/// Why a site's certificate was not trusted.
public struct CertificateProblems: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let unknownAuthority = CertificateProblems(rawValue: G_TLS_CERTIFICATE_UNKNOWN_CA.rawValue)
    public static let wrongSite = CertificateProblems(rawValue: G_TLS_CERTIFICATE_BAD_IDENTITY.rawValue)
    public static let expired = CertificateProblems(rawValue: G_TLS_CERTIFICATE_EXPIRED.rawValue)
    public static let notYetValid = CertificateProblems(rawValue: G_TLS_CERTIFICATE_NOT_ACTIVATED.rawValue)
    public static let revoked = CertificateProblems(rawValue: G_TLS_CERTIFICATE_REVOKED.rawValue)
}

/// A WebKitWebView: a real browser engine, software-rendered, without developer tools.
@MainActor
public final class WebView: Widget {
    /// The context (cookies, web data) it was made with.
    public let context: WebContext

    /// A view in `context`; `automation` makes it one WebKitWebDriver may drive.
    public init(context: WebContext, automation: Bool) {
        self.context = context
        let view = automation ? sesame_web_view_new_for_automation(context.context) : webkit_web_view_new_with_context(context.context)
        super.init(new: view!)
        // Software rendering: sign-in pages are simple, and WebKit's GPU paths fail on some machines.
        let settings = webkit_web_view_get_settings(webView)
        webkit_settings_set_hardware_acceleration_policy(settings, WEBKIT_HARDWARE_ACCELERATION_POLICY_NEVER)
        webkit_settings_set_enable_developer_extras(settings, 0)
    }

    var webView: UnsafeMutablePointer<WebKitWebView> { sesame_web_view(object) }

    /// Loads an address.
    public func load(_ url: URL) { webkit_web_view_load_uri(webView, url.absoluteString) }

    /// Loads an address sending one more request header with it (this computer's single sign-on
    /// credential, as Windows' web views send it to the sign-in service). WebKit sends the header
    /// again with every redirect of this load (302, 307 and 308, to any host): the caller's
    /// `decide-policy` must stop a redirect that would take it where it may not go
    /// (``PolicyDecision/isRedirect``, ``PolicyDecision/requestHeader(_:)``). Links, forms and
    /// scripts that follow are loads of their own, without it.
    public func load(_ url: URL, header name: String, value: String) {
        guard let made = webkit_uri_request_new(url.absoluteString) else { return load(url) }
        GObjectReference.withNewObject(made) { request in
            if let headers = webkit_uri_request_get_http_headers(request) {
                soup_message_headers_append(headers, name, value)
            }
            webkit_web_view_load_request(webView, request)
        }
    }

    /// Stops the load in progress.
    public func stopLoading() { webkit_web_view_stop_loading(webView) }

    /// Shows `html` as if it were the page at `baseURI` (an error page in place of a failed one).
    public func loadAlternateHTML(_ html: String, for baseURI: String) { webkit_web_view_load_alternate_html(webView, html, baseURI, nil) }

    /// The title of the page shown.
    public var title: String? { webkit_web_view_get_title(webView).map { String(cString: $0) } }

    /// The address of the page shown.
    public var uri: String? { webkit_web_view_get_uri(webView).map { String(cString: $0) } }

    /// The HTTP status the page shown came with (its main resource), when it came over HTTP.
    public var mainResourceStatus: Int? {
        guard let resource = webkit_web_view_get_main_resource(webView), let response = webkit_web_resource_get_response(resource)
        else { return nil }
        let status = Int(webkit_uri_response_get_status_code(response))
        return status == 0 ? nil : status
    }

    /// Whether the page shown came over TLS with a certificate that verified.
    public var isSecure: Bool {
        var certificate: UnsafeMutablePointer<GTlsCertificate>?
        var flags = GTlsCertificateFlags(rawValue: 0)
        return webkit_web_view_get_tls_info(webView, &certificate, &flags) != 0 && flags.rawValue == 0
    }

    /// Runs JavaScript in the page (its result is not read).
    public func evaluateJavaScript(_ script: String) {
        webkit_web_view_evaluate_javascript(webView, script, -1, nil, nil, nil, nil, nil)
    }

    /// Runs JavaScript in the page and hands its result to `done` when it is a string (nil when
    /// the script failed or gave anything else), on the main loop.
    public func evaluateJavaScript(_ script: String, done: @escaping @MainActor (String?) -> Void) {
        let box = Unmanaged.passRetained(ScriptResult(done)).toOpaque()
        webkit_web_view_evaluate_javascript(
            webView, script, -1, nil, nil, nil,
            { source, result, data in
                guard let data else { return }
                let box = Unmanaged<ScriptResult>.fromOpaque(data).takeRetainedValue()
                var error: UnsafeMutablePointer<GError>?
                let value = webkit_web_view_evaluate_javascript_finish(
                    UnsafeMutableRawPointer(source)?.assumingMemoryBound(to: WebKitWebView.self), result, &error)
                let text: String? = value.flatMap { value in
                    GObjectReference.withNewObject(value) { value in
                        guard jsc_value_is_string(value) != 0, let characters = jsc_value_to_string(value) else { return nil }
                        defer { g_free(characters) }
                        return String(cString: characters)
                    }
                }
                if let error { g_error_free(error) }
                MainActor.assumeIsolated { box.done(text) }
            }, box)
    }

    /// Puts `text` on the desktop's clipboard (what Ctrl+V pastes).
    public static func copyToClipboard(_ text: String) {
        gtk_clipboard_set_text(gtk_clipboard_get(gdk_atom_intern("CLIPBOARD", 0)), text, -1)
    }

    /// The text on the desktop's clipboard now, if any.
    public static var clipboardText: String? {
        guard let text = gtk_clipboard_wait_for_text(gtk_clipboard_get(gdk_atom_intern("CLIPBOARD", 0))) else { return nil }
        defer { g_free(text) }
        return String(cString: text)
    }

    /// Answers `decide-policy`: return true when `decide` answered (ignored), false to let
    /// WebKit decide as usual.
    public func onDecidePolicy(_ decide: @escaping @MainActor (PolicyDecision) -> Bool) {
        Signals.objectAndEnum(self, "decide-policy") { pointer, type in
            guard let decision = PolicyDecision(pointer, type: type) else { return false }
            return decide(decision)
        }
    }

    /// Runs `action` at each stage of a page load.
    public func onLoadChanged(_ action: @escaping @MainActor (LoadEvent) -> Void) {
        Signals.enumerated(self, "load-changed") { value in
            if let event = LoadEvent(value) { action(event) }
        }
    }

    /// A load failed: the URI and the error; return true when handled (WebKit shows nothing).
    public func onLoadFailed(_ action: @escaping @MainActor (String, GLibError) -> Bool) { Signals.loadFailed(self, action) }

    /// A site's certificate was refused: the URI and why; return true when handled.
    public func onTLSFailed(_ action: @escaping @MainActor (String, CertificateProblems) -> Bool) {
        Signals.tlsFailed(self) { uri, flags in action(uri, CertificateProblems(rawValue: flags)) }
    }
}

/// The completion a script's result goes to (kept alive by the callback's reference).
private final class ScriptResult {
    let done: @MainActor (String?) -> Void
    init(_ done: @escaping @MainActor (String?) -> Void) { self.done = done }
}
