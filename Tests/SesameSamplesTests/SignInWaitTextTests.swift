import SesameWindowModel
import Testing

/// What the page and the header say of a sign-in step-through holds, without GTK.
@Suite("A sign-in waiting for Next, in words")
struct SignInWaitTextTests {
    @Test("only a sign-in under way whose step waits for Next says it waits; otherwise nobody is signed in")
    func waitsForNext() {
        for signingIn in [false, true] {
            for stepWaits in [false, true] {
                let text = SignInWaitText(signingIn: signingIn, stepWaits: stepWaits)
                #expect(text.waitsForNext == (signingIn && stepWaits), "signing in \(signingIn), a step waits \(stepWaits)")
                #expect(
                    text.header == (signingIn && stepWaits ? SignInWaitText.title : L("Not signed in")),
                    "signing in \(signingIn), a step waits \(stepWaits)")
            }
        }
        #expect(SignInWaitText.pageDescription.contains("Next"))
        #expect(SignInWaitText.authorizationWaits.contains("Next"))
    }
}
