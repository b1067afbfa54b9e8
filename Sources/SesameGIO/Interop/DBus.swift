import CGio
import Dispatch
import FoundationEssentials

/// A D-Bus value as Sesame's service and its clients use them: no C type crosses this file.
public indirect enum DBusValue: Sendable, Equatable {
    /// `s`
    case string(String)
    /// `b`
    case bool(Bool)
    /// `x`
    case int64(Int64)
    /// `u`
    case uint32(UInt32)
    /// `as`
    case strings([String])
    /// `a{sv}`: a dictionary of strings to variants.
    case dictionary([(String, DBusValue)])
    /// `aa{sv}`: a list of dictionaries.
    case dictionaries([[(String, DBusValue)]])

    public static func == (lhs: DBusValue, rhs: DBusValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.int64(let a), .int64(let b)): a == b
        case (.uint32(let a), .uint32(let b)): a == b
        case (.strings(let a), .strings(let b)): a == b
        case (.dictionary(let a), .dictionary(let b)): a.map(\.0) == b.map(\.0) && a.map(\.1) == b.map(\.1)
        case (.dictionaries(let a), .dictionaries(let b)):
            a.count == b.count && zip(a, b).allSatisfy { DBusValue.dictionary($0) == DBusValue.dictionary($1) }
        default: false
        }
    }

    /// The string, if this is one.
    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, if this is a 64-bit one.
    public var int64: Int64? {
        if case .int64(let value) = self { return value }
        return nil
    }

    /// The strings, if this is a string array.
    public var strings: [String]? {
        if case .strings(let value) = self { return value }
        return nil
    }

    /// A new floating GVariant.
    fileprivate var variant: OpaquePointer {
        switch self {
        case .string(let value): return g_variant_new_string(value)
        case .bool(let value): return g_variant_new_boolean(value ? 1 : 0)
        case .int64(let value): return g_variant_new_int64(gint64(value))
        case .uint32(let value): return g_variant_new_uint32(value)
        case .strings(let values):
            let children: [OpaquePointer?] = values.map { g_variant_new_string($0) }
            return g_variant_new_array(g_variant_type_checked_("s"), children, gsize(children.count))
        case .dictionary(let entries):
            return Self.makeDictionary(entries)
        case .dictionaries(let list):
            let children: [OpaquePointer?] = list.map { Self.makeDictionary($0) }
            return g_variant_new_array(g_variant_type_checked_("a{sv}"), children, gsize(children.count))
        }
    }

    private static func makeDictionary(_ entries: [(String, DBusValue)]) -> OpaquePointer {
        let children: [OpaquePointer?] = entries.map { key, value in
            g_variant_new_dict_entry(g_variant_new_string(key), g_variant_new_variant(value.variant))
        }
        return g_variant_new_array(g_variant_type_checked_("{sv}"), children, gsize(children.count))
    }

    /// A tuple of `values` (a method's arguments or answer), floating.
    fileprivate static func tuple(_ values: [DBusValue]) -> OpaquePointer {
        let children: [OpaquePointer?] = values.map { $0.variant }
        return g_variant_new_tuple(children, gsize(children.count))
    }

    /// The value of a GVariant of the types above (others: nil).
    fileprivate init?(_ variant: OpaquePointer) {
        let type = String(cString: g_variant_get_type_string(variant))
        switch type {
        case "s", "o": self = .string(String(cString: g_variant_get_string(variant, nil)))
        case "b": self = .bool(g_variant_get_boolean(variant) != 0)
        case "x": self = .int64(Int64(g_variant_get_int64(variant)))
        case "u": self = .uint32(g_variant_get_uint32(variant))
        case "as": self = .strings(Self.children(of: variant).compactMap { DBusValue($0)?.string })
        case "a{sv}": self = .dictionary(Self.entries(of: variant))
        case "aa{sv}": self = .dictionaries(Self.children(of: variant).map(Self.entries(of:)))
        case "v":
            guard let inner = g_variant_get_variant(variant) else { return nil }
            defer { g_variant_unref(inner) }
            guard let value = DBusValue(inner) else { return nil }
            self = value
        default: return nil
        }
    }

    /// The children of a container, each read while it is alive.
    fileprivate static func children(of variant: OpaquePointer) -> [OpaquePointer] {
        (0..<g_variant_n_children(variant)).compactMap { index in
            guard let child = g_variant_get_child_value(variant, index) else { return nil }
            // The parent keeps its children alive; the child reference is dropped at once.
            g_variant_unref(child)
            return child
        }
    }

    private static func entries(of variant: OpaquePointer) -> [(String, DBusValue)] {
        children(of: variant).compactMap { entry in
            let pair = children(of: entry)
            guard pair.count == 2, let key = DBusValue(pair[0])?.string, let value = DBusValue(pair[1]) else { return nil }
            return (key, value)
        }
    }
}

/// A D-Bus error: its name (`org.sesame.Accounts1.Error.AccessDenied`,
/// `org.freedesktop.DBus.Error.ServiceUnknown`, …) and message.
public struct DBusError: Error, Sendable, CustomStringConvertible {
    /// The error's D-Bus name; empty when the call failed before the bus answered.
    public let name: String
    /// What the other side (or GLib) said.
    public let message: String

    /// An error from GLib's `GError` (the remote name taken out of the message).
    init(_ error: UnsafeMutablePointer<GError>?) {
        guard let error else {
            name = ""
            message = "unknown error"
            return
        }
        if let remote = g_dbus_error_get_remote_error(error) {
            name = String(cString: remote)
            g_free(remote)
            g_dbus_error_strip_remote_error(error)
        } else {
            name = ""
        }
        message = error.pointee.message.map { String(cString: $0) } ?? ""
    }

    public var description: String { name.isEmpty ? message : "\(name): \(message)" }

    /// An error of this side's own making.
    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    /// The service is not on the bus (and was not started).
    public var isNoService: Bool {
        ["org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner"].contains(name)
    }
}

/// A synchronous D-Bus client on the session bus, for the command line (`sesame token`,
/// `git-credential-sesame`).
@MainActor
public final class DBusClient: GObjectReference {
    private var connection: OpaquePointer { OpaquePointer(object) }

    /// The session bus, or nil when there is none (no `DBUS_SESSION_BUS_ADDRESS`, or it does not answer).
    public init?() {
        var error: UnsafeMutablePointer<GError>?
        guard let connection = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else {
            g_error_free(error)
            return nil
        }
        super.init(UnsafeMutableRawPointer(connection), .new)
    }

    /// Calls `method` and returns its answer's values.
    /// - Parameters:
    ///   - startService: whether D-Bus activation may start the service when nobody owns the name.
    ///   - timeout: how long to wait for the answer (nil: as long as it takes, for a question the
    ///     user answers).
    public func call(
        _ busName: String, path: String, interface: String, method: String, arguments: [DBusValue], startService: Bool,
        timeout: Duration?
    ) throws(DBusError) -> [DBusValue] {
        var error: UnsafeMutablePointer<GError>?
        let milliseconds = timeout.map { Int32(clamping: $0.components.seconds * 1000) } ?? Int32.max
        let flags = startService ? G_DBUS_CALL_FLAGS_NONE : G_DBUS_CALL_FLAGS_NO_AUTO_START
        guard
            let reply = g_dbus_connection_call_sync(
                connection, busName, path, interface, method, DBusValue.tuple(arguments), nil, flags, milliseconds, nil, &error)
        else {
            let failure = DBusError(error)
            g_error_free(error)
            throw failure
        }
        defer { g_variant_unref(reply) }
        return DBusValue.children(of: reply).compactMap(DBusValue.init)
    }

    /// Calls `method` as ``call(_:path:interface:method:arguments:startService:timeout:)`` does,
    /// and meanwhile hands each `signal` the service sends on `interface` to `onSignal`. Once one
    /// came, the call waits as long as it takes (the service said it is asking the user);
    /// before, at most `timeout`.
    public func call(
        _ busName: String, path: String, interface: String, method: String, arguments: [DBusValue], startService: Bool,
        timeout: Duration, signal: String, onSignal: @escaping @MainActor ([DBusValue]) -> Void
    ) throws(DBusError) -> [DBusValue] {
        let context = g_main_context_new()
        g_main_context_push_thread_default(context)
        defer {
            g_main_context_pop_thread_default(context)
            g_main_context_unref(context)
        }
        let pending = PendingCall(onSignal: onSignal)
        let box = Unmanaged.passRetained(pending)
        defer { box.release() }
        let signalled: GDBusSignalCallback = { _, _, _, _, _, parameters, data in
            guard let data else { return }
            let pending = Unmanaged<PendingCall>.fromOpaque(data).takeUnretainedValue()
            let values = parameters.map { DBusValue.children(of: $0).compactMap(DBusValue.init) } ?? []
            MainActor.assumeIsolated {
                pending.signalled = true
                pending.onSignal(values)
            }
        }
        let subscription = g_dbus_connection_signal_subscribe(
            connection, busName, interface, signal, path, nil, G_DBUS_SIGNAL_FLAGS_NONE, signalled, box.toOpaque(), nil)
        defer { g_dbus_connection_signal_unsubscribe(connection, subscription) }
        // Holds one more retain of the box, released here: the answer always comes (a cancelled
        // call answers too).
        let answered: GAsyncReadyCallback = { source, result, data in
            guard let data else { return }
            let pending = Unmanaged<PendingCall>.fromOpaque(data).takeRetainedValue()
            var error: UnsafeMutablePointer<GError>?
            let reply = g_dbus_connection_call_finish(OpaquePointer(source), result, &error)
            MainActor.assumeIsolated {
                if let reply {
                    pending.values = DBusValue.children(of: reply).compactMap(DBusValue.init)
                    g_variant_unref(reply)
                } else {
                    pending.error = DBusError(error)
                    g_error_free(error)
                }
                pending.done = true
            }
        }
        // Cancelled when the service does not say within `timeout` that it asks the user.
        GObjectReference.withNewObject(g_cancellable_new()) { cancellable in
            let flags = startService ? G_DBUS_CALL_FLAGS_NONE : G_DBUS_CALL_FLAGS_NO_AUTO_START
            _ = box.retain()
            g_dbus_connection_call(
                connection, busName, path, interface, method, DBusValue.tuple(arguments), nil, flags, Int32.max, cancellable, answered,
                box.toOpaque())
            pending.cancellable = cancellable
            defer { pending.cancellable = nil }
            let deadline = g_timeout_source_new(UInt32(clamping: timeout.components.seconds * 1000))
            g_source_set_callback(
                deadline,
                { data in
                    guard let data else { return 0 }
                    let pending = Unmanaged<PendingCall>.fromOpaque(data).takeUnretainedValue()
                    MainActor.assumeIsolated {
                        // Once the service said it asks the user, the call waits for the answer.
                        guard !pending.signalled, !pending.done, let cancellable = pending.cancellable else { return }
                        pending.timedOut = true
                        g_cancellable_cancel(cancellable)
                    }
                    return 0
                }, box.toOpaque(), nil)
            g_source_attach(deadline, context)
            defer {
                g_source_destroy(deadline)
                g_source_unref(deadline)
            }
            while !pending.done { g_main_context_iteration(context, 1) }
        }
        if pending.timedOut, pending.values == nil {
            throw DBusError(name: "org.freedesktop.DBus.Error.Timeout", message: "no answer within \(timeout.components.seconds) s")
        }
        if let error = pending.error { throw error }
        return pending.values ?? []
    }
}

/// What one ``DBusClient`` call with a signal watch has seen so far.
@MainActor
private final class PendingCall {
    let onSignal: @MainActor ([DBusValue]) -> Void
    var signalled = false
    var done = false
    var timedOut = false
    /// Cancels the call when the deadline passes first.
    var cancellable: UnsafeMutablePointer<GCancellable>?
    var values: [DBusValue]?
    var error: DBusError?

    init(onSignal: @escaping @MainActor ([DBusValue]) -> Void) { self.onSignal = onSignal }
}

/// One method call to a ``DBusService`` object: its name, its arguments (already checked against
/// the introspection XML by GDBus), who sent it, and one answer — a value or an error — given
/// exactly once; a call dropped unanswered answers `org.freedesktop.DBus.Error.Failed`.
@MainActor
public final class DBusMethodCall {
    /// The method's name.
    public let method: String
    /// The arguments, in order.
    public let arguments: [DBusValue]
    /// The caller's unique bus name (`:1.42`).
    public let sender: String
    private var invocation: OpaquePointer?
    private let service: DBusService

    fileprivate init(method: String, arguments: [DBusValue], sender: String, invocation: OpaquePointer, service: DBusService) {
        self.method = method
        self.arguments = arguments
        self.sender = sender
        self.invocation = invocation
        self.service = service
    }

    /// Who the caller's connection is, as the bus daemon knows it (never as the caller says); nil
    /// when the bus does not say.
    public func callerCredentials() async -> DBusCredentials? {
        await service.credentials(of: sender)
    }

    /// Answers with `values` (the method's out arguments).
    public func reply(_ values: [DBusValue]) {
        guard let invocation else { return }
        self.invocation = nil
        g_dbus_method_invocation_return_value(invocation, DBusValue.tuple(values))
    }

    /// Sends the caller alone a signal of the service's interface (`Asking`, while the user is
    /// asked about its request).
    public func notify(_ signal: String, _ arguments: [DBusValue]) {
        service.emit(signal, to: sender, arguments)
    }

    /// Answers with a D-Bus error.
    public func fail(name: String, message: String) {
        guard let invocation else { return }
        self.invocation = nil
        g_dbus_method_invocation_return_dbus_error(invocation, name, message)
    }

    isolated deinit {
        fail(name: "org.freedesktop.DBus.Error.Failed", message: "The call was not answered.")
    }
}

/// A service on the session bus: owns a well-known name, exports one object described by
/// introspection XML (so `gdbus introspect` shows it), and hands each method call to a
/// main-actor handler. GDBus checks every call's arguments against the XML before the handler
/// sees it. The caller's process and user come from the bus daemon (`GetConnectionCredentials`),
/// asked once per connection.
@MainActor
public final class DBusService {
    /// The well-known name (`org.sesame.Sesame`).
    public let name: String
    /// Whether the name is ours now.
    public private(set) var ownsName = false
    /// Called when the name could not be had or was lost (another Sesame has it, or no bus).
    public var onNameLost: (() -> Void)?
    /// Called once the name is ours.
    public var onNameAcquired: (() -> Void)?
    private let path: String
    private let interfaceName: String
    private let handler: @MainActor (DBusMethodCall) -> Void
    private var nodeInfo: UnsafeMutablePointer<GDBusNodeInfo>?
    private var ownerID: guint = 0
    private var registrationID: guint = 0
    private var connection: OpaquePointer?
    private var knownCredentials: [String: DBusCredentials] = [:]
    /// Where the bus daemon is asked, blocking: libdispatch's overcommitting pool, never the
    /// cooperative one or the main loop.
    private static let blockingCalls = DispatchQueue(label: "sesame.dbus.credentials", attributes: .concurrent)
    private var box: Unmanaged<ServiceBox>?

    /// The method-call table GDBus keeps a pointer to (one for every object: the user data tells them apart).
    private static let vtable: UnsafeMutablePointer<GDBusInterfaceVTable> = {
        let table = UnsafeMutablePointer<GDBusInterfaceVTable>.allocate(capacity: 1)
        table.initialize(to: GDBusInterfaceVTable())
        table.pointee.method_call = { _, sender, _, _, method, parameters, invocation, data in
            guard let data, let invocation, let method else { return }
            let service = Unmanaged<ServiceBox>.fromOpaque(data).takeUnretainedValue().service
            let arguments = parameters.map { DBusValue.children(of: $0).compactMap(DBusValue.init) } ?? []
            let sender = sender.map { String(cString: $0) } ?? ""
            let name = String(cString: method)
            // The invocation crosses no thread (GDBus calls here on the main context's thread):
            // its bit pattern carries it into the main actor.
            let address = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(invocation)))
            MainActor.assumeIsolated {
                let invocation = OpaquePointer(bitPattern: address)!
                guard let service else {
                    g_dbus_method_invocation_return_dbus_error(invocation, "org.freedesktop.DBus.Error.Failed", "The service is stopping.")
                    return
                }
                service.handle(DBusMethodCall(method: name, arguments: arguments, sender: sender, invocation: invocation, service: service))
            }
        }
        return table
    }()

    /// Starts owning `name` on the session bus and exports `interface` (from `introspectionXML`)
    /// at `path`; `handler` answers each method call (on the main actor).
    /// - Throws: ``GLibError`` when the XML does not parse or does not describe `interface`.
    public init(
        name: String, path: String, interface: String, introspectionXML: String, handler: @escaping @MainActor (DBusMethodCall) -> Void
    ) throws(GLibError) {
        self.name = name
        self.path = path
        interfaceName = interface
        self.handler = handler
        var error: UnsafeMutablePointer<GError>?
        guard let info = g_dbus_node_info_new_for_xml(introspectionXML, &error) else {
            let failure = GLibError(error)
            g_error_free(error)
            throw failure
        }
        guard g_dbus_node_info_lookup_interface(info, interface) != nil else {
            g_dbus_node_info_unref(info)
            throw GLibError(domain: "sesame", code: 0, message: "the introspection XML has no interface \(interface)")
        }
        nodeInfo = info
        let box = Unmanaged.passRetained(ServiceBox(self))
        self.box = box
        let acquiredBus: GBusAcquiredCallback = { connection, _, data in
            guard let data, let connection else { return }
            let service = Unmanaged<ServiceBox>.fromOpaque(data).takeUnretainedValue().service
            MainActor.assumeIsolated { service?.register(on: connection) }
        }
        let acquiredName: GBusNameAcquiredCallback = { _, _, data in
            guard let data else { return }
            let service = Unmanaged<ServiceBox>.fromOpaque(data).takeUnretainedValue().service
            MainActor.assumeIsolated {
                service?.ownsName = true
                service?.onNameAcquired?()
            }
        }
        let lostName: GBusNameLostCallback = { _, _, data in
            guard let data else { return }
            let service = Unmanaged<ServiceBox>.fromOpaque(data).takeUnretainedValue().service
            MainActor.assumeIsolated {
                service?.ownsName = false
                service?.unregister()
                service?.onNameLost?()
            }
        }
        // The box is retained once more for GDBus, which releases it in the destroy notify.
        ownerID = g_bus_own_name(
            G_BUS_TYPE_SESSION, name, G_BUS_NAME_OWNER_FLAGS_NONE, acquiredBus, acquiredName, lostName,
            Unmanaged.passRetained(box.takeUnretainedValue()).toOpaque(),
            { data in
                guard let data else { return }
                Unmanaged<ServiceBox>.fromOpaque(data).release()
            })
    }

    /// Gives the name back and removes the object.
    public func stop() {
        unregister()
        if ownerID != 0 { g_bus_unown_name(ownerID) }
        ownerID = 0
        ownsName = false
        box?.takeUnretainedValue().service = nil
        box?.release()
        box = nil
        if let nodeInfo { g_dbus_node_info_unref(nodeInfo) }
        nodeInfo = nil
    }

    isolated deinit { stop() }

    private func register(on connection: OpaquePointer) {
        guard registrationID == 0, let nodeInfo, let box, let interface = g_dbus_node_info_lookup_interface(nodeInfo, interfaceName) else {
            return
        }
        self.connection = connection
        var error: UnsafeMutablePointer<GError>?
        registrationID = g_dbus_connection_register_object(
            connection, path, interface, Self.vtable, Unmanaged.passRetained(box.takeUnretainedValue()).toOpaque(),
            { data in
                guard let data else { return }
                Unmanaged<ServiceBox>.fromOpaque(data).release()
            }, &error)
        if registrationID == 0 { g_error_free(error) }
    }

    private func unregister() {
        if registrationID != 0, let connection { g_dbus_connection_unregister_object(connection, registrationID) }
        registrationID = 0
        connection = nil
    }

    fileprivate func handle(_ call: DBusMethodCall) { handler(call) }

    /// Sends `signal` of the interface, from the object, to the connection `destination` only.
    fileprivate func emit(_ signal: String, to destination: String, _ arguments: [DBusValue]) {
        guard let connection else { return }
        var error: UnsafeMutablePointer<GError>?
        if g_dbus_connection_emit_signal(connection, destination, path, interfaceName, signal, DBusValue.tuple(arguments), &error) == 0 {
            g_error_free(error)
        }
    }

    /// The process and user of the connection `sender`, from the bus daemon (cached: a unique
    /// name is never given to another connection).
    fileprivate func credentials(of sender: String) async -> DBusCredentials? {
        if let known = knownCredentials[sender] { return known }
        guard let connection, sender.hasPrefix(":") else { return nil }
        let address = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))
        // The connection is thread-safe and kept alive by the name's ownership meanwhile; the
        // blocking call runs on a thread of its own, never on the main loop.
        let found = await withCheckedContinuation { (continuation: CheckedContinuation<DBusCredentials?, Never>) in
            Self.blockingCalls.async {
                let connection = OpaquePointer(bitPattern: address)
                var error: UnsafeMutablePointer<GError>?
                let reply = g_dbus_connection_call_sync(
                    connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                    "GetConnectionCredentials", DBusValue.tuple([.string(sender)]), nil, G_DBUS_CALL_FLAGS_NONE, 5000, nil, &error)
                guard let reply else {
                    g_error_free(error)
                    continuation.resume(returning: nil)
                    return
                }
                defer { g_variant_unref(reply) }
                guard case .dictionary(let entries)? = DBusValue.children(of: reply).compactMap(DBusValue.init).first,
                    case .uint32(let pid)? = entries.first(where: { $0.0 == "ProcessID" })?.1, pid > 0, pid <= UInt32(Int32.max),
                    case .uint32(let uid)? = entries.first(where: { $0.0 == "UnixUserID" })?.1
                else {
                    continuation.resume(returning: nil)
                    return
                }
                continuation.resume(returning: DBusCredentials(processID: Int32(pid), userID: uid))
            }
        }
        if let found {
            if knownCredentials.count > 4096 { knownCredentials.removeAll() }
            knownCredentials[sender] = found
        }
        return found
    }
}

extension DBusService {
    /// Writes out what this process queued on the session bus (an answer just given): a process
    /// about to end calls it, so that the answer is not lost with it. Any thread.
    public nonisolated static func flushSessionBus() {
        var error: UnsafeMutablePointer<GError>?
        // The process's one shared connection. The reference this adds is not given back: the
        // process ends next, on whichever thread ends it (``GObjectReference`` is the main actor's).
        guard let connection = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else {
            g_error_free(error)
            return
        }
        if g_dbus_connection_flush_sync(connection, nil, &error) == 0 { g_error_free(error) }
    }
}

/// A connection's process and user, as the bus daemon says (`GetConnectionCredentials`).
public struct DBusCredentials: Sendable, Hashable {
    /// `ProcessID`: the process that connected.
    public let processID: Int32
    /// `UnixUserID`: its user.
    public let userID: UInt32
}

/// What GDBus's user data points at: the service, weakly (calls after it stopped are refused).
private final class ServiceBox: @unchecked Sendable {
    weak var service: DBusService?
    init(_ service: DBusService) { self.service = service }
}
