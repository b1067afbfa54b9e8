import Foundation
import SesameCore
import Testing

/// This computer's single sign-on credential stays on the origin it was made for: the sign-in
/// page's load follows redirects on that origin with it, and loads anything off it afresh without.
@Suite("The device credential's load")
struct DeviceCredentialLoadTests {
    static let authorize = URL(string: "https://login.microsoftonline.com/common/oauth2/v2.0/authorize?client_id=c&state=s")!

    @Test(
        "a redirect off the origin — another host, port or scheme — is loaded again without the credential",
        arguments: [
            "https://login.live.com/oauth20_authorize.srf?x=1",
            "https://evil.example/login.microsoftonline.com/",
            "https://login.microsoftonline.com.evil.example/common/oauth2/v2.0/authorize",
            "https://login.microsoftonline.com:8443/common/oauth2/v2.0/authorize",
            "http://login.microsoftonline.com/common/oauth2/v2.0/authorize",
            "http://localhost:18500/m1",
            "https://sts.fabrikam.example/adfs/ls/?wa=wsignin1.0&username=pat%40fabrikam.example",
        ])
    func offTheOrigin(target: String) throws {
        var load = try #require(DeviceCredentialLoad(firstRequest: Self.authorize))
        #expect(load.navigation(to: target, isRedirect: true) == .loadWithoutCredential(URL(string: target)!))
        #expect(!load.isCarrying)
        // The load made afresh is a navigation of its own: followed, and nothing carries the credential any more.
        #expect(load.navigation(to: target, isRedirect: false) == .follow)
        #expect(load.navigation(to: Self.authorize.absoluteString, isRedirect: true) == .follow)
        #expect(!load.isCarrying)
    }

    @Test("a redirect on the origin is followed with it (another path, another case, the default port spelled out)")
    func onTheOrigin() throws {
        var load = try #require(DeviceCredentialLoad(firstRequest: Self.authorize))
        for target in [
            "https://login.microsoftonline.com/common/reprocess?ctx=1", "https://LOGIN.microsoftonline.com/kmsi",
            "https://login.microsoftonline.com:443/common/login",
        ] {
            #expect(load.navigation(to: target, isRedirect: true) == .follow, "\(target)")
        }
        #expect(load.isCarrying)
        // Then off it: not carried along.
        let off = "http://127.0.0.1:18500/m1"
        #expect(load.navigation(to: off, isRedirect: true) == .loadWithoutCredential(URL(string: off)!))
    }

    @Test("once the page arrived, nothing carries the credential: later redirects go wherever they go")
    func afterThePage() throws {
        var load = try #require(DeviceCredentialLoad(firstRequest: Self.authorize))
        load.loadEnded()
        #expect(!load.isCarrying)
        #expect(load.navigation(to: "https://login.live.com/", isRedirect: true) == .follow)
    }

    @Test("a request the engine says holds the credential never leaves the origin, even after the page arrived")
    func engineSaysItCarries() throws {
        var load = try #require(DeviceCredentialLoad(firstRequest: Self.authorize))
        // The first request itself.
        #expect(load.navigation(to: Self.authorize.absoluteString, isRedirect: false, carriesCredential: true) == .follow)
        load.loadEnded()
        let off = "https://login.live.com/oauth20_authorize.srf"
        #expect(load.navigation(to: off, isRedirect: true, carriesCredential: true) == .loadWithoutCredential(URL(string: off)!))
        #expect(load.navigation(to: off, isRedirect: false, carriesCredential: true) == .loadWithoutCredential(URL(string: off)!))
    }

    @Test("a redirect to an address that does not parse is stopped")
    func unparseable() throws {
        var load = try #require(DeviceCredentialLoad(firstRequest: Self.authorize))
        #expect(load.navigation(to: nil, isRedirect: true) == .stop)
        #expect(!load.isCarrying)
    }

    @Test("origins: the scheme's default port, case, and no origin for other schemes")
    func origins() {
        let origin = DeviceCredentialLoad.Origin(URL(string: "HTTPS://Login.Example/x")!)
        #expect(origin == DeviceCredentialLoad.Origin(URL(string: "https://login.example:443/y?z")!))
        #expect(origin?.description == "https://login.example:443")
        #expect(origin != DeviceCredentialLoad.Origin(URL(string: "http://login.example:443/")!))
        #expect(DeviceCredentialLoad.Origin(URL(string: "http://127.0.0.1/")!)?.port == 80)
        #expect(DeviceCredentialLoad.Origin(URL(string: "urn:ietf:wg:oauth:2.0:oob")!) == nil)
        #expect(DeviceCredentialLoad.Origin(URL(string: "file:///etc/passwd")!) == nil)
        #expect(DeviceCredentialLoad(firstRequest: URL(string: "about:blank")!) == nil)
    }
}
