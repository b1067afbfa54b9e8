import FoundationEssentials
import SesameCore
import SesameGIO
import SesameSamples
import SesameWindowModel

/// The buttons a tenant's refusal gets beside its sentence: the one action that helps (copy the
/// administrator's approval link, open the MFA registration page) and "Copy details for your IT
/// help desk" (the error code, request and correlation ids, time, app and tenant — never a
/// secret). Shown by the error bar and by the sign-in page when the service's own page refused.
@MainActor
final class RefusalActions {
    /// The buttons, side by side.
    let root = Box(vertical: false, spacing: 6)
    private let action = Button("")
    private let copy: Button
    private var notice: RefusalNotice?
    /// "Register This Computer…" was pressed (a policy asks for a registered device); nil: the
    /// window cannot register (no keyring), and the button is not offered.
    var onRegisterDevice: (() -> Void)?

    /// - Parameter copyName: the copy button's accessible name, which says whose details it copies
    ///   when the window has more than one.
    init(copyName: String = L("Copy details for your IT help desk")) {
        copy = Button(L("Copy details for your IT help desk"), accessibleName: copyName)
        root.pack(action)
        root.pack(copy)
        action.onClick { [weak self] in self?.act() }
        copy.onClick { [weak self] in self?.copyDetails() }
    }

    /// Shows the buttons for `notice` (none for nil).
    func show(_ notice: RefusalNotice?) {
        self.notice = notice
        guard let notice else {
            root.hide()
            return
        }
        copy.title = L("Copy details for your IT help desk")
        root.showAll()
        if notice.details.isEmpty { copy.hide() }
        switch notice.action {
        case .approvalLink:
            action.title = L("Copy the approval link")
            action.accessibleName = L("Copy the link your administrator approves the app with")
        case .register:
            action.title = L("Set up sign-in methods")
            action.accessibleName = L("Open the page where you register a second way to sign in")
        case .registerDevice where onRegisterDevice != nil:
            action.title = L("Register This Computer…")
            action.accessibleName = L("Register this computer with your organization")
        default:
            action.hide()
        }
    }

    private func act() {
        guard let notice else { return }
        switch notice.action {
        case .approvalLink(let url): WebView.copyToClipboard(url.absoluteString)
        case .register(let url): try? DesktopLauncher.openInDefaultBrowser(url)
        case .registerDevice: onRegisterDevice?()
        default: break
        }
    }

    private func copyDetails() {
        guard let notice else { return }
        WebView.copyToClipboard(notice.details.text)
        notice.record(environment: ProcessInfo.processInfo.environment)
        copy.title = L("Details copied")
    }
}
