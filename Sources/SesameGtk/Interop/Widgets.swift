import CGtkWebKit
import SesameGIO

/// A GTK widget owned by Swift. Containers keep the wrappers of the children packed into them,
/// so a page that holds its root widget holds every widget (and every signal handler) it made;
/// when the page lets go, the handlers are disconnected and the references dropped.
@MainActor
public class Widget: GObjectReference {
    /// Runs `action` once the widget is destroyed (its window closed): nothing may touch it or
    /// its children after.
    public func onDestroy(_ action: @escaping @MainActor () -> Void) { Signals.void(self, "destroy", action) }

    /// Widgets packed into this one (kept alive with it).
    private(set) var children: [Widget] = []

    init(new pointer: UnsafeMutablePointer<GtkWidget>) {
        super.init(pointer, .new)
    }

    init(shared pointer: UnsafeMutablePointer<GtkWidget>) {
        super.init(pointer, .shared)
    }

    var widget: UnsafeMutablePointer<GtkWidget> { object.assumingMemoryBound(to: GtkWidget.self) }

    func keep(_ child: Widget) { children.append(child) }
    func forget(_ child: Widget) { children.removeAll { $0 === child } }
    func forgetChildren() { children = [] }

    /// Shows the widget.
    public func show() { gtk_widget_show(widget) }
    /// Hides the widget.
    public func hide() { gtk_widget_hide(widget) }
    /// Shows the widget and everything in it.
    public func showAll() { gtk_widget_show_all(widget) }

    /// Whether the widget is set to show.
    public var isVisible: Bool {
        get { gtk_widget_get_visible(widget) != 0 }
        set { newValue ? show() : hide() }
    }

    /// Whether the widget reacts to input.
    public var isSensitive: Bool {
        get { gtk_widget_get_sensitive(widget) != 0 }
        set { gtk_widget_set_sensitive(widget, newValue ? 1 : 0) }
    }

    /// Whether Tab can stop on the widget.
    public var canFocus: Bool { gtk_widget_get_can_focus(widget) != 0 }

    /// Whether the widget is on screen: shown, and every parent too.
    public var isMapped: Bool { gtk_widget_get_mapped(widget) != 0 }

    /// The name screen readers (and AT-SPI clients: the end-to-end tests) know it by.
    public var accessibleName: String {
        get {
            guard let accessible = gtk_widget_get_accessible(widget), let name = atk_object_get_name(accessible) else { return "" }
            return String(cString: name)
        }
        set {
            if let accessible = gtk_widget_get_accessible(widget) { atk_object_set_name(accessible, newValue) }
        }
    }

    /// What screen readers say about it after its name (ATK's description).
    public var accessibleDescription: String {
        get {
            guard let accessible = gtk_widget_get_accessible(widget), let text = atk_object_get_description(accessible) else { return "" }
            return String(cString: text)
        }
        set {
            if let accessible = gtk_widget_get_accessible(widget) { atk_object_set_description(accessible, newValue) }
        }
    }

    /// The widget's CSS name (`#sign-in-error`).
    public func setName(_ name: String) { gtk_widget_set_name(widget, name) }

    /// Adds a CSS style class (`dim-label`).
    public func addStyleClass(_ name: String) { gtk_style_context_add_class(gtk_widget_get_style_context(widget), name) }

    /// Takes a CSS style class away.
    public func removeStyleClass(_ name: String) { gtk_style_context_remove_class(gtk_widget_get_style_context(widget), name) }

    /// Whether the widget has a CSS style class (`suggested-action`, …).
    public func hasStyleClass(_ name: String) -> Bool { gtk_style_context_has_class(gtk_widget_get_style_context(widget), name) != 0 }

    /// The same margin on every side.
    public func setMargin(_ value: Int32) {
        gtk_widget_set_margin_start(widget, value)
        gtk_widget_set_margin_end(widget, value)
        gtk_widget_set_margin_top(widget, value)
        gtk_widget_set_margin_bottom(widget, value)
    }

    /// Gives the widget the keyboard focus.
    public func grabFocus() { gtk_widget_grab_focus(widget) }

    /// A colour of the widget's theme by its name (`theme_base_color`, `theme_text_color`, …),
    /// as GTK's theme defines it; nil when the theme names no such colour.
    public func themeColor(_ name: String) -> Color? {
        var rgba = GdkRGBA()
        guard gtk_style_context_lookup_color(gtk_widget_get_style_context(widget), name, &rgba) != 0 else { return nil }
        return Color(rgba.red, rgba.green, rgba.blue, rgba.alpha)
    }

    /// Whether the widget takes the width its container has to spare.
    public var expandsHorizontally: Bool {
        get { gtk_widget_get_hexpand(widget) != 0 }
        set { gtk_widget_set_hexpand(widget, newValue ? 1 : 0) }
    }

    /// Whether the keyboard focus is on this widget.
    public var hasFocus: Bool { gtk_widget_has_focus(widget) != 0 }

    /// The least width (and height, when given) the widget asks for.
    public func setMinimumSize(width: Int32, height: Int32 = -1) { gtk_widget_set_size_request(widget, width, height) }

    /// Puts the widget in the middle of the space it is given, at its own size (a status page's
    /// column); `false` fills the space again.
    public func centerInItsSpace(_ centered: Bool = true) {
        gtk_widget_set_halign(widget, centered ? GTK_ALIGN_CENTER : GTK_ALIGN_FILL)
        gtk_widget_set_valign(widget, centered ? GTK_ALIGN_CENTER : GTK_ALIGN_FILL)
    }

    /// Runs `action` with the widget's width and height each time GTK gives it its size (a
    /// window resized).
    public func onSizeAllocated(_ action: @escaping @MainActor (Int, Int) -> Void) {
        Signals.allocation(self, action)
    }

    /// The height the widget would like at `width` (its natural height for that width).
    public func naturalHeight(forWidth width: Int) -> Int {
        var minimum: gint = 0
        var natural: gint = 0
        gtk_widget_get_preferred_height_for_width(widget, gint(width), &minimum, &natural)
        return Int(natural)
    }

    /// The least height the widget needs at `width` (GTK gives it no less: a window grows to it).
    public func minimumHeight(forWidth width: Int) -> Int {
        var minimum: gint = 0
        var natural: gint = 0
        gtk_widget_get_preferred_height_for_width(widget, gint(width), &minimum, &natural)
        return Int(minimum)
    }

    /// The text shown when the pointer rests on the widget (and read by screen readers).
    public var tooltip: String? {
        get {
            gtk_widget_get_tooltip_text(widget).map { text in
                defer { g_free(text) }
                return String(cString: text)
            }
        }
        set { gtk_widget_set_tooltip_text(widget, newValue) }
    }

    /// Where the widget is in its window, and its size, in the window's coordinates (`nil` while
    /// it is not on screen).
    public var frameInWindow: (x: Int, y: Int, width: Int, height: Int)? {
        guard gtk_widget_get_mapped(widget) != 0, let toplevel = gtk_widget_get_toplevel(widget) else { return nil }
        var x: gint = 0
        var y: gint = 0
        guard gtk_widget_translate_coordinates(widget, toplevel, 0, 0, &x, &y) != 0 else { return nil }
        return (Int(x), Int(y), Int(gtk_widget_get_allocated_width(widget)), Int(gtk_widget_get_allocated_height(widget)))
    }

    /// Creates the windowing resources of this widget and everything inside it now, though it is
    /// not on screen: showing it later costs its first frame less (GTK realizes a widget when it
    /// is first mapped).
    public func realizeAll() {
        func visit(_ pointer: UnsafeMutablePointer<GtkWidget>) {
            guard gtk_widget_get_visible(pointer) != 0 else { return }
            gtk_widget_realize(pointer)
            guard g_type_check_instance_is_a(sesame_type_instance(pointer), gtk_container_get_type()) != 0 else { return }
            var list = gtk_container_get_children(sesame_container(pointer))
            let head = list
            defer { g_list_free(head) }
            while let node = list {
                if let child = node.pointee.data { visit(child.assumingMemoryBound(to: GtkWidget.self)) }
                list = node.pointee.next
            }
        }
        visit(widget)
    }

    /// Whether the widget is packed into a container.
    var hasParent: Bool { gtk_widget_get_parent(widget) != nil }

    /// Every Swift-owned widget inside this one, depth first (what a screen reader walks).
    public var descendants: [Widget] {
        var found: [Widget] = []
        Self.walk(widget) { pointer in
            if pointer != self.widget, let owner = GObjectReference.owner(of: pointer) as? Widget { found.append(owner) }
        }
        return found
    }

    /// The first Swift-owned widget of a type with an accessible name, inside this one.
    public func find<W: Widget>(_ type: W.Type, named name: String) -> W? {
        descendants.lazy.compactMap { $0 as? W }.first { $0.accessibleName == name }
    }

    private static func walk(_ pointer: UnsafeMutablePointer<GtkWidget>, _ visit: (UnsafeMutablePointer<GtkWidget>) -> Void) {
        visit(pointer)
        if g_type_check_instance_is_a(sesame_type_instance(pointer), gtk_window_get_type()) != 0,
            let titlebar = gtk_window_get_titlebar(sesame_window(pointer))
        {
            walk(titlebar, visit)
        }
        // A menu button's popover is a toplevel of its own in GTK's tree, and its menu to the user.
        if g_type_check_instance_is_a(sesame_type_instance(pointer), gtk_menu_button_get_type()) != 0,
            let popover = gtk_menu_button_get_popover(sesame_menu_button(pointer))
        {
            walk(sesame_widget(popover), visit)
        }
        guard g_type_check_instance_is_a(sesame_type_instance(pointer), gtk_container_get_type()) != 0 else { return }
        var list = gtk_container_get_children(sesame_container(pointer))
        let head = list
        defer { g_list_free(head) }
        while let node = list {
            if let child = node.pointee.data { walk(child.assumingMemoryBound(to: GtkWidget.self), visit) }
            list = node.pointee.next
        }
    }
}

/// A line of text.
@MainActor
public final class Label: Widget {
    public init(_ text: String = "", wrap: Bool = false, xalign: Float = 0, selectable: Bool = false) {
        super.init(new: gtk_label_new(text))
        gtk_label_set_xalign(label, xalign)
        if wrap {
            // At word boundaries, and inside a word too long for the line (a user name, a host):
            // a wrapped label never asks for more width than a few characters.
            gtk_label_set_line_wrap(label, 1)
            gtk_label_set_line_wrap_mode(label, PANGO_WRAP_WORD_CHAR)
            neverHyphenate()
        }
        gtk_label_set_selectable(label, selectable ? 1 : 0)
    }

    /// Breaks inside a word without the hyphen Pango would add: in an e-mail address or a host
    /// name a hyphen is part of what is written ("adele.bennett@c-ontoso…" is another address).
    private func neverHyphenate() {
        let attributes = pango_attr_list_new()
        pango_attr_list_insert(attributes, pango_attr_insert_hyphens_new(0))
        gtk_label_set_attributes(label, attributes)
        pango_attr_list_unref(attributes)
    }

    /// Whether Pango may add a hyphen where the label breaks inside a word.
    public var insertsHyphens: Bool {
        guard let attributes = gtk_label_get_attributes(label) else { return true }
        var inserts = true
        let iterator = pango_attr_list_get_iterator(attributes)
        defer { pango_attr_iterator_destroy(iterator) }
        if let found = pango_attr_iterator_get(iterator, PANGO_ATTR_INSERT_HYPHENS) {
            inserts = UnsafeMutableRawPointer(found).assumingMemoryBound(to: PangoAttrInt.self).pointee.value != 0
        }
        return inserts
    }

    private var label: UnsafeMutablePointer<GtkLabel> { sesame_label(object) }

    /// The text shown.
    public var text: String {
        get { gtk_label_get_text(label).map { String(cString: $0) } ?? "" }
        set { gtk_label_set_text(label, newValue) }
    }

    /// Centres each line of a wrapped text (a status page's sentence).
    public func centerLines() { gtk_label_set_justify(label, GTK_JUSTIFY_CENTER) }

    /// Sets Pango markup (`<b>…</b>`); escape what is not markup.
    public func setMarkup(_ markup: String) { gtk_label_set_markup(label, markup) }

    /// Shortens a text too long for its space with "…" at the end, so the label never asks for
    /// more width than it gets (the full text belongs in a tooltip).
    public func ellipsizeAtEnd() {
        gtk_label_set_ellipsize(label, PANGO_ELLIPSIZE_END)
        gtk_label_set_width_chars(label, 1)
    }

    /// Keeps a wrapping label from asking for more than `characters` of width: it wraps there.
    public func limitWidth(characters: Int32) {
        gtk_label_set_width_chars(label, min(characters, 20))
        gtk_label_set_max_width_chars(label, characters)
    }

    /// Wraps a long text at any character when no word boundary fits (a long user name), so the
    /// label asks for no more width than a few characters.
    public func wrapAnywhere() {
        gtk_label_set_line_wrap(label, 1)
        gtk_label_set_line_wrap_mode(label, PANGO_WRAP_WORD_CHAR)
        gtk_label_set_width_chars(label, 1)
        gtk_label_set_max_width_chars(label, 40)
    }
}

/// A push button.
@MainActor
public final class Button: Widget {
    /// A button labelled `title`, known to screen readers as `accessibleName` (the title when nil).
    public init(_ title: String, accessibleName: String? = nil, action: @escaping @MainActor () -> Void = {}) {
        super.init(new: gtk_button_new_with_label(title))
        self.accessibleName = accessibleName ?? title
        onClick(action)
    }

    /// Runs `action` on each click.
    public func onClick(_ action: @escaping @MainActor () -> Void) { Signals.void(self, "clicked", action) }

    /// The button's label.
    public var title: String {
        get { gtk_button_get_label(sesame_button(object)).map { String(cString: $0) } ?? "" }
        set { gtk_button_set_label(sesame_button(object), newValue) }
    }

    /// Clicks it, as the user would (emits `clicked`).
    public func click() { gtk_button_clicked(sesame_button(object)) }
}

/// A one-line text field.
@MainActor
public class Entry: Widget {
    public init(placeholder: String = "") {
        super.init(new: gtk_entry_new())
        self.placeholder = placeholder
    }

    init(newEntry pointer: UnsafeMutablePointer<GtkWidget>) {
        super.init(new: pointer)
    }

    var entry: UnsafeMutablePointer<GtkEntry> { sesame_entry(object) }

    /// The text typed.
    public var text: String {
        get { gtk_entry_get_text(entry).map { String(cString: $0) } ?? "" }
        set { gtk_entry_set_text(entry, newValue) }
    }

    /// The grey hint shown while the field is empty.
    public var placeholder: String {
        get { gtk_entry_get_placeholder_text(entry).map { String(cString: $0) } ?? "" }
        set { gtk_entry_set_placeholder_text(entry, newValue) }
    }

    /// Runs `action` when the user presses Enter.
    public func onActivate(_ action: @escaping @MainActor () -> Void) { Signals.void(self, "activate", action) }

    /// Presses Enter in the field, as the user would.
    public func activate() { gtk_widget_activate(widget) }
}

/// A search field: `search-changed` fires once the user pauses typing.
@MainActor
public final class SearchEntry: Entry {
    override public init(placeholder: String) {
        super.init(newEntry: gtk_search_entry_new())
        self.placeholder = placeholder
    }

    /// Runs `action` when the search text changed (after GTK's short typing pause).
    public func onSearchChanged(_ action: @escaping @MainActor () -> Void) { Signals.void(self, "search-changed", action) }
}

/// Children in a row or a column.
@MainActor
public final class Box: Widget {
    public init(vertical: Bool, spacing: Int32 = 6, _ children: [Widget] = []) {
        super.init(new: gtk_box_new(vertical ? GTK_ORIENTATION_VERTICAL : GTK_ORIENTATION_HORIZONTAL, spacing))
        for child in children { pack(child) }
    }

    /// Adds `child` at the end; `expand` gives it the space left over.
    public func pack(_ child: Widget, expand: Bool = false) {
        gtk_box_pack_start(sesame_box(object), child.widget, expand ? 1 : 0, expand ? 1 : 0, 0)
        keep(child)
    }
}

/// A button that opens a popover below it (a menu of widgets).
@MainActor
public final class MenuButton: Widget {
    /// The button's text.
    public let label: Label
    /// What the popover shows.
    public let content: Box

    /// A menu button showing `title` and a down arrow.
    public init(title: String) {
        label = Label(title, xalign: 0)
        content = Box(vertical: true, spacing: 6)
        content.setMargin(12)
        let button = gtk_menu_button_new()!
        super.init(new: button)
        // The menu button owns its popover (and destroys it with itself); Swift keeps only `content`.
        let pop = gtk_popover_new(button)!
        if let arrow = gtk_bin_get_child(sesame_bin(object)) { gtk_container_remove(sesame_container(object), arrow) }
        let face = Box(vertical: false, spacing: 4)
        face.pack(label)
        face.pack(Widget(new: gtk_image_new_from_icon_name("pan-down-symbolic", GTK_ICON_SIZE_BUTTON)))
        gtk_container_add(sesame_container(object), face.widget)
        keep(face)
        gtk_container_add(sesame_container(pop), content.widget)
        keep(content)
        gtk_menu_button_set_popover(sesame_menu_button(object), pop)
        content.showAll()
    }

    /// A menu button showing only `iconName` (the primary menu's `open-menu-symbolic`).
    public init(iconName: String) {
        label = Label("")
        content = Box(vertical: true, spacing: 2)
        content.setMargin(8)
        let button = gtk_menu_button_new()!
        super.init(new: button)
        let pop = gtk_popover_new(button)!
        if let arrow = gtk_bin_get_child(sesame_bin(object)) { gtk_container_remove(sesame_container(object), arrow) }
        let image = Widget(new: gtk_image_new_from_icon_name(iconName, GTK_ICON_SIZE_BUTTON))
        gtk_container_add(sesame_container(object), image.widget)
        keep(image)
        gtk_container_add(sesame_container(pop), content.widget)
        keep(content)
        gtk_menu_button_set_popover(sesame_menu_button(object), pop)
        content.showAll()
    }

    /// Whether the popover is open.
    public var isOpen: Bool {
        gtk_menu_button_get_popover(sesame_menu_button(object)).map { gtk_widget_get_visible(sesame_widget($0)) != 0 } ?? false
    }

    /// Closes the popover (after one of its buttons was pressed).
    public func close() {
        if let popover = gtk_menu_button_get_popover(sesame_menu_button(object)) { gtk_popover_popdown(popover) }
    }

    /// Opens the popover, as a click on the button does.
    public func open() {
        if let popover = gtk_menu_button_get_popover(sesame_menu_button(object)) { gtk_popover_popup(popover) }
    }

    /// Runs `action` each time the popover opens or closes (the button's `toggled`).
    public func onToggle(_ action: @escaping @MainActor () -> Void) { Signals.void(self, "toggled", action) }
}

/// A menu item in a popover (GTK's model button): its text, a check mark when it is a check item.
@MainActor
public final class MenuItem: Widget {
    /// An item saying `title`; a check item (``isChecked``) when `check`.
    public init(_ title: String, check: Bool = false, action: @escaping @MainActor () -> Void = {}) {
        super.init(new: sesame_model_button_new(title, check ? 1 : 0))
        self.accessibleName = title
        onClick(action)
    }

    /// Runs `action` each time the item is chosen.
    public func onClick(_ action: @escaping @MainActor () -> Void) { Signals.void(self, "clicked", action) }

    /// The item's text.
    public var title: String {
        get { accessibleName }
        set {
            sesame_model_button_set_text(widget, newValue)
            accessibleName = newValue
        }
    }

    /// Whether a check item shows its check mark.
    public var isChecked: Bool = false {
        didSet { sesame_model_button_set_active(widget, isChecked ? 1 : 0) }
    }

    /// Chooses it, as a click does.
    public func click() { gtk_button_clicked(sesame_button(object)) }
}

/// A line between groups of menu items.
@MainActor
public final class Separator: Widget {
    public init() {
        super.init(new: gtk_separator_new(GTK_ORIENTATION_HORIZONTAL))
    }
}

/// One child shown at a time, by name.
@MainActor
public final class Stack: Widget {
    /// - Parameter sizedByVisibleChild: the stack asks only the child showing for its size, not
    ///   every child (GTK's default: the largest); laying out a window then skips the pages nobody sees.
    public init(crossfade: Bool = false, sizedByVisibleChild: Bool = false) {
        super.init(new: gtk_stack_new())
        if crossfade { gtk_stack_set_transition_type(stack, GTK_STACK_TRANSITION_TYPE_CROSSFADE) }
        if sizedByVisibleChild { gtk_stack_set_homogeneous(stack, 0) }
    }

    var stack: UnsafeMutablePointer<GtkStack> { sesame_stack(object) }

    /// Adds a child under `name`.
    public func add(_ child: Widget, name: String) {
        gtk_stack_add_named(stack, child.widget, name)
        keep(child)
    }

    /// Adds a child under `name` with a title (what a stack switcher shows), at `position`
    /// among the children (a switcher's tabs follow it) or last.
    public func add(_ child: Widget, name: String, title: String, position: Int? = nil) {
        gtk_stack_add_titled(stack, child.widget, name, title)
        if let position { sesame_stack_set_child_position(stack, child.widget, Int32(position)) }
        keep(child)
    }

    /// The name of the child showing.
    public var visibleChildName: String? {
        get { gtk_stack_get_visible_child_name(stack).map { String(cString: $0) } }
        set { if let newValue { gtk_stack_set_visible_child_name(stack, newValue) } }
    }

    /// Shows `child` (one of this stack's).
    public func show(_ child: Widget) { gtk_stack_set_visible_child(stack, child.widget) }

    /// Takes `child` out (its wrapper is let go; the widget goes with the last reference).
    public func remove(_ child: Widget) {
        // A child a destroyed window already took out is only forgotten.
        if gtk_widget_get_parent(child.widget) == widget { gtk_container_remove(sesame_container(object), child.widget) }
        forget(child)
    }

    /// Runs `action` when another child shows.
    public func onVisibleChildChanged(_ action: @escaping @MainActor () -> Void) { Signals.notify(self, "visible-child", action) }
}

/// The row of toggle buttons that switches a stack (the header bar's sample tabs).
@MainActor
public final class StackSwitcher: Widget {
    public init(_ stack: Stack) {
        super.init(new: gtk_stack_switcher_new())
        gtk_stack_switcher_set_stack(sesame_stack_switcher(object), stack.stack)
    }
}

/// A window's title bar with buttons.
@MainActor
public final class HeaderBar: Widget {
    public init(title: String) {
        super.init(new: gtk_header_bar_new())
        gtk_header_bar_set_show_close_button(bar, 1)
        gtk_header_bar_set_title(bar, title)
    }

    private var bar: UnsafeMutablePointer<GtkHeaderBar> { sesame_header_bar(object) }

    /// Shows `widget` in place of the title.
    public func setCustomTitle(_ widget: Widget) {
        gtk_header_bar_set_custom_title(bar, widget.widget)
        keep(widget)
    }

    /// Adds `widget` at the end (right in left-to-right languages).
    public func packEnd(_ widget: Widget) {
        gtk_header_bar_pack_end(bar, widget.widget)
        keep(widget)
    }
}

/// Two panes side by side with a handle between.
@MainActor
public final class Paned: Widget {
    /// Two panes; the end one takes its share of a resize when `resizeEnd`, and may be made
    /// narrower than it asks (its content cut off) when `shrinkEnd` (by default, as `resizeEnd`).
    public init(_ start: Widget, _ end: Widget, position: Int32, resizeEnd: Bool = false, shrinkEnd: Bool? = nil) {
        super.init(new: gtk_paned_new(GTK_ORIENTATION_HORIZONTAL))
        gtk_paned_pack1(sesame_paned(object), start.widget, 1, 0)
        gtk_paned_pack2(sesame_paned(object), end.widget, resizeEnd ? 1 : 0, (shrinkEnd ?? resizeEnd) ? 1 : 0)
        gtk_paned_set_position(sesame_paned(object), position)
        keep(start)
        keep(end)
    }

    /// Whether the panes are one above the other (a narrow window) rather than side by side.
    public var isVertical: Bool {
        get { gtk_orientable_get_orientation(sesame_orientable(object)) == GTK_ORIENTATION_VERTICAL }
        set { gtk_orientable_set_orientation(sesame_orientable(object), newValue ? GTK_ORIENTATION_VERTICAL : GTK_ORIENTATION_HORIZONTAL) }
    }

    /// Lets the panes' own sizes place the handle (GTK's `position-set` off): the end pane gets
    /// what it asks for when only the start pane resizes, at every size of the window, until
    /// the user drags the handle.
    public func unsetPosition() { gtk_paned_set_position(sesame_paned(object), -1) }

    /// Where the handle is: the start pane's width.
    public var position: Int {
        get { Int(gtk_paned_get_position(sesame_paned(object))) }
        set { gtk_paned_set_position(sesame_paned(object), gint(clamping: newValue)) }
    }
}

/// A scrolling view of one child (vertical scrolling only).
@MainActor
public final class ScrolledWindow: Widget {
    /// A scrolled view of `child`; with `horizontal`, it scrolls sideways too (a table whose
    /// columns are wider than the pane), so the child never asks the window for its width.
    public init(_ child: Widget, horizontal: Bool = false) {
        super.init(new: gtk_scrolled_window_new(nil, nil))
        gtk_scrolled_window_set_policy(
            sesame_scrolled_window(object), horizontal ? GTK_POLICY_AUTOMATIC : GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC)
        gtk_container_add(sesame_container(object), child.widget)
        keep(child)
    }

    /// The least height it shows of its content (nil: GTK's small default): what a pane under
    /// another asks for, so that a paned gives it that much.
    public var minimumContentHeight: Int? {
        get {
            let height = Int(gtk_scrolled_window_get_min_content_height(sesame_scrolled_window(object)))
            return height < 0 ? nil : height
        }
        set { gtk_scrolled_window_set_min_content_height(sesame_scrolled_window(object), gint(clamping: newValue ?? -1)) }
    }

    /// Asks for its content's natural height up to `maximum` points, and scrolls what is taller:
    /// content that grows (a long text shown) never grows the window past that.
    public func limitHeight(to maximum: Int) {
        gtk_scrolled_window_set_max_content_height(sesame_scrolled_window(object), gint(clamping: maximum))
        gtk_scrolled_window_set_propagate_natural_height(sesame_scrolled_window(object), 1)
    }

    /// The part of the content in view: its top and bottom, in the content's coordinates.
    public var visibleRange: ClosedRange<Double> {
        let vertical = sesame_adjustment(adjustment.object)
        let value = gtk_adjustment_get_value(vertical)
        return value...(value + gtk_adjustment_get_page_size(vertical))
    }

    /// Runs `action` each time the height of the part in view changes (the layout around it
    /// changed: something above or below grew or shrank, the window was resized).
    public func onVisibleHeightChanged(_ action: @escaping @MainActor () -> Void) {
        Signals.void(adjustment, "changed") { [weak self] in
            guard let self else { return }
            let height = gtk_adjustment_get_page_size(sesame_adjustment(self.adjustment.object))
            guard height != self.visibleHeight else { return }
            self.visibleHeight = height
            action()
        }
    }
    private var visibleHeight = -1.0

    private var adjustment: GObjectReference {
        if let kept = vertical { return kept }
        let made = GObjectReference(UnsafeMutableRawPointer(gtk_scrolled_window_get_vadjustment(sesame_scrolled_window(object))), .shared)
        vertical = made
        return made
    }
    private var vertical: GObjectReference?

    /// Keeps the newest (the bottom) in view as the content grows, while `following()` says so.
    public func followBottom(while following: @escaping @MainActor () -> Bool) {
        Signals.void(adjustment, "changed") { [weak self] in
            if following() { self?.scrollToBottom() }
        }
    }

    /// Shows the bottom of the content.
    public func scrollToBottom() {
        let vertical = sesame_adjustment(adjustment.object)
        gtk_adjustment_set_value(vertical, gtk_adjustment_get_upper(vertical) - gtk_adjustment_get_page_size(vertical))
    }

    /// Whether the bottom of the content is in view.
    public var isAtBottom: Bool {
        let vertical = sesame_adjustment(adjustment.object)
        return gtk_adjustment_get_value(vertical) + gtk_adjustment_get_page_size(vertical) >= gtk_adjustment_get_upper(vertical) - 1
    }

    /// Scrolls as little as needed to show the content from `top` to `bottom`.
    public func reveal(top: Double, bottom: Double) {
        let vertical = sesame_adjustment(adjustment.object)
        let value = gtk_adjustment_get_value(vertical)
        let page = gtk_adjustment_get_page_size(vertical)
        if top < value {
            gtk_adjustment_set_value(vertical, top)
        } else if bottom > value + page {
            gtk_adjustment_set_value(vertical, bottom - page)
        }
    }

    /// Runs `action` when the user scrolls to the bottom.
    public func onBottomReached(_ action: @escaping @MainActor () -> Void) {
        Signals.enumerated(self, "edge-reached") { position in
            if position == GTK_POS_BOTTOM.rawValue { action() }
        }
    }
}

/// Children in rows and columns.
@MainActor
public final class Grid: Widget {
    public init(rowSpacing: UInt32 = 6, columnSpacing: UInt32 = 12) {
        super.init(new: gtk_grid_new())
        gtk_grid_set_row_spacing(sesame_grid(object), rowSpacing)
        gtk_grid_set_column_spacing(sesame_grid(object), columnSpacing)
    }

    /// Places `child` at column `x`, row `y`, spanning `width` columns.
    public func attach(_ child: Widget, x: Int32, y: Int32, width: Int32 = 1) {
        gtk_grid_attach(sesame_grid(object), child.widget, x, y, width, 1)
        keep(child)
    }

    /// Removes (and destroys) every child.
    public func removeAll() {
        for child in children { gtk_container_remove(sesame_container(object), child.widget) }
        forgetChildren()
    }
}

/// A list of rows, each a widget.
@MainActor
public final class ListBox: Widget {
    public init() {
        super.init(new: gtk_list_box_new())
    }

    /// Adds a row showing `child`; `accessibleName` names the row GTK wraps it in (a screen
    /// reader reads the row, not its child).
    public func append(_ child: Widget, accessibleName: String? = nil) {
        gtk_container_add(sesame_container(object), child.widget)
        keep(child)
        if let accessibleName, let row = gtk_widget_get_parent(child.widget), let accessible = gtk_widget_get_accessible(row) {
            atk_object_set_name(accessible, accessibleName)
        }
    }

    /// The accessible names of the rows, in order.
    public var rowNames: [String] {
        var names: [String] = []
        var list = gtk_container_get_children(sesame_container(object))
        let head = list
        while let node = list {
            if let row = node.pointee.data, let accessible = gtk_widget_get_accessible(sesame_widget(row)),
                let name = atk_object_get_name(accessible)
            {
                names.append(String(cString: name))
            } else {
                names.append("")
            }
            list = node.pointee.next
        }
        g_list_free(head)
        return names
    }

    /// Removes every row.
    public func removeAll() {
        // GTK wraps each child in a row of its own: remove those rows.
        var list = gtk_container_get_children(sesame_container(object))
        let head = list
        while let node = list {
            if let row = node.pointee.data { gtk_container_remove(sesame_container(object), sesame_widget(row)) }
            list = node.pointee.next
        }
        g_list_free(head)
        forgetChildren()
    }
}

/// A spinning "busy" indicator.
@MainActor
public final class Spinner: Widget {
    public init() {
        super.init(new: gtk_spinner_new())
    }

    /// Whether it spins.
    public var isSpinning: Bool = false {
        didSet { isSpinning ? gtk_spinner_start(sesame_spinner(object)) : gtk_spinner_stop(sesame_spinner(object)) }
    }
}

/// Read-only, monospaced, wrapping text that grows at the end (a log).
@MainActor
public final class TextLog: Widget {
    public init() {
        super.init(new: gtk_text_view_new())
        gtk_text_view_set_editable(view, 0)
        gtk_text_view_set_monospace(view, 1)
        gtk_text_view_set_wrap_mode(view, GTK_WRAP_WORD_CHAR)
    }

    private var view: UnsafeMutablePointer<GtkTextView> { sesame_text_view(object) }

    /// Appends `text` at the end; `follow` scrolls to it.
    public func append(_ text: String, follow: Bool = false) {
        let buffer = gtk_text_view_get_buffer(view)
        var end = GtkTextIter()
        gtk_text_buffer_get_end_iter(buffer, &end)
        gtk_text_buffer_insert(buffer, &end, text, -1)
        guard follow else { return }
        gtk_text_buffer_get_end_iter(buffer, &end)
        gtk_text_view_scroll_to_iter(view, &end, 0, 0, 0, 1)
    }

    /// Everything written.
    public var text: String {
        let buffer = gtk_text_view_get_buffer(view)
        var start = GtkTextIter()
        var end = GtkTextIter()
        gtk_text_buffer_get_bounds(buffer, &start, &end)
        guard let characters = gtk_text_buffer_get_text(buffer, &start, &end, 0) else { return "" }
        defer { g_free(characters) }
        return String(cString: characters)
    }
}

/// A table of text rows over a list store: only the visible rows are drawn, however many there
/// are.
@MainActor
public final class TextTable: Widget {
    private let store: GObjectReference
    private let columnCount: Int

    /// A table with one text column per title; the first is bold.
    public init(columns titles: [String]) {
        // At most three columns (rows are appended through a three-string call), and a fourth,
        // hidden: each row's texts whole, its tooltip (a cell too narrow ends in "…").
        var types = [GType](repeating: sesame_type_string(), count: 4)
        let store = gtk_list_store_newv(Int32(types.count), &types)!
        self.store = GObjectReference(store, .new)
        columnCount = min(titles.count, 3)
        super.init(new: gtk_tree_view_new_with_model(sesame_tree_model(store)))
        // Fixed column widths and one row height: the view measures no row it does not draw,
        // so taking rows costs the same with 50 of them or 10,000 (GTK's fixed-height mode,
        // which needs every column fixed).
        for (index, title) in titles.prefix(3).enumerated() {
            let column = sesame_text_column_new(title, sesame_text_renderer_new(index == 0 ? 1 : 0), Int32(index))
            gtk_tree_view_column_set_sizing(column, GTK_TREE_VIEW_COLUMN_FIXED)
            gtk_tree_view_column_set_fixed_width(column, index == 0 ? 180 : 160)
            gtk_tree_view_column_set_resizable(column, 1)
            gtk_tree_view_column_set_expand(column, 1)
            gtk_tree_view_append_column(tree, column)
        }
        gtk_tree_view_set_fixed_height_mode(tree, 1)
        gtk_tree_view_set_enable_search(tree, 0)
        gtk_tree_view_set_tooltip_column(tree, 3)
    }

    private var tree: UnsafeMutablePointer<GtkTreeView> { sesame_tree_view(object) }
    private var listStore: UnsafeMutablePointer<GtkListStore> { store.object.assumingMemoryBound(to: GtkListStore.self) }

    /// Appends rows (one text per column; missing ones are empty).
    public func append(_ rows: [[String]]) {
        for row in rows {
            let cells = (0..<3).map { $0 < row.count && $0 < columnCount ? row[$0] : "" }
            sesame_string_list_store_append(listStore, cells[0], cells[1], cells[2])
        }
    }

    /// Removes every row.
    public func removeAll() { gtk_list_store_clear(listStore) }

    /// Each column's width on screen, in pixels.
    public var columnWidths: [Int] {
        (0..<columnCount).map { index in gtk_tree_view_get_column(tree, Int32(index)).map { Int(gtk_tree_view_column_get_width($0)) } ?? 0 }
    }

    /// The width of the table's part that is on screen (its scrolled window's view).
    public var visibleWidth: Int {
        var rectangle = GdkRectangle()
        gtk_tree_view_get_visible_rect(tree, &rectangle)
        return Int(rectangle.width)
    }

    /// How many rows there are.
    public var rowCount: Int { Int(gtk_tree_model_iter_n_children(sesame_tree_model(listStore), nil)) }

    /// The text of a cell.
    public func text(row: Int, column: Int) -> String? {
        var iter = GtkTreeIter()
        guard gtk_tree_model_iter_nth_child(sesame_tree_model(listStore), &iter, nil, Int32(row)) != 0 else { return nil }
        var value: UnsafeMutablePointer<gchar>?
        sesame_tree_model_get_string(sesame_tree_model(listStore), &iter, Int32(column), &value)
        defer { g_free(value) }
        return value.map { String(cString: $0) }
    }

    /// The selected row.
    public var selectedRow: Int? {
        get {
            var model: OpaquePointer?
            var iter = GtkTreeIter()
            guard gtk_tree_selection_get_selected(gtk_tree_view_get_selection(tree), &model, &iter) != 0,
                let path = gtk_tree_model_get_path(model, &iter)
            else { return nil }
            defer { gtk_tree_path_free(path) }
            return gtk_tree_path_get_indices(path).map { Int($0.pointee) }
        }
        set {
            let selection = gtk_tree_view_get_selection(tree)
            guard let newValue else {
                gtk_tree_selection_unselect_all(selection)
                return
            }
            let path = sesame_tree_path_new_from_index(Int32(newValue))
            gtk_tree_selection_select_path(selection, path)
            gtk_tree_path_free(path)
        }
    }

    /// Runs `action` when the selection changes.
    public func onSelectionChanged(_ action: @escaping @MainActor () -> Void) {
        let selection = GObjectReference(gtk_tree_view_get_selection(tree), .shared)
        Signals.void(selection, "changed", action)
        selectionOwner = selection
    }

    private var selectionOwner: GObjectReference?
}

/// A named icon of the theme, at a size in pixels.
@MainActor
public final class Image: Widget {
    /// The theme's icon `iconName` (a symbolic one draws in the text's colour) at `pixels`.
    public init(iconName: String, pixels: Int32) {
        super.init(shared: gtk_image_new_from_icon_name(iconName, GTK_ICON_SIZE_DIALOG)!)
        gtk_image_set_pixel_size(sesame_image(object), pixels)
    }

    /// Shows another of the theme's icons, at the same size.
    public func setIcon(_ iconName: String) {
        let pixels = gtk_image_get_pixel_size(sesame_image(object))
        gtk_image_set_from_icon_name(sesame_image(object), iconName, GTK_ICON_SIZE_DIALOG)
        gtk_image_set_pixel_size(sesame_image(object), pixels)
    }
}

/// A top-level window.
@MainActor
public final class Window: Widget {
    /// A window of the application (or a plain one without).
    public init(application: Application?, title: String, width: Int32, height: Int32) {
        let pointer = application.map { gtk_application_window_new(sesame_application($0.object)) } ?? gtk_window_new(GTK_WINDOW_TOPLEVEL)
        super.init(shared: pointer!)
        gtk_window_set_default_size(window, width, height)
        gtk_window_set_title(window, title)
    }

    var window: UnsafeMutablePointer<GtkWindow> { sesame_window(object) }

    /// Brings the window to the front (`gtk_window_present`): a sign-in in the browser ended.
    public func present() { gtk_window_present(window) }

    /// Holds the window's frames: nothing is laid out or painted (GDK's frame clock is frozen)
    /// until ``resumeFrames()``, which paints everything changed meanwhile in one frame. Calls
    /// nest; a window not on screen has nothing to hold.
    func holdFrames() {
        guard let surface = gtk_widget_get_window(widget) else { return }
        heldSurfaces.append(GObjectReference(UnsafeMutableRawPointer(surface), .shared))
        sesame_window_freeze_frames(surface)
    }

    /// Lets go of the latest ``holdFrames()``.
    func resumeFrames() {
        guard let held = heldSurfaces.popLast() else { return }
        sesame_window_thaw_frames(OpaquePointer(held.object))
    }

    private var heldSurfaces: [GObjectReference] = []

    /// Puts `bar` in the title bar.
    public func setTitlebar(_ bar: Widget) {
        gtk_window_set_titlebar(window, bar.widget)
        keep(bar)
    }

    /// Sets the one child.
    public func setContent(_ child: Widget) {
        gtk_container_add(sesame_container(object), child.widget)
        keep(child)
    }

    /// Runs `action` when the user closes the window; it closes unless `action` returns true.
    public func onCloseRequest(_ action: @escaping @MainActor () -> Bool) { Signals.event(self, "delete-event", action) }

    /// Closes the window: destroys it and every widget in it.
    public func destroy() { gtk_widget_destroy(widget) }

    /// Closes the window as its close button does (the close request is asked first).
    public func close() { gtk_window_close(window) }

    /// Runs `action` for every key pressed while the window has the focus, before the focused
    /// widget sees it; `action` returns true when it took the key (a shortcut).
    public func onKeyPress(_ action: @escaping @MainActor (KeyPress) -> Bool) { Signals.keyPress(self, action) }

    /// The window's size (without its decorations).
    public var size: (width: Int, height: Int) {
        var width: gint = 0
        var height: gint = 0
        gtk_window_get_size(window, &width, &height)
        return (Int(width), Int(height))
    }

    /// Sets the size the window opens with (or has).
    public func resize(width: Int, height: Int) {
        gtk_window_resize(window, gint(clamping: max(1, width)), gint(clamping: max(1, height)))
    }

    /// The part of the screen a window may use (its monitor's work area: the panels and docks
    /// left out), in the screen's coordinates: the window's monitor's, or before the window is on
    /// screen the primary (else the first) monitor's.
    public var workArea: (x: Int, y: Int, width: Int, height: Int)? {
        guard let display = gtk_widget_get_display(widget) else { return nil }
        let shown = gtk_widget_get_window(widget).flatMap { gdk_display_get_monitor_at_window(display, $0) }
        guard let monitor = shown ?? gdk_display_get_primary_monitor(display) ?? gdk_display_get_monitor(display, 0) else { return nil }
        var area = GdkRectangle()
        gdk_monitor_get_workarea(monitor, &area)
        return (Int(area.x), Int(area.y), Int(area.width), Int(area.height))
    }

    /// Where the window is on the screen and its size, its decorations included (nil while it is
    /// not on screen).
    public var frameOnScreen: (x: Int, y: Int, width: Int, height: Int)? {
        guard gtk_widget_get_mapped(widget) != 0, let surface = gtk_widget_get_window(widget) else { return nil }
        var area = GdkRectangle()
        gdk_window_get_frame_extents(surface, &area)
        return (Int(area.x), Int(area.y), Int(area.width), Int(area.height))
    }

    /// Whether the window is maximised.
    public var isMaximized: Bool { gtk_window_is_maximized(window) != 0 }

    /// Maximises the window.
    public func maximize() { gtk_window_maximize(window) }

    /// Makes the window a dialog of `parent` (kept above it, centred on it), or of no window.
    public func setTransient(for parent: Window?) {
        gtk_window_set_transient_for(window, parent?.window)
        gtk_window_set_position(window, parent == nil ? GTK_WIN_POS_CENTER : GTK_WIN_POS_CENTER_ON_PARENT)
        gtk_window_set_type_hint(window, GDK_WINDOW_TYPE_HINT_DIALOG)
    }

    /// Whether the window takes every input of the application while it shows (a question that
    /// must be answered before the window below it goes on).
    public var isModal: Bool {
        get { gtk_window_get_modal(window) != 0 }
        set { gtk_window_set_modal(window, newValue ? 1 : 0) }
    }

    /// Whether the user may resize the window.
    public var isResizable: Bool {
        get { gtk_window_get_resizable(window) != 0 }
        set { gtk_window_set_resizable(window, newValue ? 1 : 0) }
    }

    /// Whether the window has the keyboard (GTK's `is-active`: the toplevel the user types into).
    public var isActive: Bool { gtk_window_is_active(window) != 0 }

    /// Runs `action` whenever the window gains or loses the keyboard (``isActive``).
    public func onActiveChanged(_ action: @escaping @MainActor () -> Void) { Signals.notify(self, "is-active", action) }

    /// Runs `action` once the window is on screen (mapped), and again each time it is shown.
    public func onMapped(_ action: @escaping @MainActor () -> Void) { Signals.void(self, "map", action) }

    /// The widget with the keyboard focus in the window, if Sesame holds it.
    public var focusedWidget: Widget? {
        gtk_window_get_focus(window).flatMap { GObjectReference.owner(of: UnsafeMutableRawPointer($0)) as? Widget }
    }
}
