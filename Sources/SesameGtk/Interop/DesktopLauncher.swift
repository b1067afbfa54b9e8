import CGtkWebKit
import FoundationEssentials
import SesameGIO

extension DesktopLauncher {
    /// GTK's launch for a window (`gtk_show_uri_on_window`): the browser starts with the
    /// window's display and startup notification, and a portal knows which window asked.
    @MainActor
    public static func open(_ url: URL, from window: Window) throws {
        var error: UnsafeMutablePointer<GError>?
        guard gtk_show_uri_on_window(window.window, url.absoluteString, guint32(GDK_CURRENT_TIME), &error) != 0 else {
            defer { g_error_free(error) }
            throw DesktopLaunchError(GLibError(error).message)
        }
    }
}
