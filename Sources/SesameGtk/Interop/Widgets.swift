import CGtkWebKit

/// A GTK widget pointer. Only this folder turns GObject pointers from one type into another.
typealias Widget = UnsafeMutablePointer<GtkWidget>

@MainActor
enum Widgets {
    static func label(_ text: String, wrap: Bool = false, xalign: Float = 0) -> Widget {
        let label = gtk_label_new(text)!
        gtk_label_set_xalign(sesame_label(label), xalign)
        if wrap { gtk_label_set_line_wrap(sesame_label(label), 1) }
        gtk_label_set_selectable(sesame_label(label), 0)
        return label
    }

    static func setText(_ label: Widget, _ text: String) { gtk_label_set_text(sesame_label(label), text) }

    static func setMarkup(_ label: Widget, _ markup: String) { gtk_label_set_markup(sesame_label(label), markup) }

    static func button(_ title: String, accessibleName: String? = nil, _ action: @escaping @MainActor () -> Void) -> Widget {
        let button = gtk_button_new_with_label(title)!
        setAccessibleName(button, accessibleName ?? title)
        Signals.onVoid(button, "clicked", action)
        return button
    }

    static func box(vertical: Bool, spacing: Int32 = 6, _ children: [Widget] = []) -> Widget {
        let box = gtk_box_new(vertical ? GTK_ORIENTATION_VERTICAL : GTK_ORIENTATION_HORIZONTAL, spacing)!
        for child in children { pack(box, child) }
        return box
    }

    static func pack(_ box: Widget, _ child: Widget, expand: Bool = false) {
        gtk_box_pack_start(sesame_box(box), child, expand ? 1 : 0, expand ? 1 : 0, 0)
    }

    static func scrolled(_ child: Widget) -> Widget {
        let scrolled = gtk_scrolled_window_new(nil, nil)!
        gtk_scrolled_window_set_policy(sesame_scrolled_window(scrolled), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC)
        gtk_container_add(sesame_container(scrolled), child)
        return scrolled
    }

    static func setVisible(_ widget: Widget, _ visible: Bool) {
        visible ? gtk_widget_show(widget) : gtk_widget_hide(widget)
    }

    static func isVisible(_ widget: Widget) -> Bool { gtk_widget_get_visible(widget) != 0 }

    static func setAccessibleName(_ widget: Widget, _ name: String) {
        if let accessible = sesame_accessible(widget) { atk_object_set_name(accessible, name) }
    }

    static func margin(_ widget: Widget, _ value: Int32) {
        gtk_widget_set_margin_start(widget, value)
        gtk_widget_set_margin_end(widget, value)
        gtk_widget_set_margin_top(widget, value)
        gtk_widget_set_margin_bottom(widget, value)
    }

    static func removeChildren(_ container: Widget) {
        guard let children = gtk_container_get_children(sesame_container(container)) else { return }
        var node: UnsafeMutablePointer<GList>? = children
        while let current = node {
            if let child = current.pointee.data { gtk_widget_destroy(sesame_widget(child)) }
            node = current.pointee.next
        }
        g_list_free(children)
    }
}
