import FoundationEssentials
import SesameSamples
import SesameWindowModel

/// A question about this computer's registration, or what came of one, in a dialog window of its
/// own over the main window (as GNOME Settings asks before it removes an online account): a
/// heading, what it means in a sentence or two, for registering the name the organization will
/// know the computer by, and Cancel beside the one action — or a single Close for an outcome.
@MainActor
final class DeviceDialog {
    /// What the dialog asks or says.
    struct Content {
        var heading: String
        var text: String
        /// The name field's text at first (registering); nil: no field.
        var name: String?
        /// The action's title and accessible name ("Register", "Register this computer"); nil:
        /// the dialog only tells, with Close.
        var action: (title: String, accessibleName: String)?
        /// Whether the action removes something (drawn as GNOME's destructive action).
        var destructive = false
    }

    /// The window over which the dialog shows.
    var parent: (@MainActor () -> Window?)?
    private var window: Window?
    private let icon = Image(iconName: "computer-symbolic", pixels: 48)
    private let heading = Label("", wrap: true, xalign: 0)
    private let text = Label("", wrap: true, xalign: 0)
    private let nameTitle = Label(L("Name"), xalign: 0)
    private let name = Entry()
    private let cancel = Button(L("Cancel"))
    private let action = Button("")
    private var answer: CheckedContinuation<String?, Never>?
    /// What shows now (tests, screenshots).
    private(set) var shown: Content?

    init() {
        heading.accessibleName = L("Question about this computer")
        text.accessibleName = L("What it means")
        name.accessibleName = L("Name of this computer")
        for label in [heading, text] { label.limitWidth(characters: 52) }
        nameTitle.addStyleClass("dim-label")
        cancel.onClick { [weak self] in self?.finish(nil) }
        action.onClick { [weak self] in self?.finish(self?.name.text ?? "") }
        name.onActivate { [weak self] in self?.finish(self?.name.text ?? "") }
    }

    /// Shows `content` and waits for the answer: the name typed (empty without a field) when the
    /// action was pressed, nil for Cancel, Close, the window's close button or Escape. A question
    /// still open is answered nil first.
    func show(_ content: Content) async -> String? {
        finish(nil)
        shown = content
        heading.setMarkup("<span size=\"large\" weight=\"bold\">\(Markup.escaped(content.heading))</span>")
        heading.tooltip = content.heading
        text.text = content.text
        name.text = content.name ?? ""
        if let offered = content.action {
            action.title = offered.title
            action.accessibleName = offered.accessibleName
            cancel.title = L("Cancel")
            cancel.accessibleName = L("Cancel")
        } else {
            cancel.title = L("Close")
            // Not the window's own Close (the title bar's), for a screen reader and the tests.
            cancel.accessibleName = L("Close this message")
        }
        let window = self.window ?? makeWindow()
        window.setTransient(for: parent?())
        window.showAll()
        action.removeStyleClass("suggested-action")
        action.removeStyleClass("destructive-action")
        action.addStyleClass(content.destructive ? "destructive-action" : "suggested-action")
        action.isVisible = content.action != nil
        name.isVisible = content.name != nil
        nameTitle.isVisible = content.name != nil
        window.present()
        // The keyboard starts where the answer is typed, or on the safe answer.
        if content.name != nil { name.grabFocus() } else { cancel.grabFocus() }
        return await withCheckedContinuation { answer = $0 }
    }

    /// Closes the dialog with no answer (the window is closing).
    func dismiss() { finish(nil) }

    private func finish(_ value: String?) {
        guard let waiting = answer else { return }
        answer = nil
        shown = nil
        window?.hide()
        waiting.resume(returning: value)
    }

    private func makeWindow() -> Window {
        let window = Window(application: nil, title: L("This Computer"), width: 460, height: -1)
        window.isResizable = false
        window.isModal = true
        window.setName("device-question")
        let texts = Box(vertical: true, spacing: 8)
        texts.pack(heading)
        texts.pack(text)
        texts.pack(nameTitle)
        texts.pack(name)
        QuestionLayout.arrange(window, icon: icon, texts: texts, buttons: [cancel, action]) { [weak self] in self?.finish(nil) }
        self.window = window
        return window
    }
}
