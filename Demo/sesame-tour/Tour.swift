import Foundation
import IdentityEmulator
import SesameGtk
import SesameSamples
import SesameService
import SesameWindowModel

/// `make demo`: the whole tutorial flow played by itself in the real window, the way a user
/// plays it — megan signs in with her SMS code and searches the directory, sam signs in through
/// B2C and adds tasks, alex calls Graph's /me twice (interactive, then silent) — with a numbered
/// screenshot of each step. It reaches the window only as a user (or a screen reader) does: by
/// the widgets' accessible names, and the identity pages by Microsoft's element ids.
@MainActor
final class Tour {
    private typealias IDs = SignInPageIDs

    /// JavaScript that types `value` into the page's element `id` (values without quotes: names,
    /// codes, the demo password).
    private static func type(_ value: String, into id: String) -> String {
        "document.getElementById('\(id)').value='\(value)';"
    }

    /// JavaScript that presses the page's element `id`.
    private static func press(_ id: String) -> String {
        "document.getElementById('\(id)').click();"
    }

    private let window: MainWindow
    private let trace: FlowTrace
    private let directory: URL
    private let smsCode: (String) -> String?
    private var shot = 0
    private(set) var files: [URL] = []

    /// - Parameter smsCode: the code the emulator "texted" a user.
    init(window: MainWindow, trace: FlowTrace, screenshots: URL, smsCode: @escaping (String) -> String?) {
        self.window = window
        self.trace = trace
        directory = screenshots
        self.smsCode = smsCode
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Plays every step; throws at the first one that does not happen.
    func run() async throws {
        var segment = trace.events.count
        // The tour shows the flow as it happens: the inspector, which a newcomer opens with F9.
        window.showsInspector = true
        try await waitFor("the sign-in page") { self.signInShown && self.pages > 0 }
        try await settle()
        try capture("directory-sign-in")
        try await act(
            Self.type("megan@contoso.onmicrosoft.com", into: IDs.userName) + Self.press(IDs.primaryButton),
            "password page")
        try capture("directory-password")
        try await act(Self.type(IDs.demoPassword, into: IDs.password) + Self.press(IDs.primaryButton), "SMS page")
        try capture("directory-sms-code")
        guard let code = smsCode("megan@contoso.onmicrosoft.com") else { throw Failure(description: "no SMS code was sent") }
        try await act(
            Self.type(code, into: IDs.smsCode) + Self.press(IDs.smsContinue),
            "stay signed in")
        try capture("directory-stay-signed-in")
        try await act(Self.press(IDs.primaryButton), "consent")
        try capture("directory-consent")
        try signInPage().evaluateJavaScript(Self.press(IDs.primaryButton))
        try await waitFor("the directory") { (self.people?.rowCount ?? 0) > 0 }
        try await settle()
        try capture("directory-list")
        let rendered = events("list-rendered")
        try widget(SearchEntry.self, "Search the directory").text = "O'Brien"
        try await waitFor("the O'Brien search") { self.events("list-rendered") > rendered }
        try await settle()
        people?.selectedRow = 0
        try await settle()
        try capture("directory-search-details")
        try diagram("diagram-megan-sign-in-and-search", since: segment)

        segment = trace.events.count
        window.show(.tasks)
        try await settle()
        try capture("tasks-signed-out")
        let before = pages
        // A page never signs in by itself: its status page's Sign in.
        try shownButton("Sign in").click()
        try await waitFor("the B2C sign-in page") { self.signInShown && self.pages > before }
        try await settle()
        try signInPage().evaluateJavaScript(
            Self.type("sam@example.com", into: IDs.b2cSignInName) + Self.type(IDs.demoPassword, into: IDs.b2cPassword))
        try await settle()
        try capture("tasks-b2c-sign-in")
        try signInPage().evaluateJavaScript(Self.press(IDs.b2cNext))
        try await waitFor("sam's tasks") {
            self.events("token-acquired") >= 2 && !self.signInShown && self.events("list-rendered") > rendered + 1
        }
        try await settle()
        try await addTask("Water the plants")
        try await addTask("Call Kim about the demo")
        try await settle()
        try capture("tasks-list")
        try diagram("diagram-b2c-task-add", since: segment)

        segment = trace.events.count
        window.show(.me)
        try await settle()
        let mePages = pages
        try shownButton("Call Microsoft Graph").click()
        try await waitFor("the Me sign-in page") { self.signInShown && self.pages > mePages }
        try await settle()
        try await act(
            Self.type("alex@contoso.onmicrosoft.com", into: IDs.userName) + Self.press(IDs.primaryButton),
            "password page")
        try await act(
            Self.type(IDs.demoPassword, into: IDs.password) + Self.press(IDs.primaryButton), "stay signed in")
        try await act(Self.press(IDs.primaryButton), "consent")
        try capture("me-consent")
        let calls = events("api-call")
        try signInPage().evaluateJavaScript(Self.press(IDs.primaryButton))
        try await waitFor("Graph /me") { self.events("api-call") > calls }
        try await settle()
        try capture("me-interactive")
        let navigations = events("navigation")
        let silentCalls = events("api-call")
        try shownButton("Call Microsoft Graph").click()
        try await waitFor("the silent /me call") { self.events("api-call") > silentCalls }
        try await settle()
        guard events("navigation") == navigations else { throw Failure(description: "the second call was not silent") }
        try capture("me-silent")
        try diagram("diagram-me-interactive-then-silent", since: segment)
    }

    private var pages: Int { events("page-loaded") }
    private func events(_ name: String) -> Int { trace.events.filter { $0.name == name }.count }
    private var people: TextTable? { window.window.find(TextTable.self, named: L("People")) }
    /// Whether a sign-in page is on screen (each storage group has its own view).
    private var signInShown: Bool { window.window.descendants.contains { ($0 as? WebView)?.isMapped == true } }

    private func widget<W: Widget>(_ type: W.Type, _ name: String) throws -> W {
        guard let found = window.window.find(type, named: L(name)) else { throw Failure(description: "no \(W.self) named '\(name)'") }
        return found
    }

    /// The button on screen named `name` (a page and its status page may both have one).
    private func shownButton(_ name: String) throws -> Button {
        guard
            let found = window.window.descendants.lazy.compactMap({ $0 as? Button }).first(where: {
                $0.accessibleName == L(name) && $0.isMapped
            })
        else { throw Failure(description: "no button named '\(name)' on screen") }
        return found
    }

    private func signInPage() throws -> WebView {
        guard let view = window.window.descendants.lazy.compactMap({ $0 as? WebView }).first(where: \.isMapped) else {
            throw Failure(description: "the sign-in page is not on screen")
        }
        return view
    }

    private func addTask(_ text: String) async throws {
        let rendered = events("list-rendered")
        try widget(Entry.self, "New task").text = text
        try widget(Button.self, "Add the task").click()
        try await waitFor("the task '\(text)'") { self.events("list-rendered") > rendered }
    }

    private func act(_ script: String, _ step: String) async throws {
        let before = pages
        try signInPage().evaluateJavaScript(script)
        try await waitFor(step) { self.pages > before }
        try await settle()
    }

    private func waitFor(_ what: String, timeout: Duration = .seconds(20), _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { throw Failure(description: "timed out waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Lets the page paint before a screenshot.
    private func settle() async throws { try await Task.sleep(for: .milliseconds(500)) }

    /// Exports the flow diagram from the trace's event `since` on, as the inspector's Export menu
    /// does: `name.svg` and `name.png`.
    private func diagram(_ name: String, since: Int) throws {
        for format in [Canvas.Format.svg, .png] {
            let file = directory.appending(path: "\(name).\(format.rawValue)")
            try window.exportFlowDiagram(format, to: file, since: since)
            files.append(file)
        }
    }

    private func capture(_ name: String) throws {
        shot += 1
        let file = directory.appending(path: String(format: "%02d-%@.png", shot, name))
        try Screenshot.save(window.window, to: file)
        files.append(file)
    }
}
