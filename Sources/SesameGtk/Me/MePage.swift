import Foundation
import SesameCore
import SesameSamples

/// The MSAL sample's widgets over ``MeConsole``: "Call Microsoft Graph", "Sign out", and the log.
@MainActor
final class MePage: SamplePage {
    let root: Widget
    let model: MeConsole
    private let log = TextLog()
    private let signOutButton: Button

    init(session: SampleSession) {
        model = MeConsole(session: session)
        log.accessibleName = L("Log")
        let call = Button(L("Call Microsoft Graph"), accessibleName: L("Call Microsoft Graph"))
        signOutButton = Button(L("Sign out"), accessibleName: L("Sign out"))
        let page = Box(vertical: true, spacing: 8)
        page.setMargin(12)
        page.pack(Box(vertical: false, spacing: 8, [call, signOutButton]))
        page.pack(ScrolledWindow(log), expand: true)
        root = page
        root.showAll()

        model.onLine = { [weak self] line in self?.log.append(line + "\n") }
        model.onAccountChange = { [weak self] signedIn in self?.signOutButton.isSensitive = signedIn }
        call.onClick { [weak self] in
            guard let self else { return }
            Task { await self.model.callGraph() }
        }
        signOutButton.onClick { [weak self] in
            guard let self else { return }
            Task { await self.model.signOut() }
        }
    }

    var title: String { L("Me") }

    func appear() async { await model.appear() }

    func signOut() async { await model.signOut() }

    func close() { model.close() }
}
