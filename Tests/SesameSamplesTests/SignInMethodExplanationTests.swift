import Foundation
import SesameService
import Testing

@testable import SesameWindowModel

/// The flow inspector teaches each way of proving who you are: the page the sign-in view shows
/// (its form's `step` and `mfaMethod`) is a row, and selecting it says what the method is for and
/// what it protects against, with its source; what the page holds besides is never read.
@MainActor
@Suite("Each sign-in method explained in the flow inspector")
struct SignInMethodExplanationTests {
    static func diagram(_ result: String) throws -> (FlowDiagram, String) {
        let step = try #require(SignInPageStep(scriptResult: result), "no step in \(result)")
        let diagram = FlowDiagram([FlowTrace.Event(time: 1.5, name: SignInPageStep.eventName, fields: step.fields)])
        try #require(diagram.steps.count == 1)
        return (diagram, diagram.details(of: 0))
    }

    @Test(
        "each method's page: its row, what it is for and its source",
        arguments: [
            (
                "sas\n", "page: approve in Authenticator, number matching", "The number ties the phone’s approval to this screen",
                "how-to-mfa-number-match"
            ),
            ("otc\nsoftwareOath", "page: a code from an authenticator app", "only as safe as the place you type it", "RFC 6238"),
            (
                "otc\nsms", "page: a code from a text message", "only as safe as the place you type it",
                "concept-authentication-phone-options"
            ),
            ("fido\n", "page: a passkey or security key", "a passkey cannot be phished", "https://www.w3.org/TR/webauthn-2/"),
            (
                "tap\n", "page: a Temporary Access Pass", "a pass an administrator issued, valid for a limited time",
                "howto-authentication-temporary-access-pass"
            ),
            (
                "verify-identity\n", "page: verify your identity, choose a method", "“Sign in another way” lists the others",
                "concept-system-preferred-multifactor-authentication"
            ),
            (
                "proofup-authenticator\n", "page: set up a way to sign in", "a QR code to scan, then a test approval",
                "concept-registration-mfa-sspr-combined"
            ),
        ])
    func explained(result: String, row: String, says: String, source: String) throws {
        let (diagram, details) = try Self.diagram(result)
        #expect(diagram.steps[0].label == row)
        #expect(diagram.steps[0].from == .signInView && diagram.steps[0].style == .note)
        #expect(details.contains(says), "\(details)")
        #expect(details.contains("Source: ") && details.contains(source), "\(details)")
        #expect(diagram.spoken(of: 0).contains(says), "a screen reader hears the explanation")
    }

    @Test("why a passkey cannot be phished: the origin the browser signs, which a look-alike site cannot change")
    func passkeyOrigin() throws {
        let (_, details) = try Self.diagram("fido\n")
        #expect(details.contains("The browser writes the page’s origin into what the authenticator signs (clientDataJSON)"), "\(details)")
        #expect(details.contains("a look-alike site gets a signature for its own address, which the service refuses"))
    }

    @Test("the page is outside text: an unknown step, a long answer or a code in a field give no row, and nothing of the page is kept")
    func hostilePage() throws {
        #expect(SignInPageStep(scriptResult: "password\n") == nil, "a page that asks for no method")
        #expect(SignInPageStep(scriptResult: "otc<script>\nsms") == nil)
        #expect(SignInPageStep(scriptResult: "proofup-../../etc\n") == nil)
        #expect(SignInPageStep(scriptResult: "sas\n" + String(repeating: "4", count: 300)) == nil)
        let step = try #require(SignInPageStep(scriptResult: "otc\n123456"))
        #expect(step.codeMethod == nil, "a value that is no method is dropped")
        #expect(step.fields.map(\.1) == ["otc"], "\(step.fields)")
        #expect(SignInPageStep(scriptResult: "sas\nsms")?.codeMethod == nil, "only a code page has a code method")
        #expect(SignInPageStep(scriptResult: "sas-retry\n")?.step == .authenticatorPush)
    }

    @Test("only the passkey page sends the person to the system browser: the sign-in window answers every other")
    func browserForPasskeysOnly() {
        let steps = ["otc\nsms", "otc\nsoftwareOath", "sas\n", "tap\n", "verify-identity\n", "proofup-app\n", "fido\n"]
        #expect(steps.compactMap { SignInPageStep(scriptResult: $0) }.filter(\.needsSystemBrowser).map(\.stepName) == ["fido"])
        // A saved flow's event with fields it should not have adds no row.
        let odd = FlowDiagram([FlowTrace.Event(time: 1, name: SignInPageStep.eventName, fields: [("step", "kmsi")])])
        #expect(odd.steps.isEmpty)
    }
}
