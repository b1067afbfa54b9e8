import FoundationEssentials
import SesameCore
import SesameSamples

/// The MSAL sample's widgets over ``MeConsole``: "Call Microsoft Graph" (or, for another OpenID
/// provider, "Call the userinfo endpoint"), and the log.
@MainActor
final class MePage: SamplePage {
    let root: Widget
    let model: MeConsole
    private let log = TextLog()
    private let call: Button

    init(session: SampleSession) {
        model = MeConsole(session: session)
        log.accessibleName = L("Log")
        call = Button(model.actionTitle, accessibleName: model.actionTitle)
        let page = Box(vertical: true, spacing: 8)
        page.setMargin(12)
        page.pack(Box(vertical: false, spacing: 8, [call]))
        page.pack(ScrolledWindow(log), expand: true)
        root = page
        root.showAll()

        model.onLine = { [weak self] line in
            self?.log.append(line + "\n")
            self?.onContentShown?()
        }
        call.onClick { [weak self] in
            guard let self else { return }
            Task { await self.model.callGraph() }
        }
    }

    var title: String { model.session.sample.title }

    var session: SampleSession { model.session }

    func switchAccount() async {
        await model.signOut()
        await model.callGraph()
    }

    func appear() async { await model.appear() }

    func signOut() async { await model.signOut() }

    func close() { model.close() }

    var onContentShown: (() -> Void)?

    /// The console calls only when asked: nothing to try again.
    func networkReturned() {}

    var searchField: Widget? { nil }

    /// The console calls only when asked: nothing to read again.
    func refresh() {}

    func focusFirstControlWhenReady() { call.grabFocus() }
}
