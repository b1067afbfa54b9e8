import CGtkWebKit
import FoundationEssentials
import SesameGIO

/// Saves what a window shows as a PNG (tests, `make demo`), read back from the X server.
@MainActor
public enum Screenshot {
    /// Writes `window`'s pixels to `file` (PNG).
    public static func save(_ window: Window, to file: URL) throws {
        guard let gdkWindow = gtk_widget_get_window(window.widget) else { throw ScreenshotError("the window is not on screen") }
        // Callers let the loop paint first (never iterated from here: this may run inside a
        // main-queue drain, and the loop must not nest). Flush what was drawn to the X server.
        gdk_display_sync(gdk_window_get_display(gdkWindow))
        let width = gdk_window_get_width(gdkWindow)
        let height = gdk_window_get_height(gdkWindow)
        guard let read = gdk_pixbuf_get_from_window(gdkWindow, 0, 0, width, height) else {
            throw ScreenshotError("the window's pixels could not be read")
        }
        try GObjectReference.withNewObject(read) { pixbuf in
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            var error: UnsafeMutablePointer<GError>?
            guard gdk_pixbuf_savev(pixbuf, file.path, "png", nil, nil, &error) != 0 else {
                defer { g_error_free(error) }
                throw ScreenshotError(GLibError(error).message)
            }
        }
    }
}

/// A screenshot could not be taken.
public struct ScreenshotError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
