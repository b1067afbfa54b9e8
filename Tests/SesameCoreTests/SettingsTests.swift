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

@Suite("What a settings file says it uses")
struct SettingsWarningTests {
    let settingsTests = SettingsTests()

    /// The bundled settings folder of this checkout.
    static let bundled = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../Resources/settings").standardized

    func tasksFile(adding extra: String = "", without removed: String? = nil) -> Data {
        var body = String(decoding: settingsTests.b2cSeedFile, as: UTF8.self)
        if let removed { body = body.replacingOccurrences(of: "<key>\(removed)</key>", with: "<key>removed-\(removed)</key>") }
        return Data(body.replacingOccurrences(of: "</dict>", with: extra + "</dict>").utf8)
    }

    @Test("a key the shape does not read is a warning naming the file, the key and the shape, with the key it probably meant")
    func misspeltKeys() throws {
        let file = try SettingsFile.parse(
            tasksFile(
                adding: """
                    <key>clientid</key><string>90c0fe63-bcf2-44d5-8fb7-b8bbc0b29dc6</string>
                    <key>discoveryUrl</key><string>https://id.example.org/.well-known/openid-configuration</string>
                    <key>passwordResetPolicyy</key><string>B2C_1_Reset</string>
                    <key>colour</key><string>blue</string>
                    """), file: "/etc/sesame/tasks.plist")
        #expect(file.path == "/etc/sesame/tasks.plist")
        #expect(file.warnings.map(\.key) == ["clientid", "colour", "discoveryUrl", "passwordResetPolicyy"])
        #expect(file.warnings.map(\.suggestion) == ["clientID", nil, "discoveryURL", "passwordResetPolicy"])
        #expect(file.warnings.allSatisfy { $0.file == "/etc/sesame/tasks.plist" && $0.shape == .tasks })
        let clientid = try #require(file.warnings.first)
        #expect(
            clientid.sentence
                == "\"clientid\" is not a key a Tasks (B2C) settings file reads; Sesame ignores it: did you mean \"clientID\"?")
        #expect("\(clientid)" == "/etc/sesame/tasks.plist: " + clientid.sentence)
        #expect(file.warnings[1].sentence == "\"colour\" is not a key a Tasks (B2C) settings file reads; Sesame ignores it.")
        // Ignored, as the warning says: the misspelt discovery URL is not used.
        #expect(file.settings.accountConfiguration.discoveryURL == nil)
        // The warnings are no reason to refuse the file.
        #expect(try SampleSettings.parse(tasksFile(adding: "<key>clientid</key><string>x</string>"), file: "t.plist").shape == .tasks)
    }

    @Test("a required key spelt wrong is an error that names the misspelling")
    func misspeltRequiredKey() {
        let data = tasksFile(adding: "<key>clientid</key><string>90c0fe63-bcf2-44d5-8fb7-b8bbc0b29dc6</string>", without: "clientID")
        do {
            _ = try SettingsFile.parse(data, file: "tasks.plist")
            Issue.record("loaded a file without clientID")
        } catch {
            #expect(error.problem == .missingKey)
            #expect(error.nearMiss == SettingsError.NearMiss(found: "clientid", meant: "clientID"))
            #expect(error.description.contains("the file has \"clientid\": did you mean \"clientID\"?"), "\(error)")
        }
    }

    @Test("a key is shown as text, never as the escape sequences a hostile file may put in it, and a long one is cut short")
    func hostileKeys() throws {
        // XML cannot carry an escape character; a binary property list can.
        var values = try #require(
            try PropertyListSerialization.propertyList(from: settingsTests.b2cSeedFile, options: [], format: nil) as? [String: Any])
        let long = String(repeating: "k", count: 5000)
        values["\u{1B}[2Jpwned"] = "x"
        values[long] = "x"
        let data = try PropertyListSerialization.data(fromPropertyList: values, format: .binary, options: 0)
        let file = try SettingsFile.parse(data, file: "t.plist")
        let sentences = file.warnings.map(\.sentence)
        #expect(sentences.contains { $0.hasPrefix("\"\\u{1b}[2Jpwned\"") }, "\(sentences)")
        #expect(!sentences.joined().contains("\u{1B}"))
        #expect(sentences.contains { $0.hasPrefix("\"" + String(repeating: "k", count: 64) + "…\"") })
        #expect(file.warnings.allSatisfy { $0.suggestion == nil })
    }

    @Test("the bundled settings files warn of nothing", arguments: ["directory.plist", "tasks.plist", "me.plist"])
    func bundledFiles(name: String) throws {
        let file = try SettingsFile.load(contentsOf: Self.bundled.appending(path: name))
        #expect(file.warnings.isEmpty, "\(file.warnings)")
    }

    /// The keys every shape reads (under one spelling or another): a file of any shape may carry them.
    static let keysOfEveryShape = """
        <key>signInWith</key><string>browser</string>
        <key>keychain</key><string>com.example.group</string>
        <key>accountType</key><string>mine</string>
        <key>accountIdentifier</key><string>mine</string>
        <key>scopes</key><string>openid offline_access</string>
        <key>discoveryURL</key><string>https://id.example.org/.well-known/openid-configuration</string>
        """

    /// One file of each shape with only its own required keys (and the Directory's `graphApiUrl`,
    /// which tells it from an OpenID file once `discoveryURL` is there).
    static let minimalFiles: [(SampleSettings.Shape, String)] = [
        (
            .directory,
            """
            <key>clientId</key><string>6731de76</string><key>redirectUri</key><string>urn:ietf:wg:oauth:2.0:oob</string>
            <key>graphApiUrl</key><string>https://graph.microsoft.com/</string>
            """
        ),
        (
            .tasks,
            """
            <key>accountIdentifier</key><string>mine</string><key>clientID</key><string>90c0fe63</string>
            <key>authURL</key><string>https://id.example.org/authorize</string><key>tokenURL</key><string>https://id.example.org/token</string>
            <key>loginURL</key><string>https://id.example.org/login</string><key>bhh</key><string>urn:ietf:wg:oauth:2.0:oob</string>
            <key>keychain</key><string>g</string><key>taskAPI</key><string>https://tasks.example.org</string>
            """
        ),
        (
            .me,
            """
            <key>clientId</key><string>66855f8a</string><key>authority</key><string>https://login.microsoftonline.com/common</string>
            <key>graphURI</key><string>https://graph.microsoft.com/v1.0/me/</string>
            """
        ),
        (.openID, "<key>clientID</key><string>sesame-desktop</string>"),
    ]

    @Test("the keys every shape reads warn in none", arguments: 0..<4)
    func sharedKeys(index: Int) throws {
        let (shape, own) = Self.minimalFiles[index]
        // The Tasks file names its keychain already; a second <key>keychain</key> would replace it.
        let shared = Self.keysOfEveryShape.replacingOccurrences(
            of: shape == .tasks ? "<key>keychain</key><string>com.example.group</string>" : "\u{0}", with: "")
        let file = try SettingsFile.parse(settingsTests.plist(own + shared), file: "\(shape).plist")
        #expect(file.settings.shape == shape)
        #expect(file.warnings.isEmpty, "\(file.warnings)")
        #expect(file.settings.signInWith == .browser)
    }

    @Test("each shape takes discoveryURL: discovery comes from it, never from a path derived from the endpoints", arguments: 0..<4)
    func discoveryURLInEveryShape(index: Int) throws {
        let (shape, own) = Self.minimalFiles[index]
        let discovery = URL(string: "https://id.example.org/.well-known/openid-configuration")!
        let settings = try SampleSettings.parse(
            settingsTests.plist(own + "<key>discoveryURL</key><string>\(discovery.absoluteString)</string>"), file: "\(shape).plist")
        #expect(settings.shape == shape)
        let configuration = settings.accountConfiguration
        #expect(configuration.discoveryURL == discovery)
        #expect(configuration.resolvedDiscoveryURL == discovery)
        switch shape {
        case .tasks:
            // The file names both endpoints: they stay; only the issuer and keys come from discovery.
            #expect(configuration.discoveredEndpoints.isEmpty)
            #expect(configuration.authorizationURL.absoluteString == "https://id.example.org/authorize")
        case .me:
            #expect(configuration.discoveredEndpoints.isEmpty)
            #expect(
                configuration.authorizationURL.absoluteString == "https://login.microsoftonline.com/common/oauth2/v2.0/authorize")
        case .directory, .openID:
            // No authority in the file: the endpoints it leaves out come from discovery.
            #expect(configuration.discoveredEndpoints == [.authorization, .token])
            #expect(configuration.authorizationURL == discovery)
        }
    }

    @Test("the endpoints a Tasks or Me file leaves out come from discovery when it has discoveryURL")
    func endpointsLeftToDiscovery() throws {
        let discovery = "<key>discoveryURL</key><string>https://id.example.org/.well-known/openid-configuration</string>"
        let tasks = try SampleSettings.parse(
            settingsTests.plist(
                Self.minimalFiles[1].1.replacingOccurrences(
                    of: "<key>tokenURL</key><string>https://id.example.org/token</string>", with: "")
                    + discovery), file: "tasks.plist")
        #expect(tasks.accountConfiguration.discoveredEndpoints == [.token])
        let me = try SampleSettings.parse(
            settingsTests.plist(
                Self.minimalFiles[2].1.replacingOccurrences(
                    of: "<key>authority</key><string>https://login.microsoftonline.com/common</string>", with: "") + discovery),
            file: "me.plist")
        #expect(me.accountConfiguration.discoveredEndpoints == [.authorization, .token])
        // Without discoveryURL the Tasks file's endpoints are required, as the seed's are.
        #expect(throws: SettingsError.self) {
            try SampleSettings.parse(
                settingsTests.plist(
                    Self.minimalFiles[1].1.replacingOccurrences(
                        of: "<key>tokenURL</key><string>https://id.example.org/token</string>", with: "")),
                file: "tasks.plist")
        }
    }

    @Test(
        "discoveryURL is validated as the OpenID shape's: https, or http on this computer",
        arguments: [
            ("http://id.example.org/.well-known/openid-configuration", "http is accepted only for this computer"),
            ("urn:example:discovery", "https URL"),
            ("file://host/etc/passwd", "not a file: URL"),
        ])
    func discoveryURLValidation(value: String, expected: String) {
        let own = Self.minimalFiles[1].1
        do {
            _ = try SampleSettings.parse(settingsTests.plist(own + "<key>discoveryURL</key><string>\(value)</string>"), file: "t.plist")
            Issue.record("accepted discoveryURL \(value)")
        } catch {
            #expect(error.key == "discoveryURL")
            #expect(error.description.contains(expected), "\(error)")
        }
        let local = "<key>discoveryURL</key><string>http://127.0.0.1:9000/.well-known/openid-configuration</string>"
        #expect((try? SampleSettings.parse(settingsTests.plist(own + local), file: "t.plist")) != nil)
    }

    @Test("a Tasks file with discoveryURL signs in with that discovery's issuer and keys, never fetching a path derived from authURL")
    func tasksFileSignsInWithItsDiscoveryURL() async throws {
        let provider = FakeIdentityProvider()
        let discovery = URL(string: "https://login.microsoftonline.com/elsewhere/.well-known/openid-configuration")!
        let transport = FakeTransport { request in
            if request.url == discovery {
                return try await provider.handle(
                    HTTPRequest(method: "GET", url: provider.base.appending(path: "common/v2.0/.well-known/openid-configuration")))
            }
            // The path the store would derive from authURL answers nothing: the provider is elsewhere.
            if request.url.path.hasSuffix("/.well-known/openid-configuration") { return HTTPResponse(status: 404) }
            return try await provider.handle(request)
        }
        let body = """
            <key>accountIdentifier</key><string>tasks</string>
            <key>clientID</key><string>\(provider.clientID)</string>
            <key>authURL</key><string>https://login.microsoftonline.com/common/oauth2/v2.0/authorize</string>
            <key>loginURL</key><string>https://login.microsoftonline.com/common/login</string>
            <key>bhh</key><string>\(provider.redirectURI.absoluteString)</string>
            <key>tokenURL</key><string>https://login.microsoftonline.com/common/oauth2/v2.0/token</string>
            <key>keychain</key><string>com.example.tasks</string>
            <key>contentType</key><string>application/x-www-form-urlencoded</string>
            <key>taskAPI</key><string>https://tasks.example.org</string>
            <key>discoveryURL</key><string>\(discovery.absoluteString)</string>
            """
        let file = try SettingsFile.parse(settingsTests.plist(body), file: "tasks.plist")
        #expect(file.warnings.isEmpty, "\(file.warnings)")
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = provider.clock
        let store = AccountStore(storage: FileTokenStorage(directory: directory), transport: transport, now: { clock.now })
        await store.setConfiguration(file.settings.accountConfiguration, forAccountType: "tasks")
        let account = try await store.signIn(accountType: "tasks", using: FakeUserAgent(provider: provider))
        #expect(account.username == "alex@contoso.onmicrosoft.com")
        let fetched = transport.requests.map(\.url)
        #expect(fetched.contains(discovery))
        #expect(!fetched.contains { $0 != discovery && $0.path.hasSuffix("/.well-known/openid-configuration") }, "\(fetched)")
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
