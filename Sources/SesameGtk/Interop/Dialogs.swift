import CGtkWebKit
import FoundationEssentials
import SesameGIO

/// GNOME's About window (`GtkAboutDialog`): the program, its version, what it is, its website,
/// its licence and who made it. Closing it destroys it.
@MainActor
public final class AboutDialog: Widget {
    /// What the window says.
    public struct Content: Sendable {
        public var programName: String
        public var version: String
        public var comments: String
        /// The website line's link (the documentation), if there is one.
        public var website: URL?
        public var websiteLabel: String
        public var authors: [String]
        public var copyright: String
        public var iconName: String
        /// The licence's words, shown as they are (GTK's `GTK_LICENSE_CUSTOM`).
        public var license: String

        public init(
            programName: String, version: String, comments: String, website: URL?, websiteLabel: String, authors: [String],
            copyright: String, iconName: String, license: String
        ) {
            self.programName = programName
            self.version = version
            self.comments = comments
            self.website = website
            self.websiteLabel = websiteLabel
            self.authors = authors
            self.copyright = copyright
            self.iconName = iconName
            self.license = license
        }
    }

    /// An About window over `parent`.
    public init(_ content: Content, parent: Window) {
        super.init(shared: gtk_about_dialog_new())
        let about = sesame_about_dialog(widget)
        gtk_about_dialog_set_program_name(about, content.programName)
        gtk_about_dialog_set_version(about, content.version)
        gtk_about_dialog_set_comments(about, content.comments)
        if let website = content.website {
            gtk_about_dialog_set_website(about, website.absoluteString)
            gtk_about_dialog_set_website_label(about, content.websiteLabel)
        }
        gtk_about_dialog_set_copyright(about, content.copyright)
        gtk_about_dialog_set_logo_icon_name(about, content.iconName)
        gtk_about_dialog_set_license(about, content.license)
        gtk_about_dialog_set_wrap_license(about, 1)
        Self.withCStrings(content.authors) { gtk_about_dialog_set_authors(about, $0) }
        gtk_window_set_transient_for(sesame_window(object), parent.window)
        gtk_window_set_modal(sesame_window(object), 1)
        // Close (or Escape) answers the dialog: it goes.
        Signals.enumerated(self, "response") { [weak self] _ in self?.destroy() }
    }

    /// Shows the window.
    public func present() { gtk_window_present(sesame_window(object)) }

    /// Closes the window.
    public func destroy() { gtk_widget_destroy(widget) }

    /// The version line as the window shows it.
    public var version: String { gtk_about_dialog_get_version(sesame_about_dialog(widget)).map { String(cString: $0) } ?? "" }

    /// The licence as the window shows it.
    public var license: String { gtk_about_dialog_get_license(sesame_about_dialog(widget)).map { String(cString: $0) } ?? "" }

    private static func withCStrings(_ strings: [String], _ body: (UnsafeMutablePointer<UnsafePointer<gchar>?>) -> Void) {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { for pointer in pointers { free(pointer) } }
        pointers.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<gchar>?.self, capacity: buffer.count) { body($0) }
        }
    }
}

/// GNOME's keyboard shortcuts window (`GtkShortcutsWindow`, Ctrl+?), built from groups of
/// shortcuts. Closing it hides it; it shows again as it was.
@MainActor
public final class ShortcutsWindow: Widget {
    /// One shortcut: GTK's accelerator syntax (`<Primary>q`, `F5`) and what it does.
    public struct Shortcut: Sendable {
        public var accelerator: String
        public var title: String
        public init(_ accelerator: String, _ title: String) {
            self.accelerator = accelerator
            self.title = title
        }
    }

    /// A window listing `groups` (a title and its shortcuts each), over `parent`.
    public init(groups: [(title: String, shortcuts: [Shortcut])], parent: Window) {
        let builder = GObjectReference(UnsafeMutableRawPointer(gtk_builder_new_from_string(Self.interface(groups), -1)!), .new)
        let found = gtk_builder_get_object(sesame_builder(builder.object), "shortcuts")!
        super.init(shared: sesame_widget(found))
        gtk_window_set_transient_for(sesame_window(object), parent.window)
        Signals.event(self, "delete-event") { [weak self] in
            self?.hide()
            return true
        }
    }

    /// Shows the window.
    public func present() { gtk_window_present(sesame_window(object)) }

    /// The window as GtkBuilder's XML: every text escaped.
    private static func interface(_ groups: [(title: String, shortcuts: [Shortcut])]) -> String {
        func escaped(_ text: String) -> String {
            text.replacing("&", with: "&amp;").replacing("<", with: "&lt;")
                .replacing(">", with: "&gt;").replacing("\"", with: "&quot;")
        }
        var xml = """
            <interface><object class="GtkShortcutsWindow" id="shortcuts"><property name="modal">1</property>
            <child><object class="GtkShortcutsSection"><property name="visible">1</property>
            <property name="section-name">shortcuts</property><property name="max-height">12</property>
            """
        for group in groups {
            xml += "<child><object class=\"GtkShortcutsGroup\"><property name=\"visible\">1</property>"
            xml += "<property name=\"title\">\(escaped(group.title))</property>"
            for shortcut in group.shortcuts {
                xml += "<child><object class=\"GtkShortcutsShortcut\"><property name=\"visible\">1</property>"
                xml += "<property name=\"accelerator\">\(escaped(shortcut.accelerator))</property>"
                xml += "<property name=\"title\">\(escaped(shortcut.title))</property></object></child>"
            }
            xml += "</object></child>"
        }
        return xml + "</object></child></object></interface>"
    }
}
