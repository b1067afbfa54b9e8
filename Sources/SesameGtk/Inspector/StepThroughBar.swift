import FoundationEssentials
import SesameService
import SesameWindowModel

/// The inspector's step-through bar, shown while the presenter steps through the flow (F8 or
/// the primary menu): what waits, Next (Space while it has the focus) and Continue.
@MainActor
final class StepThroughBar {
    let root = Box(vertical: false, spacing: 6)
    let status = Label("", wrap: true, xalign: 0)
    let next: Button
    let proceed: Button
    private let stepThrough: StepThrough
    private weak var window: Window?
    /// The waiting steps the bar has shown (their numbers, oldest first), until they go ahead.
    private var shown: [Int] = []
    /// The step Next lets go changed (its number; the inspector selects its row, so its
    /// explanation shows first).
    var onNextStep: ((Int) -> Void)?
    /// Continue was pressed: step-through is off.
    var onEnded: (() -> Void)?

    init(stepThrough: StepThrough, window: Window) {
        self.stepThrough = stepThrough
        self.window = window
        next = Button(L("Next"))
        proceed = Button(L("Continue"))
        next.tooltip = L("Let the waiting step happen (Space)")
        proceed.tooltip = L("Run the rest of the flow without stopping")
        status.accessibleName = L("Step-through")
        root.pack(status, expand: true)
        root.pack(next)
        root.pack(proceed)
        next.onClick { [weak self] in self?.letTheShownStepGo() }
        proceed.onClick { [weak self] in
            self?.isOn = false
            self?.onEnded?()
        }
        root.setName("step-through-bar")
        root.showAll()
        root.isVisible = stepThrough.isOn
        update()
    }

    /// Step-through on or off (off lets every waiting step go).
    var isOn: Bool {
        get { stepThrough.isOn }
        set {
            if newValue { stepThrough.turnOn() } else { stepThrough.continueTheRest() }
            root.isVisible = newValue
            update()
        }
    }

    /// A trace event came: a step waits, or went ahead.
    func observe(_ event: FlowTrace.Event) {
        switch event.name {
        case "step-waiting":
            if let number = Self.number(of: event) { shown.append(number) }
            update()
            if shown.count == 1, let first = shown.first { onNextStep?(first) }
            // Space presses Next — unless the user is typing in a field (one with text in it; the
            // search field a page gives the focus to when it shows is empty).
            if (window?.focusedWidget as? Entry)?.text.isEmpty ?? true { next.grabFocus() }
        case "step-released":
            let first = shown.first
            shown.removeAll { $0 == Self.number(of: event) }
            update()
            if let following = shown.first, following != first { onNextStep?(following) }
        default: break
        }
    }

    /// Next: the step the bar shows goes ahead; the button waits for the next one to show.
    private func letTheShownStepGo() {
        guard !shown.isEmpty else { return }
        let oldest = shown.removeFirst()
        update()
        if let following = shown.first { onNextStep?(following) }
        stepThrough.next(oldest)
    }

    private static func number(of event: FlowTrace.Event) -> Int? { event.fields.first { $0.0 == "number" }.flatMap { Int($0.1) } }

    private func update() {
        let waiting = !shown.isEmpty
        next.isSensitive = waiting
        status.text =
            waiting
            ? L("The next step waits for you: Next lets it happen.")
            : L("Stepping through: the next step will wait for you.")
    }
}
