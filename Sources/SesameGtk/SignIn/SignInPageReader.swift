import FoundationEssentials
import SesameCore
import SesameService
import SesameWindowModel

/// What Sesame reads of a loaded sign-in page, and nothing more: the "Troubleshooting details"
/// of a refusal page (error code, request and correlation ids, time, app: ``HelpDeskDetails``),
/// and which way of proving who you are the page asks for (its form's hidden `step` and
/// `mfaMethod`: ``SignInPageStep``). The page is hostile like anything read from outside: only
/// fields that look like ids, codes and times, and names Sesame knows, are kept.
@MainActor
final class SignInPageReader {
    private let webView: WebView
    private let trace: FlowTrace
    /// The page refused the sign-in with a refusal Sesame can explain.
    var onRefusalPage: ((HelpDeskDetails) -> Void)?
    /// The page asks for what the sign-in view cannot do yet (a passkey): the system browser can.
    var onNeedsSystemBrowser: (() -> Void)?

    init(webView: WebView, trace: FlowTrace) {
        self.webView = webView
        self.trace = trace
    }

    /// Reads the page on screen.
    func read() {
        readTroubleshootingDetails()
        readPageStep()
    }

    /// A refusal page's details, when they name a refusal Sesame can explain.
    private func readTroubleshootingDetails() {
        let script = """
            (function () {
              var details = document.getElementById('troubleshootingDetails');
              var text = details ? details.innerText : (document.body ? document.body.innerText : '');
              return String(text).slice(0, 8192);
            })()
            """
        webView.evaluateJavaScript(script) { [weak self] text in
            guard let self, let text, text.contains("Error Code") else { return }
            let details = HelpDeskDetails(troubleshooting: text)
            guard TenantRefusal(serviceCode: details.errorCode) != nil else { return }
            self.trace.record("refusal-page", [("code", details.errorCode ?? "")])
            self.onRefusalPage?(details)
        }
    }

    /// The method the page asks for, recorded for the flow inspector, which explains it.
    private func readPageStep() {
        webView.evaluateJavaScript(SignInPageStep.script) { [weak self] text in
            guard let self, let text, let step = SignInPageStep(scriptResult: text) else { return }
            self.trace.record(SignInPageStep.eventName, step.fields)
            if step.needsSystemBrowser { self.onNeedsSystemBrowser?() }
        }
    }
}
