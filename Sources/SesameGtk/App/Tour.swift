import CGtkWebKit
import Foundation
import SesameCore

/// `make demo`: the whole tutorial flow played by itself in the real window — megan signs in
/// with her SMS code and searches the directory, sam signs in through B2C and adds tasks, alex
/// calls Graph's /me twice (interactive, then silent) — with a numbered screenshot of each step.
@MainActor
public final class Tour {
    private let window: MainWindow
    private let trace: FlowTrace
    private let directory: URL
    private let smsCode: (String) -> String?
    private var shot = 0
    public private(set) var files: [URL] = []

    /// - Parameter smsCode: the code the emulator "texted" a user.
    public init(window: MainWindow, trace: FlowTrace, screenshots: URL, smsCode: @escaping (String) -> String?) {
        self.window = window
        self.trace = trace
        directory = screenshots
        self.smsCode = smsCode
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Plays every step; throws at the first one that does not happen.
    public func run() async throws {
        try await waitFor("the sign-in page") { self.window.signIn.view.isShown && self.pages > 0 }
        try await settle()
        try capture("directory-sign-in")
        try await act("document.getElementById('i0116').value='megan@contoso.onmicrosoft.com'; document.getElementById('idSIButton9').click();", "password page")
        try capture("directory-password")
        try await act("document.getElementById('i0118').value='Passw0rd!'; document.getElementById('idSIButton9').click();", "SMS page")
        try capture("directory-sms-code")
        guard let code = smsCode("megan@contoso.onmicrosoft.com") else { throw Failure(description: "no SMS code was sent") }
        try await act("document.getElementById('idTxtBx_SAOTCC_OTC').value='\(code)'; document.getElementById('idSubmit_SAOTCC_Continue').click();", "stay signed in")
        try capture("directory-stay-signed-in")
        try await act("document.getElementById('idSIButton9').click();", "consent")
        try capture("directory-consent")
        window.signIn.view.runJavaScript("document.getElementById('idSIButton9').click();")
        try await waitFor("the directory") { (self.window.directoryPage?.rowCount ?? 0) > 0 }
        try await settle()
        try capture("directory-list")
        let rendered = events("list-rendered")
        window.directoryPage?.type("O'Brien")
        try await waitFor("the O'Brien search") { self.events("list-rendered") > rendered }
        try await settle()
        window.directoryPage?.selectRow(0)
        try await settle()
        try capture("directory-search-details")

        window.show(.tasks)
        let before = pages
        try await waitFor("the B2C sign-in page") { self.window.signIn.view.isShown && self.pages > before }
        try await settle()
        window.signIn.view.runJavaScript("document.getElementById('signInName').value='sam@example.com'; document.getElementById('password').value='Passw0rd!';")
        try await settle()
        try capture("tasks-b2c-sign-in")
        window.signIn.view.runJavaScript("document.getElementById('next').click();")
        try await waitFor("sam's tasks") { self.events("token-acquired") >= 2 && !self.window.signIn.view.isShown }
        try await settle()
        let tasksRendered = events("list-rendered")
        window.tasksPage?.add("Water the plants")
        try await waitFor("the first task") { (self.window.tasksPage?.tasks.count ?? 0) >= 1 }
        window.tasksPage?.add("Call Kim about the demo")
        try await waitFor("the second task") { (self.window.tasksPage?.tasks.count ?? 0) >= 2 && self.events("list-rendered") > tasksRendered }
        try await settle()
        try capture("tasks-list")

        window.show(.me)
        try await settle()
        let mePages = pages
        Task { await self.window.mePage?.callGraph() }
        try await waitFor("the Me sign-in page") { self.window.signIn.view.isShown && self.pages > mePages }
        try await settle()
        try await act("document.getElementById('i0116').value='alex@contoso.onmicrosoft.com'; document.getElementById('idSIButton9').click();", "password page")
        try await act("document.getElementById('i0118').value='Passw0rd!'; document.getElementById('idSIButton9').click();", "stay signed in")
        try await act("document.getElementById('idSIButton9').click();", "consent")
        try capture("me-consent")
        let calls = events("api-call")
        window.signIn.view.runJavaScript("document.getElementById('idSIButton9').click();")
        try await waitFor("Graph /me") { self.events("api-call") > calls }
        try await settle()
        try capture("me-interactive")
        let navigations = events("navigation")
        await window.mePage?.callGraph()
        try await settle()
        guard events("navigation") == navigations else { throw Failure(description: "the second call was not silent") }
        try capture("me-silent")
    }

    private var pages: Int { events("page-loaded") }
    private func events(_ name: String) -> Int { trace.events.filter { $0.name == name }.count }

    private func act(_ script: String, _ step: String) async throws {
        let before = pages
        window.signIn.view.runJavaScript(script)
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

    private func capture(_ name: String) throws {
        shot += 1
        let file = directory.appending(path: String(format: "%02d-%@.png", shot, name))
        try Screenshot.save(window.window, to: file)
        files.append(file)
    }
}
