import Foundation
import SesameCore
import SesameCoreTestSupport
import Testing

@Suite("Settings files")
struct SettingsTests {
    func plist(_ body: String) -> Data {
        Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><dict>\(body)</dict></plist>
            """.utf8)
    }

    /// The B2C seed's settings.plist, placeholders filled in.
    var b2cSeedFile: Data {
        plist(
            """
            <key>accountIdentifier</key><string>B2C_Acccount</string>
            <key>clientID</key><string>90c0fe63-bcf2-44d5-8fb7-b8bbc0b29dc6</string>
            <key>clientSecret</key><string></string>
            <key>authURL</key>
            <string>https://fabrikamb2c.b2clogin.com/fabrikamb2c.onmicrosoft.com/oauth2/v2.0/authorize?p=B2C_1_SignUpSignIn</string>
            <key>loginURL</key><string>https://fabrikamb2c.b2clogin.com/fabrikamb2c.onmicrosoft.com/login</string>
            <key>bhh</key><string>urn:ietf:wg:oauth:2.0:oob</string>
            <key>tokenURL</key>
            <string>https://fabrikamb2c.b2clogin.com/fabrikamb2c.onmicrosoft.com/oauth2/v2.0/token?p=B2C_1_SignUpSignIn</string>
            <key>keychain</key><string>com.microsoft.azureactivedirectory.samples.graph.QuickStart</string>
            <key>contentType</key><string>application/x-www-form-urlencoded</string>
            <key>taskAPI</key><string>https://aadb2cplayground.azurewebsites.net</string>
            """)
    }

    @Test("the B2C seed's file loads, with an empty secret meaning a public client")
    func b2cSeed() throws {
        guard case .b2c(let settings) = try SampleSettings.parse(b2cSeedFile, file: "settings.plist") else {
            Issue.record("not recognised as the B2C shape")
            return
        }
        #expect(settings.accountType == "B2C_Acccount")
        #expect(settings.clientSecret == nil)
        #expect(settings.redirectURI.absoluteString == "urn:ietf:wg:oauth:2.0:oob")
        let configuration = settings.accountConfiguration
        #expect(configuration.scopes == ["openid", "offline_access", "90c0fe63-bcf2-44d5-8fb7-b8bbc0b29dc6"])
        #expect(configuration.customHeaderFields == ["Content-Type": "application/x-www-form-urlencoded"])
        #expect(configuration.policy == "B2C_1_SignUpSignIn")
        #expect(
            configuration.resolvedDiscoveryURL.absoluteString
                == "https://fabrikamb2c.b2clogin.com/fabrikamb2c.onmicrosoft.com/v2.0/.well-known/openid-configuration?p=B2C_1_SignUpSignIn"
        )
        let reset = configuration.withPolicy("B2C_1_PasswordReset")
        #expect(reset.authorizationURL.query == "p=B2C_1_PasswordReset")
        #expect(reset.tokenURL.query == "p=B2C_1_PasswordReset")
    }

    @Test("the v2.0 seed's keys load with either spelling of clientId")
    func graphSeed() throws {
        for key in ["clientId", "clientID"] {
            let data = plist(
                """
                <key>\(key)</key><string>6731de76-14a6-49ae-97bc-6eba6914391e</string>
                <key>redirectUri</key><string>urn:ietf:wg:oauth:2.0:oob</string>
                <key>graphApiUrl</key><string>https://graph.microsoft.com/</string>
                <key>apiversion</key><string>v1.0</string>
                """)
            guard case .graph(let settings) = try SampleSettings.parse(data, file: "settings.plist") else {
                Issue.record("not recognised as the v2.0 shape")
                return
            }
            #expect(settings.clientID == "6731de76-14a6-49ae-97bc-6eba6914391e")
            #expect(settings.graphBaseURL.absoluteString == "https://graph.microsoft.com/v1.0/")
            #expect(settings.accountType == "myGraphService")
            // `profile` joins `openid`, as MSAL adds it: v2.0 id_tokens name no one without it.
            #expect(settings.accountConfiguration.scopes == ["openid", "profile", "offline_access", "User.Read"])
            #expect(
                settings.accountConfiguration.authorizationURL.absoluteString
                    == "https://login.microsoftonline.com/common/oauth2/v2.0/authorize")
        }
    }

    @Test("signInWith picks the user agent per account type: webview by default, browser when asked, anything else named as wrong")
    func signInWith() throws {
        func load(_ value: String?) throws -> SampleSettings {
            try SampleSettings.parse(
                plist(
                    """
                    <key>clientId</key><string>66855f8a-60cd-445e-a9bb-8cd8eadbd3fa</string>
                    <key>authority</key><string>https://login.microsoftonline.com/common</string>
                    <key>graphURI</key><string>https://graph.microsoft.com/v1.0/me/</string>
                    \(value.map { "<key>signInWith</key><string>\($0)</string>" } ?? "")
                    """), file: "me.plist")
        }
        #expect(try load(nil).signInWith == .webview)
        #expect(try load("browser").signInWith == .browser)
        #expect(try load("Browser").signInWith == .browser)
        do {
            _ = try load("popup")
            Issue.record("signInWith = popup was accepted")
        } catch let error as SettingsError {
            #expect(error.key == "signInWith")
            #expect(error.description.contains("webview or browser"), "\(error)")
        }
    }

    @Test("the MSAL sample's shape loads; scopes may be an array or one string")
    func msalShape() throws {
        for scopes in [
            "<array><string>https://graph.microsoft.com/user.read</string></array>",
            "<string>https://graph.microsoft.com/user.read</string>",
        ] {
            let data = plist(
                """
                <key>clientId</key><string>66855f8a-60cd-445e-a9bb-8cd8eadbd3fa</string>
                <key>authority</key><string>https://login.microsoftonline.com/common</string>
                <key>scopes</key>\(scopes)
                <key>graphURI</key><string>https://graph.microsoft.com/v1.0/me/</string>
                """)
            guard case .msal(let settings) = try SampleSettings.parse(data, file: "me.plist") else {
                Issue.record("not recognised as the MSAL shape")
                return
            }
            #expect(settings.scopes == ["https://graph.microsoft.com/user.read"])
            #expect(
                settings.accountConfiguration.scopes == ["openid", "profile", "offline_access", "https://graph.microsoft.com/user.read"])
        }
    }

    @Test("a missing key is an error naming the file and the key")
    func missingKey() {
        let data = plist(
            "<key>accountIdentifier</key><string>B2C</string>"
                + "<key>authURL</key><string>https://x.b2clogin.com/t/oauth2/v2.0/authorize</string>"
        )
        #expect(throws: SettingsError(file: "/etc/tasks.plist", key: "clientID\" or \"clientId", problem: .missingKey)) {
            try SampleSettings.parse(data, file: "/etc/tasks.plist")
        }
        do {
            _ = try SampleSettings.parse(data, file: "/etc/tasks.plist")
        } catch {
            #expect(error.description.contains("/etc/tasks.plist"))
            #expect(error.description.contains("clientID"))
        }
    }

    @Test(
        "a malformed value says what was expected",
        arguments: [
            (
                "<key>clientId</key><integer>12</integer><key>redirectUri</key><string>urn:ietf:wg:oauth:2.0:oob</string>", "clientId",
                "a string"
            ),
            ("<key>clientId</key><string>abc</string><key>redirectUri</key><string>not a url</string>", "redirectUri", "an absolute URL"),
            (
                "<key>clientId</key><string>&lt;client ID&gt;</string><key>redirectUri</key><string>urn:ietf:wg:oauth:2.0:oob</string>",
                "clientId", "placeholder"
            ),
            (
                "<key>clientId</key><string>abc</string><key>redirectUri</key><string>file://host/etc/passwd</string>", "redirectUri",
                "not a file: URL"
            ),
            (
                "<key>clientId</key><string>abc</string><key>redirectUri</key><string>javascript://x/%0Aalert(1)</string>", "redirectUri",
                "not a javascript: URL"
            ),
            (
                "<key>clientId</key><string>abc</string><key>redirectUri</key><string>urn:ietf:wg:oauth:2.0:oob</string>"
                    + "<key>authority</key><string>http://login.example.com/common</string>", "authority",
                "http is accepted only for this computer"
            ),
        ])
    func malformedValue(body: String, key: String, expected: String) {
        do {
            _ = try SampleSettings.parse(plist(body), file: "settings.plist")
            Issue.record("accepted a malformed \(key)")
        } catch {
            #expect(error.key == key)
            #expect(error.description.contains(expected))
        }
    }

    @Test("a huge file, a device or a folder is refused with a sentence, quickly and without reading it whole")
    func hostileFiles() throws {
        for path in ["/dev/zero", "/dev/urandom", "/tmp"] {
            do {
                _ = try SampleSettings.load(contentsOf: URL(fileURLWithPath: path))
                Issue.record("loaded \(path)")
            } catch {
                #expect(error.file == path)
                #expect(error.description.contains("not a regular file"), "\(error)")
            }
        }
        let big = FileManager.default.temporaryDirectory.appending(path: "sesame-big-\(UUID().uuidString).plist")
        defer { try? FileManager.default.removeItem(at: big) }
        try Data(count: 3 * 1024 * 1024).write(to: big)
        #expect(throws: SettingsError.self) { try SampleSettings.load(contentsOf: big) }
        do { _ = try SampleSettings.load(contentsOf: big) } catch { #expect(error.description.contains("larger than 1 MiB")) }
    }

    @Test("a file that is not a property list, or not there, is named")
    func notAPlist() throws {
        #expect(throws: SettingsError(file: "x.plist", key: nil, problem: .notAPropertyList)) {
            try SampleSettings.parse(Data("{\"clientId\": 1}".utf8), file: "x.plist")
        }
        let missing = URL(fileURLWithPath: "/nonexistent/settings.plist")
        do {
            _ = try SampleSettings.load(contentsOf: missing)
            Issue.record("loaded a file that does not exist")
        } catch {
            #expect(error.file == "/nonexistent/settings.plist")
            #expect(error.description.contains("cannot be read"))
        }
        #expect(throws: SettingsError(file: "x.plist", key: nil, problem: .unknownShape)) {
            try SampleSettings.parse(plist("<key>colour</key><string>blue</string>"), file: "x.plist")
        }
    }
}

@Suite("Settings pointed at an emulator")
struct EmulatorSettingsTests {
    @Test("every service URL moves to the emulator's origin with its path and query; the redirect URI stays")
    func pointedAtEmulator() throws {
        let resources = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../Resources/settings").standardized
        let base = URL(string: "http://127.0.0.1:8400")!

        guard case .b2c(let b2c) = try SampleSettings.load(contentsOf: resources.appending(path: "tasks.plist")).pointed(at: base) else {
            Issue.record("tasks.plist is not the B2C shape")
            return
        }
        #expect(
            b2c.authorizationURL.absoluteString
                == "http://127.0.0.1:8400/fabrikamb2c.onmicrosoft.com/oauth2/v2.0/authorize?p=B2C_1_SignUpSignIn")
        #expect(b2c.tokenURL.absoluteString == "http://127.0.0.1:8400/fabrikamb2c.onmicrosoft.com/oauth2/v2.0/token?p=B2C_1_SignUpSignIn")
        #expect(b2c.loginURL.absoluteString == "http://127.0.0.1:8400/fabrikamb2c.onmicrosoft.com/login")
        #expect(b2c.taskAPI.absoluteString == "http://127.0.0.1:8400")
        #expect(b2c.redirectURI.absoluteString == "https://fabrikamb2c.b2clogin.com/oauth2/nativeclient")

        guard case .msal(let msal) = try SampleSettings.load(contentsOf: resources.appending(path: "me.plist")).pointed(at: base) else {
            Issue.record("me.plist is not the MSAL shape")
            return
        }
        #expect(msal.graphURI.absoluteString == "http://127.0.0.1:8400/v1.0/me/")
        #expect(
            msal.accountConfiguration.authorizationURL.absoluteString
                == "http://127.0.0.1:8400/contoso.onmicrosoft.com/oauth2/v2.0/authorize")
        #expect(msal.accountConfiguration.redirectURL.absoluteString == "https://login.microsoftonline.com/common/oauth2/nativeclient")
    }
}
