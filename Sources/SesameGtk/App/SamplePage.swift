import SesameSamples
import SesameWindowModel

/// One sample's page in the window: its widgets over its view model.
@MainActor
protocol SamplePage: AnyObject {
    /// The page's widgets.
    var root: Widget { get }
    /// The sample's name.
    var title: String { get }
    /// Who is signed in for the sample.
    var session: SampleSession { get }
    /// The page became visible: sign in if needed, then load.
    func appear() async
    /// The account menu's "Sign out".
    func signOut() async
    /// The account menu's "Switch account": sign out, then someone signs in.
    func switchAccount() async
    /// The network is back: what failed for want of it is tried again.
    func networkReturned()
    /// Where Ctrl+F goes: the page's search field or entry (none on the console).
    var searchField: Widget? { get }
    /// F5 or Ctrl+R: the page reads its data again.
    func refresh()
    /// A sign-in just ended: the page's first control takes the keyboard focus as soon as it
    /// takes input (an entry is insensitive until someone is signed in).
    func focusFirstControlWhenReady()
    /// The window is closing: stop every request, touch no widget again.
    func close()
    /// Set by the window: called when the page has put data the user asked for in its widgets
    /// (rows taken, a response shown), in the main-loop turn that did, before any frame shows it.
    var onContentShown: (() -> Void)? { get set }
}
