import Foundation
import SesameSamples
import SesameWindowModel
import Testing

/// The window's life as a value: what each moment does, without a display.
@Suite("The window's phases (no GTK)")
struct WindowPhasesTests {
    @Test("someone is signed in: the first page and the window at once, the rest once it is on screen, never twice")
    func signedIn() {
        var phases = WindowPhases()
        #expect(phases.show(signingIn: false) == [.buildFirstPage(joiningSignIn: false), .present, .focusCurrentPage])
        #expect(phases.advance(to: .complete) == [.buildFirstPage(joiningSignIn: false), .buildTheRest])
        #expect(phases.show(signingIn: false) == [], "a phase is entered once")
        #expect(phases.advance(to: .shown) == [], "phases never move back")
        #expect(phases.advance(to: .closed) == [.tearDown])
        #expect(phases.advance(to: .closed) == [])
    }

    @Test("closed during the first sign-in: the sign-in the teardown cancels shows nothing (the widgets are gone)")
    func closedDuringSignIn() {
        var phases = WindowPhases()
        #expect(phases.signInShown() == [.showSignIn, .present])
        #expect(phases.advance(to: .closed) == [.tearDown])
        #expect(phases.signInHidden(afterRedirect: false) == [])
        #expect(phases.signInHidden(afterRedirect: true) == [])
    }

    @Test("someone must sign in: the sign-in page alone first; the pages, built once it loaded, join that sign-in")
    func firstSignIn() {
        var phases = WindowPhases()
        #expect(phases.signInShown() == [.showSignIn, .present])
        #expect(phases.phase == .firstSignIn)
        #expect(phases.advance(to: .complete) == [.buildFirstPage(joiningSignIn: true), .buildTheRest])
        // Built without a window first (a slow start, then complete at once): it is presented too.
        var late = WindowPhases()
        #expect(late.advance(to: .complete) == [.present, .buildFirstPage(joiningSignIn: false), .buildTheRest])
    }

    @Test("after a redirect the window holds its frames until the data is in, then leaves sign-in in one frame")
    func holdForTheData() {
        var phases = WindowPhases()
        _ = phases.signInShown()
        _ = phases.advance(to: .complete)
        let id = UUID()
        #expect(phases.signInHidden(afterRedirect: true, id: id) == [.holdFrames, .waitForData(id)])
        #expect(phases.holdsHeader, "the header waits for the frame that leaves sign-in")
        #expect(phases.dataWaitEnded(for: UUID()) == [], "another wait's end changes nothing")
        #expect(phases.dataShown(for: id) == [.showSamples, .focusCurrentPage, .signInLeft, .showAccount, .resumeFrames])
        #expect(!phases.holdsHeader)
        #expect(phases.dataWaitEnded(for: id) == [], "the data came first: the wait's end changes nothing")
    }

    @Test("no data within the wait: the window leaves sign-in anyway; a new sign-in page lets go of an old hold")
    func holdEnds() {
        var phases = WindowPhases()
        _ = phases.show(signingIn: false)
        let id = UUID()
        _ = phases.signInHidden(afterRedirect: true, id: id)
        #expect(
            phases.dataWaitEnded(for: id) == [
                .showSamples, .buildFirstPage(joiningSignIn: false), .buildTheRest, .focusCurrentPage, .signInLeft, .showAccount,
                .resumeFrames,
            ])

        let next = UUID()
        _ = phases.signInHidden(afterRedirect: true, id: next)
        #expect(phases.signInShown().prefix(2) == [.resumeFrames, .showSignIn], "a held window shows the next sign-in page")
        #expect(phases.dataShown(for: next) == [], "the hold it let go of is over")
        // A sign-in closed without a redirect: back to the samples at once, nothing held.
        #expect(phases.signInHidden(afterRedirect: false) == [.showSamples, .focusCurrentPage])
    }
}
