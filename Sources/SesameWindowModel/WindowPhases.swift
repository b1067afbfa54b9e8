import FoundationEssentials

/// How far the window has come, and the hold after a sign-in's redirect, as a value: what the
/// window does on each moment of its life is decided here and only carried out by `MainWindow`
/// (which turns each ``Effect`` into widgets). Phases only move forward; some are skipped.
///
/// The window's first frame shows either the first sample's page or, when someone must sign in,
/// the sign-in page alone (already loading); the other samples and the flow inspector come once
/// that is on screen. After a redirect the window holds its frames — the last sign-in page stays
/// — until the page has its data, or for ``dataWait`` at most, so that the frame that leaves
/// sign-in is the one that shows the data.
public struct WindowPhases: Sendable, Equatable {
    /// How far the window has come.
    public enum Phase: Int, Comparable, Sendable {
        /// Built, not shown: the first sample finds out whether someone must sign in.
        case starting
        /// On screen with the sign-in page alone, which loads (WebKit's processes need the main
        /// thread then); the samples' pages come once it has loaded.
        case firstSignIn
        /// On screen with the first sample's page.
        case shown
        /// Every sample's page and the flow inspector are built.
        case complete
        /// Destroyed: no request runs on, no widget is touched again.
        case closed

        public static func < (lhs: Phase, rhs: Phase) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// What the window does; `MainWindow.apply(_:)` carries each out.
    public enum Effect: Sendable, Equatable {
        /// Put the window on screen.
        case present
        /// Build the first sample's page and show it; joining the sign-in the start began.
        case buildFirstPage(joiningSignIn: Bool)
        /// Build the other samples' pages and the inspector.
        case buildTheRest
        /// Stop every request, answer every question, close every page.
        case tearDown
        /// Show the sign-in page instead of the samples.
        case showSignIn
        /// Show the samples instead of the sign-in page.
        case showSamples
        /// Hold the window's frames (the last sign-in page stays on screen).
        case holdFrames
        /// Let go of the hold: the next frame shows everything changed meanwhile.
        case resumeFrames
        /// Wait for the current page's data (``dataShown(for:)``) or ``dataWait`` (``dataWaitEnded(for:)``).
        case waitForData(UUID)
        /// The header shows the account of the page showing.
        case showAccount
        /// Sign-in has been left: its view may go.
        case signInLeft
        /// The page's first control takes the keyboard.
        case focusCurrentPage
    }

    /// How long the last sign-in page may stay after the redirect, waiting for the data: past
    /// this, a wait the user feels, the window shows the page (and its progress) without it.
    public static let dataWait: Duration = .milliseconds(100)

    /// How far the window has come.
    public private(set) var phase = Phase.starting
    /// The sign-in being left for the data, while the window waits for it.
    public private(set) var leaving: UUID?

    /// A window about to start.
    public init() {}

    /// Whether the header waits (for the frame that leaves sign-in) before it shows a new account.
    public var holdsHeader: Bool { leaving != nil }

    /// Moves on to `next` (never back): what entering it does, once.
    public mutating func advance(to next: Phase) -> [Effect] {
        guard next > phase else { return [] }
        let previous = phase
        phase = next
        switch next {
        case .starting: return []
        case .firstSignIn: return [.present]
        // Shown without a sign-in (the account is cached): the keyboard goes to the page at once.
        case .shown: return [.buildFirstPage(joiningSignIn: false), .present, .focusCurrentPage]
        case .complete:
            // Built after the first sign-in page had loaded, the first page joins that sign-in.
            return (previous == .starting ? [.present] : []) + [.buildFirstPage(joiningSignIn: previous == .firstSignIn), .buildTheRest]
        case .closed: return [.tearDown]
        }
    }

    /// The window shows (once): the sign-in page alone while one is up, else the first sample's.
    public mutating func show(signingIn: Bool) -> [Effect] {
        advance(to: signingIn ? .firstSignIn : .shown)
    }

    /// A sign-in page takes the window: a hold for the data of an earlier one is let go.
    public mutating func signInShown() -> [Effect] {
        var effects: [Effect] = []
        if leaving != nil {
            leaving = nil
            effects.append(.resumeFrames)
        }
        return effects + [.showSignIn] + show(signingIn: true)
    }

    /// The sign-in page goes: after a redirect, the window holds its frames until the data is
    /// there (``waitForData``); otherwise it goes back to the samples at once.
    public mutating func signInHidden(afterRedirect: Bool, id: UUID = UUID()) -> [Effect] {
        // Closed: the sign-in the teardown cancelled goes with the window's widgets, nowhere.
        guard phase < .closed else { return [] }
        guard afterRedirect else { return leaveSignIn() }
        let effects: [Effect] = leaving == nil ? [.holdFrames] : []
        leaving = id
        return effects + [.waitForData(id)]
    }

    /// The page showing has the data the sign-in was for.
    public mutating func dataShown(for id: UUID) -> [Effect] {
        leaving == id ? leaveSignIn() : []
    }

    /// ``dataWait`` passed without the data.
    public mutating func dataWaitEnded(for id: UUID) -> [Effect] {
        leaving == id ? leaveSignIn() : []
    }

    /// Back from sign-in to the samples.
    private mutating func leaveSignIn() -> [Effect] {
        let held = leaving != nil
        leaving = nil
        var effects: [Effect] = [.showSamples] + advance(to: .complete) + [.focusCurrentPage]
        if held { effects += [.signInLeft, .showAccount, .resumeFrames] }
        return effects
    }
}
