import Foundation
import SesameCore

/// One of the seeds' samples, by its settings' shape.
public struct Sample: Sendable {
    /// Which tutorial a sample is.
    public enum Kind: String, Sendable, CaseIterable {
        /// The v2.0 sample: the organisation's directory.
        case directory
        /// The B2C sample: a per-user task list.
        case tasks
        /// The MSAL sample: a Graph `/me` console.
        case me
        /// Any OpenID Connect provider: the same console over the provider's userinfo endpoint.
        case openID = "openid"

        /// Whether showing the sample with nobody signed in starts a sign-in (the directory
        /// and the task list do; the console waits for "Call Microsoft Graph").
        public var signsInWhenShown: Bool { self != .me && self != .openID }
    }

    /// Which tutorial.
    public let kind: Kind
    /// Its settings.
    public let settings: SampleSettings

    /// The account type it signs in with.
    public var accountType: String { settings.accountType }
    /// Which user agent the sample's sign-in uses first (`signInWith`).
    public var signInWith: SignInMethod { settings.signInWith }

    /// The sample's name in the window.
    public var title: String {
        switch kind {
        case .directory: L("Directory")
        case .tasks: L("Tasks")
        case .me: L("Me")
        case .openID: L("OpenID")
        }
    }

    /// The sample a settings file describes.
    public init(settings: SampleSettings) {
        self.settings = settings
        switch settings {
        case .graph: kind = .directory
        case .b2c: kind = .tasks
        case .msal: kind = .me
        case .openID: kind = .openID
        }
    }
}

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
        let events = await store.events()
        listening = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                self.record(event)
            }
        }
    }

    isolated deinit { listening?.cancel() }

    /// The first sample of a kind.
    public func sample(_ kind: Sample.Kind) -> Sample? { samples.first { $0.kind == kind } }

    /// The signed-in account of a sample, if any.
    public func account(for sample: Sample) async -> Account? {
        (try? await store.accounts(ofType: sample.accountType))?.first
    }

    private func record(_ event: AccountStoreEvent) {
        switch event {
        case .didFailToRequestAccess(_, let error) where error.code == .cancelled:
            trace.record("sign-in-cancelled")
        case .didFailToRequestAccess(let accountType, let error):
            trace.record("sign-in-failed", [("accountType", accountType), ("error", error.serviceCode ?? error.code.description)])
        case .cacheRecovered(let group, _):
            trace.record("cache-recovered", [("group", group)])
        case .accountsDidChange:
            break
        }
    }
}
