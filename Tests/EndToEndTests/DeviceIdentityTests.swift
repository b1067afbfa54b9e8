import Foundation
import IdentityEmulator
import SesameCore
import SesameTestSupport
import Testing

/// Sesame's side of device registration and the Primary Refresh Token (``DeviceIdentityClient``)
/// against the emulator over real sockets. The emulator's side is also held to roadtx, which
/// works against the real Entra ID (`DeviceRegistrationProtocolTests`).
@Suite("A registered device and its PRT: SesameCore against the emulator")
struct DeviceIdentityTests {
    static let user = "alex@contoso.onmicrosoft.com"
    static let azureCLI = "04b07795-8ddb-461a-bbee-02f9e1bf7b46"

    /// What the device registration starts from: alex signed in to the Microsoft Authentication
    /// Broker for the registration service (a token for it, and the broker's refresh token).
    static func brokerSignIn(_ emulator: RunningEmulator) async throws -> (registration: Secret, refresh: Secret, browser: HeadlessBrowser)
    {
        let browser = HeadlessBrowser.sockets(base: emulator.base, codes: emulator.codes)
        let redirect = emulator.base.appending(path: "common/oauth2/nativeclient").absoluteString
        let scope = "\(DeviceIdentityClient.registrationResource)/.default openid offline_access"
        let authorize = FormEncoding.url(
            emulator.base.appending(path: "organizations/oauth2/v2.0/authorize"),
            appending: [
                ("client_id", DeviceIdentityClient.brokerClientID), ("response_type", "code"), ("redirect_uri", redirect), ("scope", scope),
            ])
        let page = try await browser.signIn(user, authorize: authorize.absoluteString)
        let location = try #require(page.location.flatMap(URLComponents.init(string:)), "the sign-in ended on \(page.status)")
        let code = try #require(location.queryItems?.first { $0.name == "code" }?.value)
        let answer = try await browser.post(
            "/organizations/oauth2/v2.0/token",
            form: [
                ("client_id", DeviceIdentityClient.brokerClientID), ("grant_type", "authorization_code"), ("code", code),
                ("redirect_uri", redirect), ("scope", scope),
            ])
        let access = try #require(answer.json["access_token"] as? String, "\(answer.text)")
        let refresh = try #require(answer.json["refresh_token"] as? String)
        return (Secret(access), Secret(refresh), browser)
    }

    static func claims(_ token: Secret) throws -> [String: Any] {
        let payload = try #require(token.revealed.split(separator: ".").dropFirst().first.flatMap { Base64URL.decode($0) })
        return try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
    }

    @Test("registered, the PRT gives another app its token with no page and the device in it; the cookie signs a browser in")
    func registeredDeviceSignsIn() async throws {
        let emulator = try await RunningEmulator(users: 20)
        let (registrationToken, refresh, browser) = try await Self.brokerSignIn(emulator)
        let client = DeviceIdentityClient(transport: AsyncHTTPClientTransport(), authority: emulator.base)
        let keys = try await SoftwareDeviceKeys.generate()
        let device = try await client.register(
            accessToken: registrationToken, tenant: "contoso.onmicrosoft.com", keys: keys, displayName: "sesame-test",
            osVersion: "Debian 13")
        #expect(UUID(uuidString: device.deviceID) != nil)
        #expect(device.userPrincipalName == Self.user)
        #expect(emulator.codes.all.contains("device-registered \(device.deviceID) \(Self.user)"))

        let prt = try await client.requestPRT(refreshToken: refresh, registration: device, keys: keys)
        #expect(prt.deviceID == device.deviceID)
        #expect(!"\(prt)".contains(prt.token.revealed), "a PRT prints as its device and expiry only")

        let tokens = try await client.tokens(
            from: prt, clientID: Self.azureCLI, scope: "https://graph.microsoft.com/.default openid offline_access")
        let claims = try Self.claims(tokens.accessToken)
        #expect(claims["deviceid"] as? String == device.deviceID)
        #expect(claims["appid"] as? String == Self.azureCLI)
        #expect(tokens.refreshToken != nil)

        // An app of the organization's own still needs the user's consent: the PRT is no consent.
        let unconsented = await #expect(throws: DeviceIdentityError.self) {
            try await client.tokens(from: prt, clientID: "6731de76-14a6-49ae-97bc-6eba6914391e", scope: "User.Read offline_access")
        }
        #expect(unconsented?.serviceCode == "AADSTS65001")

        let renewed = try await client.renew(prt)
        #expect(renewed.token != prt.token)
        let again = try await client.tokens(from: renewed, clientID: Self.azureCLI, scope: "https://graph.microsoft.com/.default")
        #expect(try Self.claims(again.accessToken)["deviceid"] as? String == device.deviceID)

        // A browser with the cookie: a code, no page.
        let cookie = client.ssoCookie(renewed, nonce: try await client.nonce())
        let authorize = FormEncoding.url(
            emulator.base.appending(path: "organizations/oauth2/v2.0/authorize"),
            appending: [
                ("client_id", Self.azureCLI), ("response_type", "code"), ("redirect_uri", "http://localhost"), ("scope", "openid profile"),
            ])
        let answer = try await browser.get(authorize.absoluteString, cookie: "x-ms-RefreshTokenCredential=\(cookie.revealed)")
        #expect(answer.status == 302)
        #expect(answer.location?.hasPrefix("http://localhost/?code=") == true, "\(answer.text.prefix(200))")
        #expect(
            emulator.codes.all.contains("prt-sso \(device.deviceID) \(Self.azureCLI)"), "the cookie, not the browser's session, signed in")

        // The keys, as a key store seals them and reads them back, still prove the device.
        let restored = try SoftwareDeviceKeys(exported: keys.exported)
        let fromRestored = try await client.requestPRT(refreshToken: refresh, registration: device, keys: restored)
        #expect(fromRestored.deviceID == device.deviceID)
    }

    @Test("a device removed in the organization, or disabled there, is named as such at the next PRT use")
    func removedOrDisabled() async throws {
        let emulator = try await RunningEmulator(users: 20)
        let (registrationToken, refresh, browser) = try await Self.brokerSignIn(emulator)
        let client = DeviceIdentityClient(transport: AsyncHTTPClientTransport(), authority: emulator.base)
        let keys = try await SoftwareDeviceKeys.generate()
        let device = try await client.register(
            accessToken: registrationToken, tenant: "contoso.onmicrosoft.com", keys: keys, displayName: "laptop", osVersion: "Debian 13")
        let prt = try await client.requestPRT(refreshToken: refresh, registration: device, keys: keys)

        _ = try await browser.post("/.emulator/devices/\(device.deviceID)/disable", form: [])
        let disabled = await #expect(throws: DeviceIdentityError.self) {
            try await client.tokens(from: prt, clientID: Self.azureCLI, scope: "https://graph.microsoft.com/.default")
        }
        #expect(disabled?.code == .deviceDisabled)
        #expect(disabled?.serviceCode == "AADSTS135011")
        _ = try await browser.post("/.emulator/devices/\(device.deviceID)/enable", form: [])

        try await client.remove(device, accessToken: registrationToken)
        let removed = await #expect(throws: DeviceIdentityError.self) {
            try await client.tokens(from: prt, clientID: Self.azureCLI, scope: "https://graph.microsoft.com/.default")
        }
        #expect(removed?.code == .deviceRemoved)
        #expect(removed?.description == "This computer is no longer registered with your organization. (AADSTS700003)")
        // Removing it again is not an error: it is gone, as asked.
        try await client.remove(device, accessToken: registrationToken)
    }

    /// alex's computer registered, and an app's refresh token from its PRT's sign-in (it names the
    /// device), with what removes or disables the device.
    static func refreshTokenFromPRT(
        _ emulator: RunningEmulator
    ) async throws -> (
        refresh: String, device: DeviceRegistration, client: DeviceIdentityClient, registration: Secret, browser: HeadlessBrowser
    ) {
        let (registrationToken, refresh, browser) = try await brokerSignIn(emulator)
        let client = DeviceIdentityClient(transport: AsyncHTTPClientTransport(), authority: emulator.base)
        let keys = try await SoftwareDeviceKeys.generate()
        let device = try await client.register(
            accessToken: registrationToken, tenant: "contoso.onmicrosoft.com", keys: keys, displayName: "laptop", osVersion: "Debian 13")
        let prt = try await client.requestPRT(refreshToken: refresh, registration: device, keys: keys)
        let tokens = try await client.tokens(from: prt, clientID: azureCLI, scope: "https://graph.microsoft.com/.default offline_access")
        #expect(try claims(tokens.accessToken)["deviceid"] as? String == device.deviceID)
        return (try #require(tokens.refreshToken).revealed, device, client, registrationToken, browser)
    }

    /// The app redeems `refreshToken` as any app does (no PRT): the new access and refresh
    /// tokens, or the service's `error_codes`.
    static func redeem(_ refreshToken: String, _ browser: HeadlessBrowser) async throws -> (issued: Bool, refresh: String?, codes: [Int]) {
        let answer = try await browser.post(
            "/organizations/oauth2/v2.0/token",
            form: [
                ("client_id", azureCLI), ("grant_type", "refresh_token"), ("refresh_token", refreshToken),
                ("scope", "https://graph.microsoft.com/.default offline_access"),
            ])
        return (answer.json["access_token"] is String, answer.json["refresh_token"] as? String, answer.json["error_codes"] as? [Int] ?? [])
    }

    @Test("a refresh token from the PRT's sign-in gets nothing once its device is deleted: AADSTS700003, as the PRT itself")
    func refreshAfterDeletion() async throws {
        let emulator = try await RunningEmulator(users: 20)
        let (refresh, device, client, registrationToken, browser) = try await Self.refreshTokenFromPRT(emulator)
        let before = try await Self.redeem(refresh, browser)
        #expect(before.issued, "registered, the refresh works")

        try await client.remove(device, accessToken: registrationToken)
        let after = try await Self.redeem(try #require(before.refresh), browser)
        #expect(!after.issued, "a token naming a deleted device was issued")
        #expect(after.codes == [700_003])
    }

    @Test("a refresh token from the PRT's sign-in gets nothing while its device is disabled (AADSTS135011), and works once enabled")
    func refreshWhileDisabled() async throws {
        let emulator = try await RunningEmulator(users: 20)
        let (refresh, device, _, _, browser) = try await Self.refreshTokenFromPRT(emulator)
        _ = try await browser.post("/.emulator/devices/\(device.deviceID)/disable", form: [])
        let disabled = try await Self.redeem(refresh, browser)
        #expect(!disabled.issued, "a token naming a disabled device was issued")
        #expect(disabled.codes == [135_011])

        _ = try await browser.post("/.emulator/devices/\(device.deviceID)/enable", form: [])
        let enabled = try await Self.redeem(disabled.refresh ?? refresh, browser)
        #expect(enabled.issued, "enabled again, the refresh works: \(enabled.codes)")
    }

    @Test("a policy that requires a registered device is evaluated again at each refresh: the device deleted, the refresh is refused")
    func policyAtRefresh() async throws {
        let emulator = try await RunningEmulator(users: 20)
        let (refresh, device, client, registrationToken, browser) = try await Self.refreshTokenFromPRT(emulator)
        let policy = """
            {"tenants":{"contoso.onmicrosoft.com":{"conditionalAccess":[{"name":"Known computers","apps":["\(Self.azureCLI)"],"require":"registeredDevice"}]}}}
            """
        _ = try await browser.send("/.emulator/policy", method: .post, headers: [:], body: policy)
        let registered = try await Self.redeem(refresh, browser)
        #expect(registered.issued, "the registered device passes the policy: \(registered.codes)")

        try await client.remove(device, accessToken: registrationToken)
        let removed = try await Self.redeem(try #require(registered.refresh), browser)
        #expect(!removed.issued, "a removed device passed a policy that requires a registered one")
        #expect(removed.codes == [700_003])
    }
}

/// A device identity kept in memory, as the keyring keeps it (its one secret).
final class MemoryDeviceIdentityStorage: DeviceIdentityStorage, @unchecked Sendable {
    private let lock = NSLock()
    private var value: Secret?
    var location: String { "memory" }
    func load() throws -> Secret? { lock.withLock { value } }
    func save(_ value: Secret) throws { lock.withLock { self.value = value } }
    func clear() throws { lock.withLock { value = nil } }
}

@Suite("This computer's identity, kept and used: DeviceIdentity against the emulator")
struct DeviceIdentityLifecycleTests {
    static let azureCLI = "04b07795-8ddb-461a-bbee-02f9e1bf7b46"

    @Test("registered once through the sign-in pages, it serves any app after a restart, and removing it removes it there")
    func registerRestartRemove() async throws {
        let emulator = try await RunningEmulator(users: 20)
        let storage = MemoryDeviceIdentityStorage()
        let authority = emulator.base.appending(path: "contoso.onmicrosoft.com")
        let identity = DeviceIdentity(storage: storage, transport: AsyncHTTPClientTransport())
        #expect(try await identity.status() == nil)
        let registration = try await identity.register(
            authority: authority, tenant: "contoso.onmicrosoft.com", displayName: "alex's laptop", osVersion: "Debian 13",
            using: HeadlessUserAgent.entra(DeviceIdentityTests.user, emulator: emulator))
        #expect(emulator.codes.all.contains("prt-issued \(registration.deviceID)"))
        let kept = try #require(try storage.load())
        #expect(!kept.revealed.isEmpty)

        // Another process (a restart): the same storage, the same device, no page.
        let again = DeviceIdentity(storage: storage, transport: AsyncHTTPClientTransport())
        let status = try #require(try await again.status())
        #expect(status.deviceID == registration.deviceID)
        #expect(status.userPrincipalName == DeviceIdentityTests.user)
        let tokens = try await again.tokens(clientID: Self.azureCLI, scope: "https://graph.microsoft.com/.default")
        #expect(try DeviceIdentityTests.claims(tokens.accessToken)["deviceid"] as? String == registration.deviceID)

        try await again.remove()
        #expect(try await again.status() == nil)
        #expect(try storage.load() == nil)
        #expect(emulator.codes.all.contains("device-removed \(registration.deviceID)"))
        let afterwards = await #expect(throws: DeviceIdentityError.self) {
            try await again.tokens(clientID: Self.azureCLI, scope: "https://graph.microsoft.com/.default")
        }
        #expect(afterwards?.code == .notRegistered)
    }

    @Test("a registration removed by another program while this one renews the PRT stays removed: the renewal keeps nothing")
    func removedDuringRenewal() async throws {
        let emulator = try await RunningEmulator(users: 20)
        let storage = MemoryDeviceIdentityStorage()
        let clock = MovableClock()
        let transport = InterceptingTransport(AsyncHTTPClientTransport())
        let identity = DeviceIdentity(storage: storage, transport: transport, now: { clock.now })
        _ = try await identity.register(
            authority: emulator.base.appending(path: "organizations"), tenant: "contoso.onmicrosoft.com", displayName: "laptop",
            osVersion: "Debian 13", using: HeadlessUserAgent.entra(DeviceIdentityTests.user, emulator: emulator))
        // Five hours on, the next use renews the PRT; as it goes out, `sesame device remove` in
        // another program forgets the registration.
        clock.advance(by: 5 * 3600)
        transport.beforeNextRequest { try? storage.clear() }
        _ = try? await identity.tokens(clientID: Self.azureCLI, scope: "https://graph.microsoft.com/.default")
        #expect(try storage.load() == nil, "the renewal wrote the removed registration back")
        #expect(try await identity.status() == nil)
    }

    @Test("the browser's cookie only for the registered sign-in service's origin: another scheme, host or port gets none")
    func cookieOnlyForItsOrigin() async throws {
        let emulator = try await RunningEmulator(users: 20)
        let identity = DeviceIdentity(storage: MemoryDeviceIdentityStorage(), transport: AsyncHTTPClientTransport())
        _ = try await identity.register(
            authority: emulator.base.appending(path: "organizations"), tenant: "contoso.onmicrosoft.com", displayName: "laptop",
            osVersion: "Debian 13", using: HeadlessUserAgent.entra(DeviceIdentityTests.user, emulator: emulator))
        let port = try #require(emulator.base.port)
        let own = try #require(URL(string: "http://127.0.0.1:\(port)/common/oauth2/authorize"))
        #expect(!(try await identity.ssoCookie(for: own)).revealed.isEmpty)
        for elsewhere in [
            "https://127.0.0.1:\(port)/common/oauth2/authorize", "http://localhost:\(port)/common/oauth2/authorize",
            "http://127.0.0.1:\(port + 1)/common/oauth2/authorize",
        ] {
            let refused = await #expect(throws: DeviceIdentityError.self, "a cookie for \(elsewhere)") {
                try await identity.ssoCookie(for: try #require(URL(string: elsewhere)))
            }
            #expect(refused?.code == .refused)
            let origin = elsewhere.replacingOccurrences(of: "/common/oauth2/authorize", with: "")
            #expect(
                refused?.message.hasSuffix("not \(origin).") == true, "the refusal names the origin asked for: \(refused?.message ?? "")")
        }
    }

    @Test("a device the organization removed is forgotten at its next use, with the sentence that says why")
    func removedThere() async throws {
        let emulator = try await RunningEmulator(users: 20)
        let storage = MemoryDeviceIdentityStorage()
        let identity = DeviceIdentity(storage: storage, transport: AsyncHTTPClientTransport())
        let registration = try await identity.register(
            authority: emulator.base.appending(path: "organizations"), tenant: "contoso.onmicrosoft.com", displayName: "laptop",
            osVersion: "Debian 13", using: HeadlessUserAgent.entra(DeviceIdentityTests.user, emulator: emulator))
        // The organization removes it (as an administrator, or the user in My Account).
        let browser = HeadlessBrowser.sockets(base: emulator.base, codes: emulator.codes)
        let graph = try await identity.tokens(clientID: Self.azureCLI, scope: "https://graph.microsoft.com/.default")
        let devices = try await browser.get("/v1.0/me/registeredDevices", headers: [.authorization: "Bearer \(graph.accessToken.revealed)"])
        let objectID = try #require(
            ((devices.json["value"] as? [[String: Any]]) ?? []).first { $0["deviceId"] as? String == registration.deviceID }?["id"]
                as? String)
        let deleted = try await browser.send(
            "/v1.0/devices/\(objectID)", method: .delete, headers: [.authorization: "Bearer \(graph.accessToken.revealed)"], body: nil)
        #expect(deleted.status == 204)

        let refused = await #expect(throws: DeviceIdentityError.self) {
            try await identity.tokens(clientID: Self.azureCLI, scope: "https://graph.microsoft.com/.default")
        }
        #expect(refused?.code == .deviceRemoved)
        #expect(try storage.load() == nil, "a removed device's keys and PRT are of no use: forgotten")
    }
}

/// A clock a test moves forward.
final class MovableClock: @unchecked Sendable {
    private let lock = NSLock()
    private var offset: TimeInterval = 0
    var now: Date { lock.withLock { Date().addingTimeInterval(offset) } }
    func advance(by seconds: TimeInterval) { lock.withLock { offset += seconds } }
}

/// A transport that runs a step of the test's just before the next request goes out.
final class InterceptingTransport: HTTPTransport, @unchecked Sendable {
    private let transport: any HTTPTransport
    private let lock = NSLock()
    private var step: (() -> Void)?

    init(_ transport: any HTTPTransport) { self.transport = transport }

    func beforeNextRequest(_ step: @escaping () -> Void) { lock.withLock { self.step = step } }

    func send(
        _ request: SesameCore.HTTPRequest, progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> SesameCore.HTTPResponse {
        let step = lock.withLock { () -> (() -> Void)? in
            defer { self.step = nil }
            return self.step
        }
        step?()
        return try await transport.send(request, progress: progress)
    }
}

/// A sign-in agent that counts the pages it showed, showing them with `agent`.
final class PageCountingUserAgent: SignInUserAgent, @unchecked Sendable {
    private let agent: any SignInUserAgent
    private let lock = NSLock()
    private var shown = 0
    var pages: Int { lock.withLock { shown } }

    init(_ agent: any SignInUserAgent) { self.agent = agent }

    func redirectURI(for configuration: AccountConfiguration) async throws -> URL { try await agent.redirectURI(for: configuration) }
    func present(_ session: SignInSession) async throws {
        lock.withLock { shown += 1 }
        try await agent.present(session)
    }
    func dismiss(_ session: SignInSession) async { await agent.dismiss(session) }
}

@Suite("One sign-in for the desktop: Sesame's own sign-ins through this computer's PRT")
struct DeviceSignInTests {
    static let user = DeviceIdentityTests.user

    /// A registered computer (alex's) and a store that signs in with it, for the samples' settings.
    static func registered(_ emulator: RunningEmulator) async throws -> (DeviceIdentity, MemoryDeviceIdentityStorage, DeviceRegistration) {
        let storage = MemoryDeviceIdentityStorage()
        let identity = DeviceIdentity(storage: storage, transport: AsyncHTTPClientTransport())
        let registration = try await identity.register(
            authority: emulator.base.appending(path: "organizations"), tenant: "contoso.onmicrosoft.com", displayName: "alex's laptop",
            osVersion: "Debian 13", using: HeadlessUserAgent.entra(user, emulator: emulator))
        return (identity, storage, registration)
    }

    static func store(_ identity: DeviceIdentity?, _ emulator: RunningEmulator) async throws -> AccountStore {
        let store = AccountStore(
            storage: FileTokenStorage(directory: Repository.temporaryDirectory("sesame-device")), transport: AsyncHTTPClientTransport(),
            device: identity)
        for name in ["me.plist", "directory.plist"] {
            let settings = try CoreAgainstEmulatorTests.settings(name, at: emulator.base)
            await store.setConfiguration(settings.accountConfiguration, forAccountType: settings.accountType)
        }
        return store
    }

    @Test(
        "an app the organization consented to signs in with no page, its token naming the device, where a registered computer is required; one needing consent shows its page"
    )
    func signsInWithNoPage() async throws {
        let emulator = try await RunningEmulator(users: 20)
        let (identity, _, registration) = try await Self.registered(emulator)
        let browser = HeadlessBrowser.sockets(base: emulator.base, codes: emulator.codes)
        let store = try await Self.store(identity, emulator)
        let me = try #require(await store.configuration(forAccountType: "msalGraph"))
        _ = try await browser.post("/.emulator/clients/\(me.clientID)/adminConsent", form: [])

        let events = await store.events()
        // The organization admits only registered computers to the app: a page's sign-in (no device) is
        // refused; the PRT's, which names the device, is not.
        let policy = """
            {"tenants":{"contoso.onmicrosoft.com":{"conditionalAccess":[{"name":"Known computers","apps":["\(me.clientID)"],"require":"registeredDevice"}]}}}
            """
        _ = try await browser.send("/.emulator/policy", method: .post, headers: [:], body: policy)
        let authorize = FormEncoding.url(
            me.authorizationURL,
            appending: [
                ("client_id", me.clientID), ("response_type", "code"), ("redirect_uri", me.redirectURL.absoluteString),
                ("scope", "openid profile User.Read"),
            ])
        let refusedPage = try await HeadlessBrowser.sockets(base: emulator.base, codes: emulator.codes).signIn(
            Self.user, authorize: authorize.absoluteString)
        #expect(refusedPage.contains("AADSTS50097"), "\(refusedPage.text.prefix(300))")

        let agent = PageCountingUserAgent(HeadlessUserAgent.entra(Self.user, emulator: emulator))
        let account = try await store.signIn(accountType: "msalGraph", using: agent)
        #expect(agent.pages == 0, "the PRT signed alex in: no page")
        #expect(account.username == Self.user)
        let token = try await store.accessToken(for: account)
        #expect(try DeviceIdentityTests.claims(token.secret)["deviceid"] as? String == registration.deviceID)
        #expect(emulator.codes.all.contains("prt-token \(registration.deviceID) \(me.clientID)"))
        var iterator = events.makeAsyncIterator()
        var announced = false
        while let event = await iterator.next() {
            if case .signedInWithDevice("msalGraph", registration.deviceID) = event {
                announced = true
                break
            }
        }
        #expect(announced, "the inspector hears that the PRT signed in")

        // The Directory sample needs alex's own consent first (AADSTS65001 to the PRT): its page.
        let directory = try await store.signIn(accountType: "myGraphService", using: agent)
        #expect(agent.pages == 1)
        #expect(directory.username == Self.user)
    }

    @Test("after a sign-out, or with another user's hint, the page asks who signs in; the PRT does not pick for the user")
    func userChooses() async throws {
        let emulator = try await RunningEmulator(users: 20)
        let (identity, _, _) = try await Self.registered(emulator)
        let store = try await Self.store(identity, emulator)
        let clientID = try #require(await store.configuration(forAccountType: "msalGraph")).clientID
        _ = try await HeadlessBrowser.sockets(base: emulator.base, codes: emulator.codes).post(
            "/.emulator/clients/\(clientID)/adminConsent", form: [])
        let agent = PageCountingUserAgent(HeadlessUserAgent.entra(Self.user, emulator: emulator))
        let account = try await store.signIn(accountType: "msalGraph", using: agent)
        #expect(agent.pages == 0)
        try await store.remove(account)
        _ = try await store.signIn(accountType: "msalGraph", using: agent)
        #expect(agent.pages == 1, "signed out: the next sign-in asks who")
        _ = try await store.signIn(accountType: "msalGraph", parameters: ["login_hint": "megan@contoso.onmicrosoft.com"], using: agent)
        #expect(agent.pages == 2, "another user's hint: that user's page")
    }

    @Test("an app signed in by the PRT, its computer removed, is refused its next refresh with Sesame's sentence for a removed computer")
    func refreshAfterRemoval() async throws {
        let emulator = try await RunningEmulator(users: 20)
        let (identity, _, _) = try await Self.registered(emulator)
        let store = try await Self.store(identity, emulator)
        let clientID = try #require(await store.configuration(forAccountType: "msalGraph")).clientID
        _ = try await HeadlessBrowser.sockets(base: emulator.base, codes: emulator.codes).post(
            "/.emulator/clients/\(clientID)/adminConsent", form: [])
        let agent = PageCountingUserAgent(HeadlessUserAgent.entra(Self.user, emulator: emulator))
        let account = try await store.signIn(accountType: "msalGraph", using: agent)
        #expect(agent.pages == 0, "the PRT signed alex in")

        try await identity.remove()
        let refused = await #expect(throws: AccountStoreError.self) { try await store.accessToken(for: account, forceRefresh: true) }
        #expect(refused?.serviceCode == "AADSTS700003")
        #expect(refused?.message == "This computer is no longer registered with your organization: sign in again.")
    }

    @Test("a computer the organization removed is said so once, forgotten, and the page signs in as before")
    func removedDeviceFallsBack() async throws {
        let emulator = try await RunningEmulator(users: 20)
        let (identity, storage, registration) = try await Self.registered(emulator)
        let store = try await Self.store(identity, emulator)
        let clientID = try #require(await store.configuration(forAccountType: "msalGraph")).clientID
        let browser = HeadlessBrowser.sockets(base: emulator.base, codes: emulator.codes)
        _ = try await browser.post("/.emulator/clients/\(clientID)/adminConsent", form: [])
        // The user removes the computer in My Account (Graph, with a token the PRT gave).
        let graph = try await identity.tokens(clientID: DeviceIdentityTests.azureCLI, scope: "https://graph.microsoft.com/.default")
        let devices = try await browser.get("/v1.0/me/registeredDevices", headers: [.authorization: "Bearer \(graph.accessToken.revealed)"])
        let objectID = try #require(
            ((devices.json["value"] as? [[String: Any]]) ?? []).first { $0["deviceId"] as? String == registration.deviceID }?["id"]
                as? String)
        _ = try await browser.send(
            "/v1.0/devices/\(objectID)", method: .delete, headers: [.authorization: "Bearer \(graph.accessToken.revealed)"], body: nil)

        let events = await store.events()
        let agent = PageCountingUserAgent(HeadlessUserAgent.entra(Self.user, emulator: emulator))
        let account = try await store.signIn(accountType: "msalGraph", using: agent)
        #expect(agent.pages == 1, "no PRT any more: the page")
        #expect(account.username == Self.user)
        #expect(try storage.load() == nil, "the removed registration is forgotten")
        var iterator = events.makeAsyncIterator()
        var lost: DeviceIdentityError?
        while let event = await iterator.next() {
            if case .deviceLost(let error) = event {
                lost = error
                break
            }
        }
        #expect(lost?.code == .deviceRemoved)
        #expect(lost?.description == "This computer is no longer registered with your organization. (AADSTS700003)")
        let token = try await store.accessToken(for: account)
        #expect(try DeviceIdentityTests.claims(token.secret)["deviceid"] == nil)
    }
}
