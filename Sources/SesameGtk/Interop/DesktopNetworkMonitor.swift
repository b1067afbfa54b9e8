import CGtkWebKit
import SesameSamples

/// The desktop's word on whether a network is available: GIO's default `GNetworkMonitor`
/// (NetworkManager's, the portal's in a sandbox, else the kernel's routing table through netlink),
/// fed into a ``NetworkStatus``. "Available" means a default route: a laptop that wakes without
/// Wi-Fi has none, and gets one when it joins a network.
@MainActor
final class DesktopNetworkMonitor {
    private let monitor: GObjectReference

    /// Starts following the desktop's monitor: `status` takes its current answer now, and each
    /// change as GIO reports it (on the main loop: the monitor was made on the main thread).
    init(feeding status: NetworkStatus) {
        let pointer = g_network_monitor_get_default()
        monitor = GObjectReference(UnsafeMutableRawPointer(pointer!), .shared)
        status.update(isOnline: g_network_monitor_get_network_available(pointer) != 0)
        Signals.flag(monitor, "network-changed") { [weak status] available in status?.update(isOnline: available) }
    }
}
