import CGio
import FoundationEssentials

/// Opens web addresses in the user's default browser, the desktop way: the handler the desktop
/// registers for the scheme (mimeapps.list, `x-scheme-handler/https`), through the OpenURI portal
/// when Sesame runs in a sandbox. (A window's own launch, with its startup notification, is
/// SesameGtk's `DesktopLauncher.open(_:from:)`.)
public enum DesktopLauncher {
    /// GIO's default-handler launch (`g_app_info_launch_default_for_uri`): for the command
    /// line, which has no window and no main loop; callable from any thread.
    /// - Throws: ``DesktopLaunchError`` when no browser could be started (the message never
    ///   carries the address: a sign-in's carries `state`).
    public static func openInDefaultBrowser(_ url: URL) throws {
        var error: UnsafeMutablePointer<GError>?
        guard g_app_info_launch_default_for_uri(url.absoluteString, nil, &error) != 0 else {
            defer { g_error_free(error) }
            throw DesktopLaunchError(GLibError(error).message)
        }
    }
}

/// No browser could be opened.
public struct DesktopLaunchError: Error, CustomStringConvertible, Sendable {
    /// GLib's reason (never the address).
    public let reason: String
    package init(_ reason: String) { self.reason = reason }
    public var description: String { "no web browser could be opened (\(reason))" }
}
