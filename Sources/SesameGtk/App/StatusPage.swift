import FoundationEssentials
import SesameSamples
import SesameWindowModel

/// GNOME's status page: an icon, a title, a sentence and at most one button, in the middle of
/// the space a list would take — what a page shows when it has nothing to show (``PageStatus``).
@MainActor
final class StatusPage {
    /// The page's widgets.
    let root: Box
    private let icon = Image(iconName: "system-users-symbolic", pixels: 96)
    private let title = Label("", wrap: true, xalign: 0.5)
    private let details = Label("", wrap: true, xalign: 0.5)
    /// "Trying again in 8 s", counting down, while the page reads again by itself.
    private let retry = Label("", wrap: true, xalign: 0.5)
    /// The one action; hidden when the status offers none.
    let button = Button("")
    /// The status shown.
    private(set) var status: PageStatus?
    /// The button was pressed: what it offers.
    var onAction: ((PageStatus.Action) -> Void)?

    /// An empty status page; `name` is its accessible name (what a screen reader reads first).
    init(name: String) {
        icon.addStyleClass("dim-label")
        let column = Box(vertical: true, spacing: 12)
        column.pack(icon)
        column.pack(title)
        column.pack(details)
        column.pack(retry)
        column.pack(button)
        column.setMargin(24)
        column.centerInItsSpace()
        title.limitWidth(characters: 40)
        details.limitWidth(characters: 50)
        details.addStyleClass("dim-label")
        retry.addStyleClass("dim-label")
        retry.accessibleName = L("Retrying")
        title.centerLines()
        details.centerLines()
        retry.centerLines()
        button.addStyleClass("suggested-action")
        button.centerInItsSpace()
        root = Box(vertical: true, spacing: 0)
        root.pack(column, expand: true)
        root.setName("status-page")
        // The page by its name; its labels read as what they say.
        root.accessibleName = name
        button.onClick { [weak self] in
            guard let self, let action = self.status?.action else { return }
            self.onAction?(action)
        }
    }

    /// Shows `status` (its icon chosen by its kind, or `iconName`).
    func show(_ status: PageStatus, iconName: String? = nil) {
        self.status = status
        icon.setIcon(iconName ?? Self.iconName(for: status.kind))
        title.setMarkup("<span size=\"x-large\" weight=\"bold\">\(Markup.escaped(status.title))</span>")
        details.text = status.description
        details.tooltip = status.description
        if let action = status.action {
            button.title = action.title
            button.accessibleName = action.title
        }
        retry.text = status.retryText ?? ""
        root.showAll()
        button.isVisible = status.action != nil
        details.isVisible = !status.description.isEmpty
        retry.isVisible = status.retryText != nil
    }

    /// Gives the keyboard to the button (or nowhere, when there is none); whether it took it.
    @discardableResult
    func focusAction() -> Bool {
        guard button.isVisible else { return false }
        button.grabFocus()
        return true
    }

    private static func iconName(for kind: PageStatus.Kind) -> String {
        switch kind {
        case .signedOut: "system-users-symbolic"
        case .signingIn: "media-playback-pause-symbolic"
        case .nothingYet: "edit-find-symbolic"
        case .failed: "dialog-warning-symbolic"
        case .signInsUnreadable: "dialog-password-symbolic"
        }
    }
}
