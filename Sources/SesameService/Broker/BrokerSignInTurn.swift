/// The window's sign-in for the identity broker, one program at a time: Sesame's window shows one
/// sign-in page, so a second program's interactive request waits for the first to end. Whose
/// sign-in is on screen is then known, and `cancelInteractiveFlow` ends it for that program only.
@MainActor
final class BrokerSignInTurn {
    /// The program whose sign-in the window shows (or is about to); nil: none.
    private(set) var owner: ProgramIdentity?
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Waits until no other program's sign-in is open, then takes the window for `program`.
    func take(for program: ProgramIdentity) async {
        while owner != nil { await withCheckedContinuation { waiting.append($0) } }
        owner = program
    }

    /// Gives the window back; the programs waiting try again.
    func release() {
        owner = nil
        let woken = waiting
        waiting = []
        for continuation in woken { continuation.resume() }
    }
}
