import FoundationEssentials
import SesameCore
import SesameSamples
import SesameWindowModel

/// The seeds' alert with Retry and Cancel, as a bar above the window's content: a failed
/// sign-in's sentence, and the user's answer. A failure that got no answer at all is also
/// answered "Retry" by the network's return.
@MainActor
final class ErrorBar {
    /// The bar.
    let root = Box(vertical: false, spacing: 8)
    private let label = Label("", wrap: true, xalign: 0)
    /// A tenant's refusal: its action and "Copy details for your IT help desk".
    private let refusal = RefusalActions(copyName: L("Copy the sign-in error's details for your IT help desk"))
    private var choice: CheckedContinuation<Bool, Never>?
    /// A refusal's "Register This Computer…" (set by the window when it can register): the bar
    /// is answered Cancel, and the registration starts.
    var onRegisterDevice: (() -> Void)? {
        didSet {
            refusal.onRegisterDevice = onRegisterDevice.map { register in
                { [weak self] in
                    self?.answer(retry: false)
                    register()
                }
            }
        }
    }
    /// The failure shown got no answer: the network's return answers Retry.
    private(set) var waitsForNetwork = false

    init() {
        root.setMargin(8)
        label.accessibleName = L("Sign-in error")
        root.setName("sign-in-error")
        root.pack(label, expand: true)
        root.pack(refusal.root)
        root.pack(Button(L("Retry"), accessibleName: L("Retry sign-in")) { [weak self] in self?.answer(retry: true) })
        root.pack(
            Button(L("Cancel"), accessibleName: L("Cancel after the sign-in error")) { [weak self] in self?.answer(retry: false) })
    }

    /// Shows `error` — "you are offline" when `offline` and it got no answer — and waits for
    /// Retry (`true`) or Cancel. A question still open is answered Cancel first.
    /// A tenant's refusal (`notice`) gets its action and the help desk's details beside it.
    func ask(about error: AccountStoreError, offline: Bool, notice: RefusalNotice? = nil) async -> Bool {
        answer(retry: false)
        let noAnswer = NetworkStatus.isNoAnswer(error)
        // A sentence made for the user, in their language, with the service's code (AADSTS65004).
        label.text = offline && noAnswer ? UserMessage.offline : UserMessage.text(for: error)
        waitsForNetwork = noAnswer
        root.showAll()
        refusal.show(notice)
        return await withCheckedContinuation { choice = $0 }
    }

    /// Hides the bar with the user's answer (Cancel also when nothing asked).
    func answer(retry: Bool) {
        waitsForNetwork = false
        root.hide()
        let waiting = choice
        choice = nil
        waiting?.resume(returning: retry)
    }
}
