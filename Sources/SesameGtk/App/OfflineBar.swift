import SesameSamples
import SesameWindowModel

/// "You are offline. Sesame will try again when the network is back.", above the window's
/// content while the desktop says there is no network: said once for the whole window, instead
/// of by each request that fails.
@MainActor
final class OfflineBar {
    /// The bar.
    let root = Box(vertical: false, spacing: 8)

    init() {
        let label = Label(UserMessage.offline, wrap: true, xalign: 0)
        label.accessibleName = L("Offline")
        root.setMargin(8)
        root.setName("offline")
        root.pack(label, expand: true)
    }

    /// Shows the bar while `offline`.
    func show(offline: Bool) {
        if offline { root.showAll() } else { root.hide() }
    }
}
