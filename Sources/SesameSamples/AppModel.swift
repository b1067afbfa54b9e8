import FoundationEssentials
import SesameCore
import SesameService
import SesameWindowModel

/// What the samples work with: the account store, the samples' settings, the flow trace and the
/// traced transport every API call goes through. UI-free: the GTK window is one view of it.
@MainActor
public final class AppModel {
    /// The account store, configured with every sample's account type.
    public let store: AccountStore
    /// The samples, in the order their settings were given.
    public let samples: [Sample]
    /// The flow as events.
    public let trace: FlowTrace
    /// The transport every API call goes through (traced).
    public let transport: any HTTPTransport
    /// Whether the computer is on a network (the window feeds it from the desktop's monitor).
    public let network: NetworkStatus
    private var listening: Task<Void, Never>?
    /// Asks the keyring to show its own unlock prompt and answers whether it is unlocked (the
    /// window sets it when the sign-ins are in the Secret Service).
    public var unlockKeyring: (@Sendable () async -> Bool)?

    /// A client for API calls as an account, through the traced transport.
    public var httpClient: AuthorizedHTTPClient { AuthorizedHTTPClient(store: store, transport: transport) }

    /// Configures `store` for every sample and records the store's failures in the trace.
    /// - Parameter transport: the store's own transport should be this one too, so that the
    ///   token exchange shows in the trace.
    /// - Parameter network: whether the computer is on a network; online until someone says otherwise.
    public init(
        store: AccountStore, settings: [SampleSettings], trace: FlowTrace, transport: any HTTPTransport,
        network: NetworkStatus = NetworkStatus()
    ) async {
        self.store = store
        self.transport = transport
        self.trace = trace
        self.network = network
        samples = settings.map(Sample.init(settings:))
        await store.setConfigurations(
            Dictionary(samples.map { ($0.accountType, $0.settings.accountConfiguration) }) { _, last in last })
        listening = await trace.follow(store)
    }

    isolated deinit { listening?.cancel() }

    /// The first sample of a kind.
    public func sample(_ kind: Sample.Kind) -> Sample? { samples.first { $0.kind == kind } }
}
