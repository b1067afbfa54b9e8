import FoundationEssentials
import SesameCore
import SesameSamples
import SesameWindowModel

/// Options of the window that are not the samples' (``MainWindow/Options``).
public struct WindowOptions: Sendable {
    /// Where each storage group's web data (cookies) lives; nil keeps it in memory.
    public var webDataDirectory: URL?
    /// `--automation-mode`: WebKitWebDriver may drive the sign-in view.
    public var automation: Bool
    /// The sample to show first.
    public var initialSample: Sample.Kind?
    /// Where sign-ins are kept, when the user should know (files, not a keyring): the
    /// folder, shown in the account menu.
    public var filesStorage: URL?
    /// Record every main-loop stall longer than a frame (16 ms) in the trace as
    /// `main-loop-stall` (with `--trace-events`: a window that froze shows in the file).
    public var reportStalls: Bool
    /// Follow the desktop's network monitor (GIO's); without it, whoever made the model's
    /// ``NetworkStatus`` says when the network comes and goes.
    public var followsDesktopNetwork: Bool
    /// Keys the settings files have that Sesame does not read: the window shows them until
    /// the user closes the notice (a misspelt key must not be ignored silently).
    public var settingsWarnings: [SettingsWarning]
    /// Where the window's size, maximised state and inspector are kept across restarts
    /// (``WindowState``); nil keeps nothing (tests).
    public var stateFile: URL?
    /// Sesame's user guide, linked from the About window.
    public var documentation: URL?
    /// What "Try the Demo Instead" does when a sign-in page cannot be reached (the installed app:
    /// start again as `sesame --demo`); nil: not offered (already the demo, or an emulator).
    public var tryDemo: (@MainActor () -> Void)?
    /// How long the window may wait for its first sample before it shows (a slow keyring, a busy
    /// machine); a test sets it to zero to meet the latest moment at once.
    public var longestWaitBeforeShowing: Duration = .milliseconds(250)
    /// The window the account service starts for a program's call (`sesame --service-face`): it
    /// touches only the account that call is for. Its first sample reads no account, loads no
    /// data and signs nobody in by itself; a sample's page loads when the user shows it.
    public var startedForAProgram = false

    public init(
        webDataDirectory: URL?, automation: Bool = false, initialSample: Sample.Kind? = nil, filesStorage: URL? = nil,
        reportStalls: Bool = false, followsDesktopNetwork: Bool = true, settingsWarnings: [SettingsWarning] = [],
        stateFile: URL? = nil, documentation: URL? = nil, tryDemo: (@MainActor () -> Void)? = nil
    ) {
        self.webDataDirectory = webDataDirectory
        self.automation = automation
        self.initialSample = initialSample
        self.filesStorage = filesStorage
        self.reportStalls = reportStalls
        self.followsDesktopNetwork = followsDesktopNetwork
        self.settingsWarnings = settingsWarnings
        self.stateFile = stateFile
        self.documentation = documentation
        self.tryDemo = tryDemo
    }
}
