import CGtkWebKit
import SesameGIO

/// A key pressed, as a shortcut reads it: the key (GDK's key value, e.g. `KeyPress.f5`) and the
/// modifiers held (Caps Lock, Num Lock and the like ignored).
public struct KeyPress: Sendable, Hashable {
    /// GDK's key value (`GDK_KEY_…`).
    public var key: UInt32
    /// Control was held.
    public var control: Bool
    /// Shift was held.
    public var shift: Bool
    /// Alt was held.
    public var alt: Bool

    /// A key press; see each property.
    public init(key: UInt32, control: Bool = false, shift: Bool = false, alt: Bool = false) {
        self.key = key
        self.control = control
        self.shift = shift
        self.alt = alt
    }

    /// The key of a letter, digit or sign (`"q"`, `"?"`): its Unicode value is GDK's key value
    /// for the printable ASCII range.
    public init?(character: Character, control: Bool = false, shift: Bool = false, alt: Bool = false) {
        guard let scalar = character.unicodeScalars.first, character.unicodeScalars.count == 1 else { return nil }
        self.init(key: gdk_unicode_to_keyval(scalar.value), control: control, shift: shift, alt: alt)
    }

    /// F5.
    public static let f5 = UInt32(GDK_KEY_F5)
    /// F8.
    public static let f8 = UInt32(GDK_KEY_F8)
    /// F9.
    public static let f9 = UInt32(GDK_KEY_F9)
    /// F10.
    public static let f10 = UInt32(GDK_KEY_F10)
    /// Return (Enter).
    public static let enter = UInt32(GDK_KEY_Return)
    /// Escape.
    public static let escape = UInt32(GDK_KEY_Escape)
    /// Tab.
    public static let tab = UInt32(GDK_KEY_Tab)

    /// The key's value in lower case (`Q` and `q` are one shortcut; Shift is its own field).
    var normalized: KeyPress {
        var copy = self
        copy.key = gdk_keyval_to_lower(key)
        return copy
    }
}

extension Signals {
    /// `gboolean handler(GtkWidget*, GdkEventKey*, gpointer)`: key-press-event, with the key and
    /// its modifiers.
    static func keyPress(_ owner: GObjectReference, _ handler: @escaping @MainActor (KeyPress) -> Bool) {
        let trampoline: @convention(c) (gpointer?, UnsafeMutablePointer<GdkEvent>?, gpointer?) -> gboolean = { _, event, data in
            let box: SignalBox<@MainActor (KeyPress) -> Bool> = Signals.box(data)
            var keyval: guint = 0
            var state = GdkModifierType(rawValue: 0)
            guard let event, gdk_event_get_keyval(event, &keyval) != 0 else { return 0 }
            _ = gdk_event_get_state(event, &state)
            let press = KeyPress(
                key: keyval, control: state.rawValue & GDK_CONTROL_MASK.rawValue != 0, shift: state.rawValue & GDK_SHIFT_MASK.rawValue != 0,
                alt: state.rawValue & GDK_MOD1_MASK.rawValue != 0)
            return MainActor.assumeIsolated { box.handler(press) } ? 1 : 0
        }
        owner.connect("key-press-event", unsafeBitCast(trampoline, to: GCallback.self), SignalBox(handler))
    }
}

extension Widget {
    /// Presses and releases `press` as the keyboard does, for tests and automation: the key
    /// events are handed to GTK's event dispatch for this widget's window, as the display
    /// server's are once read (the window's shortcuts first, then its focus widget). The display
    /// server's own path needs a window manager to give the window the focus.
    public func sendKey(_ press: KeyPress) {
        guard let toplevel = gtk_widget_get_toplevel(widget), let window = gtk_widget_get_window(toplevel),
            let display = gdk_window_get_display(window)
        else { return }
        var state: UInt32 = 0
        if press.control { state |= GDK_CONTROL_MASK.rawValue }
        if press.shift { state |= GDK_SHIFT_MASK.rawValue }
        if press.alt { state |= GDK_MOD1_MASK.rawValue }
        var keys: UnsafeMutablePointer<GdkKeymapKey>?
        var count: gint = 0
        let found = gdk_keymap_get_entries_for_keyval(gdk_keymap_get_for_display(display), press.key, &keys, &count) != 0
        let keycode = found && count > 0 ? keys?.pointee.keycode ?? 0 : 0
        g_free(keys)
        for type in [GDK_KEY_PRESS, GDK_KEY_RELEASE] {
            guard let event = gdk_event_new(type) else { continue }
            defer { gdk_event_free(event) }
            event.pointee.key.window = GObjectReference.referenceForC(window)
            event.pointee.key.time = guint32(GDK_CURRENT_TIME)
            event.pointee.key.keyval = press.key
            event.pointee.key.state = state
            event.pointee.key.hardware_keycode = guint16(truncatingIfNeeded: keycode)
            if let keyboard = gdk_seat_get_keyboard(gdk_display_get_default_seat(display)) { gdk_event_set_device(event, keyboard) }
            gtk_main_do_event(event)
        }
    }
}
