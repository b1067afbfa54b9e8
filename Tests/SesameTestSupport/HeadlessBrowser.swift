import AsyncHTTPClient
import Foundation
import HTTPTypes
import HummingbirdTesting
import IdentityEmulator
import NIOCore
import NIOHTTP1

/// The tests' one headless browser: a cookie jar, GET and POST, and walks through the identity
/// service's pages by Microsoft's and B2C's field names. It speaks to the identity emulator
/// either through Hummingbird's router test client (no sockets) or over real sockets, and never
/// follows a redirect by itself: the test (or a sign-in session) decides.
public final class HeadlessBrowser: @unchecked Sendable {
    /// One HTTP exchange: method, URI (a path, or absolute over sockets), headers, body.
    public typealias Exchange = @Sendable (HTTPRequest.Method, String, HTTPFields, String?) async throws -> Page

    private let exchange: Exchange
    private let lock = NSLock()
    private var cookies: [String: String] = [:]
    private var requested: [String] = []
    /// The one-time codes the emulator sent (to answer the SMS step).
    public let codes: OneTimeCodes
    /// The phone a user with no second factor registers when "More information required" asks
    /// (nil: the walk stops on that page, for the test to read).
    public var phoneToRegister: String? {
        get { lock.withLock { registeredPhone } }
        set { lock.withLock { registeredPhone = newValue } }
    }
    private var registeredPhone: String?
    /// The Temporary Access Pass the user was given (nil: the walk types the password, as before).
    /// The walk types it on "Enter Temporary Access Pass".
    public var temporaryAccessPass: String? {
        get { lock.withLock { givenPass } }
        set { lock.withLock { givenPass = newValue } }
    }
    private var givenPass: String?
    /// The name of the phone whose Microsoft Authenticator the user sets up when "Keep your
    /// account secure" asks (nil: the walk stops on that page, for the test to read).
    public var authenticatorToActivate: String? {
        get { lock.withLock { activatedPhone } }
        set { lock.withLock { activatedPhone = newValue } }
    }
    private var activatedPhone: String?

    /// A browser over `exchange`.
    public init(codes: OneTimeCodes, exchange: @escaping Exchange) {
        self.codes = codes
        self.exchange = exchange
    }

    /// A browser over Hummingbird's router test client. An absolute URI (the federated identity
    /// provider's, or Entra's `/login.srf` the provider posts to) is sent as its path and query
    /// with its host in the `Host` header, which the emulator reads to tell the hosts apart.
    public convenience init(router client: any TestClientProtocol, codes: OneTimeCodes) {
        self.init(codes: codes) { method, uri, headers, body in
            var fields = headers
            var target = uri
            if let url = URL(string: uri), let host = url.host, url.scheme != nil {
                fields[HTTPField.Name("Host")!] = url.port.map { "\(host):\($0)" } ?? host
                var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
                components?.scheme = nil
                components?.host = nil
                components?.port = nil
                target = components?.string ?? url.path
                if target.isEmpty { target = "/" }
            }
            let response = try await client.executeRequest(
                uri: target, method: method, headers: fields, body: body.map { ByteBuffer(string: $0) })
            return Page(status: response.status, headers: response.headers, text: String(buffer: response.body))
        }
    }

    /// A browser over real sockets to `base` (relative URIs are resolved against it), on `client`
    /// (one that follows no redirect) when the test gives one: a company network's, through its
    /// proxy.
    public static func sockets(base: URL, codes: OneTimeCodes, client given: HTTPClient? = nil) -> HeadlessBrowser {
        let client = given ?? Self.client
        return
            HeadlessBrowser(codes: codes) { method, uri, headers, body in
                let url = URL(string: uri, relativeTo: base)?.absoluteURL.absoluteString ?? uri
                var request = HTTPClientRequest(url: url)
                request.method = NIOHTTP1.HTTPMethod(rawValue: method.rawValue)
                for field in headers { request.headers.add(name: field.name.rawName, value: field.value) }
                if let body { request.body = .bytes(ByteBuffer(string: body)) }
                let response = try await client.execute(request, timeout: .seconds(15))
                var fields = HTTPFields()
                for (name, value) in response.headers {
                    if let field = HTTPField.Name(name) { fields.append(HTTPField(name: field, value: value)) }
                }
                let text = String(buffer: try await response.body.collect(upTo: 4 << 20))
                return Page(status: HTTPResponse.Status(code: Int(response.status.code)), headers: fields, text: text)
            }
    }

    /// The sockets' client: it never follows a redirect (the redirect URI is the app's).
    private static let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))

    /// A page (or any answer) the browser got.
    public struct Page: Sendable {
        public let status: HTTPResponse.Status
        public let headers: HTTPFields
        public let text: String
        /// The URI the browser asked for (a path, or absolute), to resolve the page's own links.
        public internal(set) var uri: String?

        public init(status: HTTPResponse.Status, headers: HTTPFields, text: String) {
            self.status = status
            self.headers = headers
            self.text = text
        }

        /// Where a redirect goes.
        public var location: String? { headers[.location] }

        /// Where the page's form posts (its `action`).
        public var formAction: String? {
            firstMatch(#"<form method="post" action="([^"]*)""#).map(Self.unescape)
        }

        /// Where the form whose `id` or `name` is `identifier` posts (AD FS's `loginForm`, the
        /// auto-submitting `hiddenform`), resolved against the page's own address.
        public func formAction(of identifier: String) -> String? {
            guard let tag = firstMatch(#"(<form\b[^>]*\b(?:id|name)="\#(identifier)"[^>]*>)"#),
                let action = Self.firstMatch(#"\baction="([^"]*)""#, in: tag)
            else { return nil }
            return resolve(Self.unescape(action))
        }

        /// A reference on this page made absolute against the page's URI (when that is absolute):
        /// a browser resolves a link against the page, not against where it started.
        public func resolve(_ reference: String) -> String {
            guard let uri, let page = URL(string: uri), page.scheme != nil,
                let resolved = URL(string: reference, relativeTo: page)?.absoluteString
            else { return reference }
            return resolved
        }

        /// A hidden field's value (`ctx`, `wresult`), its HTML escapes undone.
        public func hidden(_ name: String) -> String? {
            firstMatch(#"name="\#(name)" value="([^"]*)""#).map(Self.unescape)
        }

        /// Undoes the escapes the emulator's pages write in attribute values.
        static func unescape(_ text: String) -> String {
            guard text.contains("&") else { return text }
            return text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
                .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
                .replacingOccurrences(of: "&amp;", with: "&")
        }

        /// Where a redirect goes when it goes to a WS-Federation identity provider (Entra's home
        /// realm discovery for a federated domain's user): its absolute URL.
        public var identityProviderLocation: String? {
            guard (300..<400).contains(status.code), let location, location.contains("wa=wsignin1.0") else { return nil }
            return location
        }

        /// Whether the page's HTML contains `fragment` (an element id, say).
        public func contains(_ fragment: String) -> Bool { text.contains(fragment) }

        /// The number "Approve sign in request" shows, to type into Microsoft Authenticator.
        public var approvalNumber: Int? {
            firstMatch(#"id="\#(SignInPageIDs.displaySign)"[^>]*>(\d+)<"#).flatMap { Int($0) }
        }

        /// The first capture group of `pattern` in the page.
        public func firstMatch(_ pattern: String) -> String? { Self.firstMatch(pattern, in: text) }

        /// The first capture group of `pattern` in `text`.
        static func firstMatch(_ pattern: String, in text: String) -> String? {
            guard let regex = try? NSRegularExpression(pattern: pattern),
                let match = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
                let range = Range(match.range(at: 1), in: text)
            else { return nil }
            return String(text[range])
        }

        /// The redirect's parameters (query or fragment), decoded.
        public var redirectFields: [String: String] {
            guard let location, let separator = location.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return [:] }
            return Dictionary(FormEncoding.decode(location[location.index(after: separator)...]), uniquingKeysWith: { first, _ in first })
        }

        /// The body as a JSON object (empty when it is none).
        public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:] }
    }

    /// GETs `uri`.
    public func get(_ uri: String, headers: HTTPFields = [:]) async throws -> Page {
        try await send(uri, method: .get, headers: headers, body: nil)
    }

    /// GETs `uri` sending `cookie` (`name=value`) as the `Cookie` header, besides any the browser keeps.
    public func get(_ uri: String, cookie: String) async throws -> Page {
        try await get(uri, headers: [.cookie: cookie])
    }

    /// GETs `uri` sending one more header, `name: value` (as linux-entra-sso's extension sends
    /// the PRT's credential).
    public func get(_ uri: String, header name: String, value: String) async throws -> Page {
        guard let field = HTTPField.Name(name) else { throw TestSupportError("\(name) is no header name") }
        return try await get(uri, headers: [field: value])
    }

    /// POSTs a form.
    public func post(_ uri: String, form: [(String, String)], headers: HTTPFields = [:]) async throws -> Page {
        var fields = headers
        fields[.contentType] = "application/x-www-form-urlencoded"
        return try await send(uri, method: .post, headers: fields, body: FormEncoding.encode(form))
    }

    /// Sends a request with the cookies the browser holds, and keeps the ones it is given.
    public func send(_ uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: String?) async throws -> Page {
        var fields = headers
        let jar = lock.withLock {
            requested.append(uri)
            return cookies
        }
        if !jar.isEmpty {
            fields[.cookie] = ([fields[.cookie]].compactMap { $0 } + jar.map { "\($0.key)=\($0.value)" }).joined(separator: "; ")
        }
        var page = try await exchange(method, uri, fields, body)
        page.uri = uri
        lock.withLock {
            for header in page.headers[values: .setCookie] {
                let pair = header.split(separator: ";")[0].split(separator: "=", maxSplits: 1)
                guard pair.count == 2 else { continue }
                if pair[1].isEmpty || header.contains("Max-Age=0") {
                    cookies[String(pair[0])] = nil
                } else {
                    cookies[String(pair[0])] = String(pair[1])
                }
            }
        }
        return page
    }

    /// Every URI the browser asked for, in order (paths, or absolute URLs for other hosts): the
    /// trace of a sign-in.
    public var visited: [String] { lock.withLock { requested } }

    /// Forgets every cookie (a new browser profile).
    public func forgetCookies() { lock.withLock { cookies = [:] } }

    // MARK: The identity service's pages

    /// Walks Microsoft's pages: user name → password (→ the SMS code the emulator sent) → "Stay
    /// signed in?" (→ consent) and returns the last answer, whose `location` is the redirect.
    /// - Parameter authorize: the authorization request (a path, or absolute over sockets).
    /// - Parameter tenant: where the pages post when the first page does not say (its form's
    ///   `action` wins).
    public func signIn(
        _ user: String, password: String = SignInPageIDs.demoPassword, authorize uri: String, tenant: String = "contoso.onmicrosoft.com",
        consent: Bool = true
    ) async throws -> Page {
        let page = try await followRedirects(from: get(uri))
        guard let ctx = page.hidden("ctx") else { return page }
        return try await walkSignIn(user, password: password, ctx: ctx, login: page.formAction ?? "/\(tenant)/login", consent: consent)
    }

    /// The device code flow's verification page, as the person at another computer fills it:
    /// `/devicelogin`, the code in `otc`, Continue (or Cancel), then Microsoft's sign-in pages.
    /// Returns the last page (it says whether the device is signed in).
    /// - Parameter verificationURI: `verification_uri` from the device authorization response.
    public func verifyDevice(
        userCode: String, as user: String, password: String = SignInPageIDs.demoPassword, verificationURI: String = "/devicelogin",
        cancel: Bool = false, consent: Bool = true
    ) async throws -> Page {
        let entry = try await get(verificationURI)
        guard entry.contains(#"name="\#(SignInPageIDs.Fields.deviceCode)""#) else {
            throw TestSupportError("the verification page has no code field: \(entry.text.prefix(300))")
        }
        let confirm = try await post(verificationURI, form: [("step", "code"), (SignInPageIDs.Fields.deviceCode, userCode)])
        guard let ctx = confirm.hidden("ctx"), let login = confirm.formAction else { return confirm }
        let next = try await post(login, form: [("ctx", ctx), ("step", "device-confirm"), ("action", cancel ? "cancel" : "continue")])
        guard next.hidden("ctx") != nil else { return next }
        return try await walkSignIn(user, password: password, ctx: ctx, login: login, consent: consent)
    }

    /// Microsoft's pages from the user name on, in the transaction `ctx`. A federated domain's
    /// user is sent to the organisation's identity provider after the user name: the walk signs
    /// in there (``signInAtIdentityProvider(_:user:password:)``) and goes on where the provider's
    /// answer lands.
    private func walkSignIn(_ user: String, password: String, ctx: String, login: String, consent: Bool) async throws -> Page {
        var page = try await post(login, form: [("ctx", ctx), ("step", "username"), (SignInPageIDs.Fields.userName, user)])
        if let provider = page.identityProviderLocation {
            page = try await signInAtIdentityProvider(provider, user: user, password: password)
        } else if page.contains(#"id="\#(SignInPageIDs.accessPass)""#), let pass = temporaryAccessPass {
            page = try await enterTemporaryAccessPass(pass, ctx: ctx, login: login)
        } else {
            page = try await post(login, form: [("ctx", ctx), ("step", "password"), (SignInPageIDs.Fields.password, password)])
        }
        if page.contains("More information required"), let phone = phoneToRegister {
            // No second factor registered: register the phone, as the person would.
            _ = try await post(login, form: [("ctx", ctx), ("step", "proofup")])
            page = try await post(login, form: [("ctx", ctx), ("step", "proofup-phone"), (SignInPageIDs.Fields.phoneNumber, phone)])
        }
        page = try await secondFactor(page, user: user, ctx: ctx, login: login)
        if page.contains("Keep your account secure"), let device = authenticatorToActivate {
            page = try await setUpAuthenticator(user: user, device: device, ctx: ctx, login: login)
        }
        if page.contains(SignInPageIDs.staySignedIn) {
            page = try await post(login, form: [("ctx", ctx), ("step", "kmsi"), ("kmsi", "yes")])
        }
        if page.contains(SignInPageIDs.permissionList) {
            page = try await post(login, form: [("ctx", ctx), ("step", "consent"), ("consent", consent ? "accept" : "cancel")])
        }
        return page
    }

    /// The second factor a page asks for, answered as its user would: the texted code, the
    /// authenticator app's code, or the number shown approved on the phone. Returns the next page
    /// (or `page` itself when it asks for none).
    public func secondFactor(_ page: Page, user: String, ctx: String, login: String) async throws -> Page {
        if let number = page.approvalNumber {
            _ = try await phone(user, answer: "approve", number: number)
            return try await post(login, form: [("ctx", ctx), ("step", "sas")])
        }
        guard page.contains(SignInPageIDs.smsCode) else { return page }
        let code: String
        if page.hidden("mfaMethod") == AuthenticationMethod.softwareOath.rawValue {
            code = try await authenticatorAppCode(for: user)
        } else {
            guard let texted = codes.code(for: user) else { throw TestSupportError("the emulator sent \(user) no SMS code") }
            code = texted
        }
        return try await post(
            login,
            form: [("ctx", ctx), ("step", "otc"), ("mfaMethod", page.hidden("mfaMethod") ?? "sms"), (SignInPageIDs.Fields.smsCode, code)])
    }

    /// The user's phone answers Microsoft Authenticator's notification: `approve` (with the
    /// number the sign-in page shows), `deny` or `report` ("No, it's not me").
    @discardableResult
    public func phone(_ user: String, answer: String, number: Int? = nil) async throws -> Page {
        let body = number.map { #"{"answer": "\#(answer)", "number": \#($0)}"# } ?? #"{"answer": "\#(answer)"}"#
        let answered = try await send(
            "/.emulator/users/\(user)/authenticator", method: .post, headers: [.contentType: "application/json"], body: body)
        guard answered.status == .ok else { throw TestSupportError("the phone's answer was refused: \(answered.text)") }
        return answered
    }

    /// The six digits `user`'s authenticator app shows now (the app holds the secret it was set
    /// up with: the emulator's `softwareOath.secretKey`).
    public func authenticatorAppCode(for user: String, at time: Date = Date()) async throws -> String {
        let methods = try await get("/.emulator/users/\(user)/methods").json
        guard let app = methods["softwareOath"] as? [String: Any], let key = app["secretKey"] as? String else {
            throw TestSupportError("\(user) has no authenticator app set up")
        }
        return TOTP.code(secret: try TOTPSecret(base32: key), at: time)
    }

    // MARK: Onboarding: a Temporary Access Pass, then Microsoft Authenticator set up

    /// "Enter Temporary Access Pass": the pass typed, Sign in. Returns the next page (the
    /// registration interrupt, for a user with nothing else registered).
    public func enterTemporaryAccessPass(_ pass: String, ctx: String, login: String) async throws -> Page {
        try await post(login, form: [("ctx", ctx), ("step", "tap"), (SignInPageIDs.Fields.accessPass, pass)])
    }

    /// "Keep your account secure", as a person with a phone goes through it: Next (the QR code);
    /// the phone (named `device`) adds the account with the code under "Can't scan image?"
    /// (`POST /.emulator/authenticator/activate`); Next; the test notification's number approved
    /// on the phone; "Success!" → Done. Returns the page after Done ("Stay signed in?"), or the
    /// page where a step did not go as a person expects.
    public func setUpAuthenticator(user: String, device: String, ctx: String, login: String) async throws -> Page {
        let scan = try await post(login, form: [("ctx", ctx), ("step", "proofup-app")])
        guard let code = scan.firstMatch(#"id="\#(SignInPageIDs.activationCode)">(\d+)<"#) else { return scan }
        let body = String(
            decoding: try JSONSerialization.data(withJSONObject: ["code": code, "device": device]), as: UTF8.self)
        let activated = try await send(
            "/.emulator/authenticator/activate", method: .post, headers: [.contentType: "application/json"], body: body)
        guard activated.status == .ok else { throw TestSupportError("the phone could not add the account: \(activated.text)") }
        let test = try await post(login, form: [("ctx", ctx), ("step", "proofup-app-scanned")])
        guard let number = test.approvalNumber else { return test }
        try await phone(user, answer: "approve", number: number)
        let success = try await post(login, form: [("ctx", ctx), ("step", "proofup-app-test")])
        guard success.contains("Success!") else { return success }
        return try await post(login, form: [("ctx", ctx), ("step", "proofup-done")])
    }

    /// A federated organisation's AD FS, as a browser goes through it: its sign-in page at
    /// `location` (the passive endpoint, on the provider's own host), the user name and password
    /// in its `loginForm`, then its auto-submitting `hiddenform` posted to Entra's `/login.srf`.
    /// Returns Entra's answer to that post ("Stay signed in?", the SMS page, an error page), or
    /// the provider's page when it refused the password.
    public func signInAtIdentityProvider(_ location: String, user: String, password: String) async throws -> Page {
        let signInPage = try await get(location)
        guard let action = signInPage.formAction(of: SignInPageIDs.adfsLoginForm) else { return signInPage }
        let answer = try await post(
            action,
            form: [
                (SignInPageIDs.Fields.adfsUserName, user), (SignInPageIDs.Fields.adfsPassword, password),
                (SignInPageIDs.Fields.adfsAuthMethod, "FormsAuthentication"),
            ])
        guard let target = answer.formAction(of: SignInPageIDs.adfsHiddenForm) else { return answer }
        // The form's script posts it at once; a browser without scripts presses Submit.
        let fields = ["wa", "wresult", "wctx"].compactMap { name in answer.hidden(name).map { (name, $0) } }
        return try await post(target, form: fields)
    }

    /// Walks B2C's combined sign-in page and returns the answer, whose `location` is the redirect.
    public func b2cSignIn(
        _ email: String, password: String = SignInPageIDs.demoPassword, authorize uri: String,
        tenant: String = "fabrikamb2c.onmicrosoft.com"
    ) async throws -> Page {
        let page = try await followRedirects(from: get(uri))
        guard let ctx = page.hidden("ctx") else { return page }
        return try await post(
            page.formAction ?? "/\(tenant)/login",
            form: [
                ("ctx", ctx), ("step", "b2c-signin"), (SignInPageIDs.Fields.b2cSignInName, email),
                (SignInPageIDs.Fields.b2cPassword, password),
            ])
    }

    /// B2C's "Forgot your password?" on the combined sign-in page: the answer redirects with
    /// AADB2C90118.
    public func b2cForgotPassword(authorize uri: String, tenant: String = "fabrikamb2c.onmicrosoft.com") async throws -> Page {
        let page = try await followRedirects(from: get(uri))
        guard let ctx = page.hidden("ctx") else { return page }
        return try await post(
            page.formAction ?? "/\(tenant)/login", form: [("ctx", ctx), ("step", "b2c-signin"), ("action", "forgotPassword")])
    }

    /// B2C's password-reset user flow: the e-mail, the code the emulator sent to it, a new password.
    /// The answer redirects with a code.
    public func b2cResetPassword(
        _ email: String, to newPassword: String, authorize uri: String, tenant: String = "fabrikamb2c.onmicrosoft.com"
    ) async throws -> Page {
        let page = try await followRedirects(from: get(uri))
        guard let ctx = page.hidden("ctx") else { return page }
        let login = page.formAction ?? "/\(tenant)/login"
        _ = try await post(login, form: [("ctx", ctx), ("step", "b2c-reset"), ("action", "sendCode"), ("email", email)])
        guard let code = codes.code(for: email) else { throw TestSupportError("the emulator sent \(email) no code") }
        _ = try await post(login, form: [("ctx", ctx), ("step", "b2c-reset"), ("action", "verifyCode"), ("emailVerificationCode", code)])
        return try await post(
            login,
            form: [
                ("ctx", ctx), ("step", "b2c-reset"), ("action", "setPassword"), ("newPassword", newPassword),
                ("reenterPassword", newPassword),
            ])
    }

    /// Follows redirects that stay on the identity service (a relative `Location`, or the same
    /// host), as a browser would before showing a page.
    private func followRedirects(from first: Page) async throws -> Page {
        var page = first
        for _ in 0..<5 {
            guard (300..<400).contains(page.status.code), let location = page.location, location.hasPrefix("/") else { return page }
            page = try await get(location)
        }
        return page
    }
}

/// `application/x-www-form-urlencoded`, written here independently of both the client and the
/// emulator.
public enum FormEncoding {
    /// Encodes pairs in order.
    public static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    /// Decodes `a=1&b=2`.
    public static func decode(_ text: Substring) -> [(String, String)] {
        text.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (unescape(parts[0]), parts.count > 1 ? unescape(parts[1]) : "")
        }
    }

    private static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~")))?
            .replacingOccurrences(of: "%20", with: "+") ?? text
    }

    private static func unescape(_ text: Substring) -> String {
        String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
    }
}
