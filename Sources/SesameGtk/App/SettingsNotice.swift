import SesameCore
import SesameSamples
import SesameSystem
import SesameWindowModel

/// What the settings files have that Sesame does not read — a misspelt `clientid`, a key of
/// another sample's shape — above the window's content until the user closes it: the file still
/// works, but not as its author thinks.
@MainActor
final class SettingsNotice {
    /// The bar.
    let root = Box(vertical: false, spacing: 8)
    /// The most warnings listed; the rest are counted (a file of thousands of stray keys).
    static let longest = 5

    init(_ warnings: [SettingsWarning]) {
        var lines = warnings.prefix(Self.longest).map(UserMessage.text(for:))
        if warnings.count > Self.longest {
            lines.append(String(formatting: L("And %d more keys Sesame does not use."), warnings.count - Self.longest))
        }
        let label = Label(lines.joined(separator: "\n"), wrap: true, xalign: 0)
        label.accessibleName = L("Settings warnings")
        root.setMargin(8)
        root.setName("settings-warnings")
        root.pack(label, expand: true)
        root.pack(Button(L("Close"), accessibleName: L("Close the settings warnings")) { [weak self] in self?.root.hide() })
    }
}
