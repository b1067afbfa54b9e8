import CGtkWebKit
import FoundationEssentials
import SesameGIO

/// A colour, components from 0 to 1.
public struct Color: Sendable, Equatable {
    public var red, green, blue, alpha: Double

    /// How light the colour looks, 0 (black) to 1 (white): Rec. 709's weights.
    public var luminance: Double { 0.2126 * red + 0.7152 * green + 0.0722 * blue }

    public init(_ red: Double, _ green: Double, _ blue: Double, _ alpha: Double = 1) {
        (self.red, self.green, self.blue, self.alpha) = (red, green, blue, alpha)
    }
}

/// Where a line of text sits against its x coordinate.
public enum TextAlignment: Sendable {
    case left, center, right
}

/// A place to draw on (cairo), with text laid out by Pango: what a ``DrawingArea`` paints on the
/// screen and what ``Canvas/export(_:to:width:height:draw:)`` writes to a file. Valid only during
/// the drawing call it is given to.
@MainActor
public final class Canvas {
    private let cairo: OpaquePointer

    private init(cairo: OpaquePointer) { self.cairo = cairo }

    /// The part that needs painting (the visible rows of a long drawing), as top and bottom y.
    public var visibleRange: ClosedRange<Double> {
        var (x1, y1, x2, y2) = (0.0, 0.0, 0.0, 0.0)
        cairo_clip_extents(cairo, &x1, &y1, &x2, &y2)
        return y1...max(y1, y2)
    }

    /// Fills a rectangle.
    public func fill(x: Double, y: Double, width: Double, height: Double, _ color: Color) {
        set(color)
        cairo_rectangle(cairo, x, y, width, height)
        cairo_fill(cairo)
    }

    /// Draws a straight line.
    public func line(from start: (Double, Double), to end: (Double, Double), _ color: Color, width: Double = 1, dashed: Bool = false) {
        set(color)
        cairo_set_line_width(cairo, width)
        var dashes = [4.0, 3.0]
        cairo_set_dash(cairo, &dashes, dashed ? 2 : 0, 0)
        cairo_move_to(cairo, start.0, start.1)
        cairo_line_to(cairo, end.0, end.1)
        cairo_stroke(cairo)
        cairo_set_dash(cairo, nil, 0, 0)
    }

    /// Fills a polygon (an arrow head).
    public func fill(polygon points: [(Double, Double)], _ color: Color) {
        guard let first = points.first else { return }
        set(color)
        cairo_move_to(cairo, first.0, first.1)
        for point in points.dropFirst() { cairo_line_to(cairo, point.0, point.1) }
        cairo_close_path(cairo)
        cairo_fill(cairo)
    }

    /// Writes one line of `text` with its top at `y`: left of, centred on or right of `x`, cut
    /// with an ellipsis to `width` when given. A `font` is a Pango description ("Sans Bold 9").
    public func text(
        _ text: String, x: Double, y: Double, width: Double? = nil, alignment: TextAlignment = .left, font: String = "Sans 9",
        _ color: Color
    ) {
        guard let created = pango_cairo_create_layout(cairo) else { return }
        GObjectReference.withNewObject(created) { layout in
            let description = pango_font_description_from_string(font)
            defer { pango_font_description_free(description) }
            pango_layout_set_font_description(layout, description)
            pango_layout_set_text(layout, text, -1)
            if let width {
                pango_layout_set_width(layout, Int32(width * Double(PANGO_SCALE)))
                pango_layout_set_ellipsize(layout, PANGO_ELLIPSIZE_END)
            }
            var inkWidth: Int32 = 0
            var inkHeight: Int32 = 0
            pango_layout_get_pixel_size(layout, &inkWidth, &inkHeight)
            let shown = Double(inkWidth)
            let left: Double =
                switch alignment {
                case .left: x
                case .center: x - shown / 2
                case .right: x - shown
                }
            set(color)
            cairo_move_to(cairo, left, y)
            pango_cairo_show_layout(cairo, layout)
        }
    }

    /// Moves everything drawn after by `y` pixels down.
    public func translate(y: Double) { cairo_translate(cairo, 0, y) }

    private func set(_ color: Color) { cairo_set_source_rgba(cairo, color.red, color.green, color.blue, color.alpha) }

    /// Paints on the cairo context GTK gives a `draw` handler.
    static func drawing(on context: OpaquePointer, _ draw: (Canvas) -> Void) {
        cairo_save(context)
        draw(Canvas(cairo: context))
        cairo_restore(context)
    }

    /// An image file format.
    public enum Format: String, Sendable {
        case png, svg
    }

    /// Why a drawing could not be written.
    public struct ExportError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Draws onto a new image of `width` × `height` pixels and writes it to `file` as PNG or SVG
    /// (vector: text stays sharp at any size).
    public static func export(_ format: Format, to file: URL, width: Int, height: Int, draw: (Canvas) -> Void) throws {
        let width = max(1, min(width, 16_384))
        let height = max(1, min(height, 32_767))
        let surface: OpaquePointer? =
            switch format {
            case .png: cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height))
            case .svg: cairo_svg_surface_create(file.path, Double(width), Double(height))
            }
        guard let surface else { throw ExportError(description: "cairo made no surface") }
        defer { cairo_surface_destroy(surface) }
        guard let context = cairo_create(surface) else { throw ExportError(description: "cairo made no context") }
        draw(Canvas(cairo: context))
        let drawn = cairo_status(context)
        cairo_destroy(context)
        var status = drawn
        if status == CAIRO_STATUS_SUCCESS {
            switch format {
            case .png: status = cairo_surface_write_to_png(surface, file.path)
            case .svg:
                cairo_surface_finish(surface)
                status = cairo_surface_status(surface)
            }
        }
        guard status == CAIRO_STATUS_SUCCESS else {
            throw ExportError(description: "\(file.lastPathComponent): \(String(cString: cairo_status_to_string(status)))")
        }
    }
}

/// A widget the app paints itself, which takes clicks and keys when focused.
@MainActor
public final class DrawingArea: Widget {
    public init() {
        super.init(new: gtk_drawing_area_new())
        gtk_widget_set_can_focus(widget, 1)
        gtk_widget_add_events(widget, Int32(GDK_BUTTON_PRESS_MASK.rawValue | GDK_KEY_PRESS_MASK.rawValue))
    }

    /// The width GTK gave the widget.
    public var allocatedWidth: Int { Int(gtk_widget_get_allocated_width(widget)) }

    /// Asks for `height` pixels (a long drawing inside a scrolled window).
    public func setContentHeight(_ height: Int) { gtk_widget_set_size_request(widget, -1, Int32(min(height, 32_767))) }

    /// Asks GTK to paint again.
    public func redraw() { gtk_widget_queue_draw(widget) }

    /// Paints with `draw(canvas, width, height)` whenever GTK asks.
    public func onDraw(_ draw: @escaping @MainActor (Canvas, Double, Double) -> Void) {
        Signals.draw(self) { [weak self] context in
            guard let self else { return }
            let width = Double(gtk_widget_get_allocated_width(self.widget))
            let height = Double(gtk_widget_get_allocated_height(self.widget))
            Canvas.drawing(on: context) { draw($0, width, height) }
        }
    }

    /// Runs `action(x, y)` on a primary click, after taking the keyboard focus.
    public func onClick(_ action: @escaping @MainActor (Double, Double) -> Void) {
        Signals.pointer(self, "button-press-event") { [weak self] x, y in
            self?.grabFocus()
            action(x, y)
            return true
        }
    }

    /// Runs `action(key)` on a key press while focused; the key stays GTK's when it returns false.
    public func onKey(_ action: @escaping @MainActor (Key) -> Bool) {
        Signals.key(self, "key-press-event") { keyval in
            guard let key = Key(keyval: keyval) else { return false }
            return action(key)
        }
    }

    /// Presses `key` with the focus here, for tests and automation (``Widget/sendKey(_:)``).
    @discardableResult
    public func type(_ key: Key) -> Bool {
        grabFocus()
        guard gtk_widget_get_window(gtk_widget_get_toplevel(widget)) != nil else { return false }
        sendKey(KeyPress(key: key.keyval))
        return true
    }

    /// The keys a drawing reacts to.
    public enum Key: Sendable, CaseIterable {
        case up, down, home, end, escape

        var keyval: UInt32 {
            let value: Int32 =
                switch self {
                case .up: GDK_KEY_Up
                case .down: GDK_KEY_Down
                case .home: GDK_KEY_Home
                case .end: GDK_KEY_End
                case .escape: GDK_KEY_Escape
                }
            return UInt32(bitPattern: value)
        }

        init?(keyval: UInt32) {
            switch Int32(bitPattern: keyval) {
            case GDK_KEY_Up, GDK_KEY_KP_Up: self = .up
            case GDK_KEY_Down, GDK_KEY_KP_Down: self = .down
            case GDK_KEY_Home, GDK_KEY_KP_Home: self = .home
            case GDK_KEY_End, GDK_KEY_KP_End: self = .end
            case GDK_KEY_Escape: self = .escape
            default: return nil
            }
        }
    }
}

/// The desktop's "Save" dialog (through the file chooser portal inside a sandbox).
@MainActor
public enum SaveDialog {
    private static var open: [GObjectReference] = []

    /// Asks where to save, suggesting `name`; `chosen` gets the file, or nothing when cancelled.
    /// The buttons' labels carry their mnemonics ("_Save", "_Cancel").
    public static func ask(
        parent: Window, title: String, suggestedName name: String, accept: String, cancel: String,
        _ chosen: @escaping @MainActor (URL) -> Void
    ) {
        guard
            let dialog = gtk_file_chooser_native_new(title, sesame_window(parent.object), GTK_FILE_CHOOSER_ACTION_SAVE, accept, cancel)
        else { return }
        let owner = GObjectReference(UnsafeMutableRawPointer(dialog), .new)
        gtk_file_chooser_set_do_overwrite_confirmation(sesame_file_chooser(owner.object), 1)
        gtk_file_chooser_set_current_name(sesame_file_chooser(owner.object), name)
        Signals.enumerated(owner, "response") { [weak owner] response in
            defer { open.removeAll { $0 === owner } }
            guard Int32(bitPattern: response) == GTK_RESPONSE_ACCEPT.rawValue,
                let file = gtk_file_chooser_get_filename(sesame_file_chooser(owner?.object ?? UnsafeMutableRawPointer(dialog)))
            else { return }
            defer { g_free(file) }
            chosen(URL(filePath: String(cString: file)))
        }
        open.append(owner)
        gtk_native_dialog_show(sesame_native_dialog(owner.object))
    }
}
