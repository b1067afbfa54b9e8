import CGio

/// The desktop's word on whether a network is available: GIO's default `GNetworkMonitor`
/// (NetworkManager's, the portal's in a sandbox, else the kernel's routing table through netlink).
/// "Available" means a default route: a laptop that wakes without Wi-Fi has none, and gets one
/// when it joins a network.
@MainActor
public final class NetworkMonitor {
    private let monitor: GObjectReference

    /// Starts following the desktop's monitor: `changed` hears its current answer now, and each
    /// change as GIO reports it (on the main loop: the monitor is made on the main thread).
    public init(_ changed: @escaping @MainActor (_ isOnline: Bool) -> Void) {
        let pointer = g_network_monitor_get_default()
        monitor = GObjectReference(UnsafeMutableRawPointer(pointer!), .shared)
        changed(g_network_monitor_get_network_available(pointer) != 0)
        Signals.flag(monitor, "network-changed", changed)
    }
}
