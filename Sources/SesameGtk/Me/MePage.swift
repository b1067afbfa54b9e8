import FoundationEssentials
import SesameCore
import SesameSamples
import SesameWindowModel

/// The MSAL sample's widgets over ``MeConsole``: "Call Microsoft Graph" (or, for another OpenID
/// provider, "Call the userinfo endpoint"), and the log. Before the first call the page is a
/// status page — who is signed in (a cached account counts), or that the call signs in first —
/// with the call as its one action.
@MainActor
final class MePage: SamplePage {
    let root: Widget
    /// The window closed (its widgets are gone).
    private var closed = false
    private let pages = Stack(sizedByVisibleChild: true)
    let model: MeConsole
    private let log = TextLog()
    private let call: Button
    /// The page before the first call.
    let statusPage = StatusPage(name: L("Console status"))

    init(session: SampleSession) {
        model = MeConsole(session: session)
        log.accessibleName = L("Log")
        call = Button(model.actionTitle, accessibleName: model.actionTitle)
        let page = Box(vertical: true, spacing: 8)
        page.setMargin(12)
        page.pack(Box(vertical: false, spacing: 8, [call]))
        page.pack(ScrolledWindow(log), expand: true)
        pages.add(statusPage.root, name: "status")
        pages.add(page, name: "content")
        root = pages
        root.showAll()
        render()

        // A closed window's stack has lost its children: nothing renders into it.
        root.onDestroy { [weak self] in
            self?.closed = true
            self?.model.onLine = nil
        }
        model.onLine = { [weak self] line in
            self?.log.append(line + "\n")
            self?.render()
            self?.onContentShown?()
        }
        call.onClick { [weak self] in self?.callGraph() }
        statusPage.onAction = { [weak self] action in
            guard let self else { return }
            guard case .readSignIns(let unlock) = action else { return self.callGraph() }
            Task {
                await self.model.session.readSignIns(unlock: unlock)
                await self.appear()
            }
        }
    }

    var title: String { model.session.sample.title }

    var session: SampleSession { model.session }

    func switchAccount() async {
        await model.signOut()
        await model.callGraph()
    }

    func appear() async {
        await model.appear()
        render()
    }

    func signOut() async {
        await model.signOut()
        render()
    }

    func close() { model.close() }

    var onContentShown: (() -> Void)?

    /// The console calls only when asked: nothing to try again.
    func networkReturned() {}

    var searchField: Widget? { nil }

    /// The console calls only when asked: nothing to read again.
    func refresh() {}

    func focusFirstControlWhenReady() {
        if pages.visibleChildName == "status", statusPage.focusAction() { return }
        call.grabFocus()
    }

    private func callGraph() {
        Task { await self.model.callGraph() }
    }

    /// The status page until the log has a line, then the console (the call button keeps the
    /// keyboard when the status page's button had it).
    private func render() {
        guard !closed else { return }
        if let status = model.pageStatus {
            statusPage.show(status, iconName: status.kind == .nothingYet ? "avatar-default-symbolic" : nil)
            pages.visibleChildName = "status"
        } else if pages.visibleChildName != "content" {
            let hadFocus = statusPage.button.hasFocus
            pages.visibleChildName = "content"
            if hadFocus { call.grabFocus() }
        }
    }
}
