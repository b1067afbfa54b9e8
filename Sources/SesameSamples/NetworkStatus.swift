import FoundationEssentials
import SesameCore
import SesameWindowModel

/// Whether this computer is on a network, as the desktop says (in the window, GIO's
/// `GNetworkMonitor`: a default route, or none). The samples read it to tell "you are offline"
/// from a failure of one request, and the window retries what failed when the network returns.
///
/// It never stops a request: a monitor can be wrong (a machine whose only service is on this
/// computer has no default route and still works), so being offline only changes what the user
/// is told and when Sesame tries again.
@MainActor
public final class NetworkStatus {
    /// Whether the desktop says a network is available.
    public private(set) var isOnline: Bool
    private var observers: [(Bool) -> Void] = []

    /// A status that starts as `isOnline` until the desktop's monitor says otherwise.
    public init(isOnline: Bool = true) {
        self.isOnline = isOnline
    }

    /// The desktop's monitor says whether a network is available; observers hear of a change only.
    public func update(isOnline: Bool) {
        guard isOnline != self.isOnline else { return }
        self.isOnline = isOnline
        for observer in observers { observer(isOnline) }
    }

    /// Calls `observer` with each change, for the status's life (hold `self` weakly in it).
    public func observe(_ observer: @escaping (Bool) -> Void) {
        observers.append(observer)
    }

    /// Whether `error` is a request that got no answer at all — what being offline explains, and
    /// what is worth trying again once the network is back (a refusal by the service is not).
    public nonisolated static func isNoAnswer(_ error: any Error) -> Bool {
        switch error {
        case is HTTPTransportError: true
        case let error as AccountStoreError: error.code == .network || error.transportFailure != nil
        default: false
        }
    }
}
