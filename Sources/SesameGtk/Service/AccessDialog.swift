import FoundationEssentials
import SesameCore
import SesameSamples
import SesameService
import SesameWindowModel

/// The question for a program that asks for a token: "Allow ⁨tool⁩ to use alex@contoso.com?",
/// the permissions the token would carry, where the program is, and Deny, Allow once, Always
/// allow — a dialog window of its own, as xdg-desktop-portal's access dialogs are, so it never
/// changes the main window's size or focus.
///
/// It cannot be clicked through: its buttons take input only once the question has been on
/// screen, in the window that has the keyboard, for ``securityDelay`` (as browsers do for
/// permission prompts), and again after each new question and each time the window comes back
/// to the keyboard; so a double-click meant for something else answers nothing, and a second
/// question never inherits the first one's click. Questions come one at a time; the window is
/// raised once when a burst of questions starts, not for each.
@MainActor
public final class AccessDialog: AccessQuestioner {
    /// How long a question is on screen, with the keyboard, before its buttons work.
    public static let securityDelay: Duration = .seconds(1)

    /// The window over which the dialog shows (the main window, when there is one on screen).
    public var parent: (@MainActor () -> Window?)?
    /// Other programs the user knows (kept decisions), to tell two of one name apart.
    public var knownPrograms: (@MainActor () -> [ProgramIdentity])?

    private var window: Window?
    private let heading = Label("", wrap: true, xalign: 0)
    private let permissionsTitle = Label("", wrap: true, xalign: 0)
    private let permissions = Label("", wrap: true, xalign: 0, selectable: true)
    private let origin = Label("", wrap: true, xalign: 0, selectable: true)
    private let warning = Label("", wrap: true, xalign: 0)
    private let deny = Button(L("Deny"), accessibleName: L("Deny this program"))
    private let allowOnce = Button(L("Allow once"), accessibleName: L("Allow this program once"))
    private let always = Button(L("Always allow"), accessibleName: L("Always allow this program"))
    private var current: (AccessRequest, CheckedContinuation<AccessAnswer?, Never>)?
    private var waiting: [(AccessRequest, CheckedContinuation<AccessAnswer?, Never>)] = []
    private var arming: Task<Void, Never>?
    /// Whether the buttons take input now.
    public private(set) var isArmed = false
    /// Whether the parent had the keyboard when the burst began (it gets it back at the end).
    private var parentWasActive = false

    /// A dialog; it appears with the first question.
    public init() {
        heading.accessibleName = L("Program asking for access")
        permissions.accessibleName = L("Permissions the program would get")
        origin.accessibleName = L("Where the program is")
        warning.accessibleName = L("Warning about the program")
        for label in [heading, permissionsTitle, permissions, origin, warning] { label.limitWidth(characters: 52) }
        origin.addStyleClass("dim-label")
        permissionsTitle.text = L("It would be able to:")
        deny.onClick { [weak self] in self?.pressed(.deny) }
        allowOnce.onClick { [weak self] in self?.pressed(.allowOnce) }
        always.onClick { [weak self] in self?.pressed(.always) }
        always.addStyleClass("suggested-action")
        disarm()
    }

    /// The question showing now, if any (tests).
    public var question: AccessRequest? { current?.0 }
    /// The dialog's window while a question shows (tests, screenshots).
    public var shownWindow: Window? { current == nil ? nil : window }
    /// How many questions wait behind the one showing.
    public var waitingCount: Int { waiting.count }
    /// How many times the dialog asked to be raised (once per burst of questions).
    public private(set) var raises = 0

    public func ask(_ request: AccessRequest) async -> AccessAnswer? {
        await withCheckedContinuation { continuation in
            waiting.append((request, continuation))
            showNext()
        }
    }

    /// Answers the question showing as a press of a button would: only while the buttons are
    /// armed (tests press through here or through AT-SPI, which also finds unarmed buttons
    /// insensitive).
    public func press(_ answer: AccessAnswer) { pressed(answer) }

    /// Dismisses every question (the app is ending): no program gets a token, nothing is kept.
    public func dismissAll() {
        let all = waiting.map(\.1) + (current.map { [$0.1] } ?? [])
        waiting = []
        current = nil
        close()
        for continuation in all { continuation.resume(returning: nil) }
    }

    private func pressed(_ answer: AccessAnswer) {
        guard isArmed, answer != .always || always.isVisible else { return }
        finish(answer)
    }

    private func finish(_ answer: AccessAnswer?) {
        guard let (_, continuation) = current else { return }
        current = nil
        disarm()
        continuation.resume(returning: answer)
        if waiting.isEmpty { close() } else { showNext() }
    }

    private func showNext() {
        guard current == nil, !waiting.isEmpty else { return }
        let next = waiting.removeFirst()
        current = next
        let text = AccessQuestionText(next.0, knownPrograms: knownPrograms?() ?? [])
        heading.setMarkup("<span size=\"large\" weight=\"bold\">\(Markup.escaped(text.heading))</span>")
        heading.tooltip = text.heading
        permissions.text = text.permissions.map { "• \($0)" }.joined(separator: "\n")
        origin.text = text.origin
        origin.tooltip = text.origin
        warning.text = text.warning ?? ""
        warning.isVisible = text.warning != nil
        always.isVisible = text.offersAlways
        disarm()
        let window = self.window ?? makeWindow()
        if !window.isVisible {
            // The first question of a burst: the only time the dialog asks to be raised.
            let parent = parent?()
            parentWasActive = parent?.isActive ?? false
            window.setTransient(for: parent)
            window.showAll()
            warning.isVisible = text.warning != nil
            always.isVisible = text.offersAlways
            window.present()
            raises += 1
        }
        armWhenSeen()
    }

    private func makeWindow() -> Window {
        let window = Window(application: nil, title: L("Access to your account"), width: 460, height: -1)
        window.isResizable = false
        window.setName("access-question")
        let icon = Image(iconName: "dialog-password-symbolic", pixels: 48)
        let texts = Box(vertical: true, spacing: 8)
        texts.pack(heading)
        texts.pack(permissionsTitle)
        texts.pack(permissions)
        texts.pack(origin)
        texts.pack(warning)
        warning.addStyleClass("warning")
        // Closing the dialog (its close button, Escape) is no answer: no token, nothing kept.
        QuestionLayout.arrange(window, icon: icon, texts: texts, buttons: [deny, allowOnce, always]) { [weak self] in
            self?.finish(nil)
        }
        window.onActiveChanged { [weak self] in self?.armWhenSeen() }
        window.onMapped { [weak self] in self?.armWhenSeen() }
        self.window = window
        return window
    }

    /// Arms the buttons once the question has been on screen with the keyboard for the delay;
    /// losing the keyboard disarms them and starts the wait again.
    private func armWhenSeen() {
        guard current != nil, let window, window.isMapped, window.isActive else {
            disarm()
            return
        }
        guard arming == nil, !isArmed else { return }
        arming = Task { [weak self] in
            try? await Task.sleep(for: Self.securityDelay)
            guard let self, !Task.isCancelled else { return }
            self.arming = nil
            guard self.current != nil, self.window?.isActive == true, self.window?.isMapped == true else { return }
            self.isArmed = true
            for button in [self.deny, self.allowOnce, self.always] { button.isSensitive = true }
            // The safe answer has the keyboard: Enter or Space denies.
            self.deny.grabFocus()
        }
    }

    private func disarm() {
        arming?.cancel()
        arming = nil
        isArmed = false
        for button in [deny, allowOnce, always] { button.isSensitive = false }
    }

    private func close() {
        disarm()
        guard let window, window.isVisible else { return }
        window.hide()
        if parentWasActive { parent?()?.present() }
    }

}
