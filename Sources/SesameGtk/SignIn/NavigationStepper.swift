import FoundationEssentials
import SesameCore
import SesameService

/// Step-through in the sign-in view: while the presenter steps through the flow, a navigation of
/// a sign-in (the authorization request, a page of the sign-in, the redirect) waits before the
/// view's policy decides it; WebKit keeps the question open meanwhile.
@MainActor
final class NavigationStepper {
    private let trace: FlowTrace
    /// The navigation waiting, and the wait.
    private var held: (decision: HeldPolicyDecision, wait: Task<Void, Never>)?

    init(trace: FlowTrace) {
        self.trace = trace
    }

    /// Holds `decision` when step-through is on and it is a navigation of `session` the view
    /// would follow or intercept (a refusal is the view's own, at once): `decide` answers it once
    /// the presenter lets it go. Returns whether it holds it.
    func holds(_ decision: PolicyDecision, of session: SignInSession?, then decide: @escaping (PolicyDecision) -> Bool) -> Bool {
        guard trace.stepThrough.isOn, decision.kind == .navigation, let session else { return false }
        let navigation = Navigation(kind: .navigation, address: decision.requestURI, method: decision.method, isDownload: false)
        guard let kind = session.kind(of: navigation), let url = decision.requestURI.flatMap(URL.init(string:)) else { return false }
        // A newer navigation replaces a waiting one, as in any browser.
        drop()
        let kept = decision.hold()
        let fields = [("method", decision.method), ("url", FlowTrace.redacted(url)), ("kind", kind.rawValue)]
        held = (
            kept,
            Task { [weak self, trace] in
                let release = await trace.beforeStep("navigation", fields)
                guard let self, self.held?.decision === kept else { return }
                self.held = nil
                if release == .cancelled {
                    kept.decision.ignore()
                } else if !decide(kept.decision) {
                    kept.decision.use()
                }
            }
        )
        return true
    }

    /// The sign-in ended (or a newer navigation came): the waiting navigation does not happen.
    func drop() {
        guard let held else { return }
        self.held = nil
        held.wait.cancel()
        held.decision.decision.ignore()
    }
}
