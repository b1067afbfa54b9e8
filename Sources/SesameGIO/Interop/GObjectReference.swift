import CGio

/// Owns one reference to a GObject for as long as the Swift object lives, and every signal
/// handler connected through it: when the owner goes, its handlers are disconnected (so no
/// closure runs for an owner that is gone) and its reference is dropped.
///
/// This file is the only place that refs and unrefs (`check-layering.sh` holds it to that).
/// Besides the owners, two short-lived cases come through here, so that a reference count is
/// never changed where the reader cannot see who gives it back: ``withNewObject(_:_:)`` for an
/// object a constructor returns that is used within one call and held by no Swift object (a
/// Pango layout, a pixbuf, a website data manager a web context takes its own reference to), and
/// ``referenceForC(_:)`` for a reference a C structure drops itself (a `GdkEvent`'s window,
/// which `gdk_event_free` unrefs).
@MainActor
open class GObjectReference {
    /// The object. Only the platform modules' Interop/ folders see it.
    package let object: UnsafeMutableRawPointer
    private var handlerIDs: [gulong] = []

    /// How the Swift side comes to hold the object.
    package enum Ownership {
        /// A new object from a `…_new` constructor: its floating reference (widgets) is sunk, or
        /// its full reference (list stores, web contexts) taken over.
        case new
        /// An object someone else owns (a toplevel window GTK keeps): one more reference.
        case shared
    }

    package init(_ object: UnsafeMutableRawPointer, _ ownership: Ownership) {
        switch ownership {
        case .new:
            if g_object_is_floating(object) != 0 { g_object_ref_sink(object) }
        case .shared:
            g_object_ref(object)
        }
        self.object = object
        g_object_set_qdata(sesame_object(object), Self.ownerQuark, Unmanaged.passUnretained(self).toOpaque())
    }

    isolated deinit {
        disconnectAll()
        g_object_set_qdata(sesame_object(object), Self.ownerQuark, nil)
        g_object_unref(object)
    }

    /// Disconnects every handler connected through this owner.
    public func disconnectAll() {
        for id in handlerIDs where g_signal_handler_is_connected(object, id) != 0 {
            g_signal_handler_disconnect(object, id)
        }
        handlerIDs = []
    }

    /// Connects a trampoline with its retained box; GLib releases the box when the handler is
    /// disconnected or the object finalized.
    package func connect(_ signal: String, _ trampoline: GCallback, _ box: AnyObject) {
        let data = Unmanaged.passRetained(box).toOpaque()
        handlerIDs.append(sesame_signal_connect(object, signal, trampoline, data, Signals.releaseBox))
    }

    /// The Swift owner of a GObject, if one holds it.
    package static func owner(of object: UnsafeMutableRawPointer) -> GObjectReference? {
        g_object_get_qdata(sesame_object(object), ownerQuark).map { Unmanaged<GObjectReference>.fromOpaque($0).takeUnretainedValue() }
    }

    private static let ownerQuark = g_quark_from_static_string("sesame-swift-owner")
}

extension GObjectReference {
    /// Runs `body` with a new object — one a constructor returned with a full (not floating)
    /// reference — and drops that reference when `body` returns or throws: for an object used
    /// within one call and held by no Swift object.
    package static func withNewObject<Result>(_ object: OpaquePointer, _ body: (OpaquePointer) throws -> Result) rethrows -> Result {
        defer { g_object_unref(UnsafeMutableRawPointer(object)) }
        return try body(object)
    }

    /// ``withNewObject(_:_:)`` for an object whose C type Swift sees (not an opaque pointer).
    package static func withNewObject<Object, Result>(
        _ object: UnsafeMutablePointer<Object>, _ body: (UnsafeMutablePointer<Object>) throws -> Result
    ) rethrows -> Result {
        defer { g_object_unref(object) }
        return try body(object)
    }

    /// One more reference to `object`, handed to a C structure that drops it when it is freed
    /// (`GdkEvent.key.window`, unreffed by `gdk_event_free`).
    package static func referenceForC(_ object: OpaquePointer) -> OpaquePointer {
        OpaquePointer(g_object_ref(UnsafeMutableRawPointer(object)))
    }
}
