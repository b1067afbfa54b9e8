import Foundation
import SesameCore

/// What the window works with: the account store, the three samples' settings, the flow trace.
@MainActor
public final class AppModel {
    public let store: AccountStore
    public let samples: [Sample]
    public let trace: FlowTrace
    /// Where each storage group's web data (cookies) lives; nil keeps it in memory.
    public let webDataDirectory: URL?
    /// The transport every API call goes through (traced).
    public let transport: any HTTPTransport
    /// `--automation-mode`: WebKitWebDriver may drive the sign-in view.
    public var automationMode = false

    /// A client for API calls as an account, through the traced transport.
    public var httpClient: AuthorizedHTTPClient { AuthorizedHTTPClient(store: store, transport: transport) }

    /// One of the seeds' samples, by its settings' shape.
    public struct Sample: Sendable {
        public enum Kind: String, Sendable, CaseIterable { case directory, tasks, me }
        public let kind: Kind
        public let settings: SampleSettings

        public var accountType: String { settings.accountType }
        public var title: String {
            switch kind {
            case .directory: L("Directory")
            case .tasks: L("Tasks")
            case .me: L("Me")
            }
        }

        public init?(settings: SampleSettings) {
            self.settings = settings
            switch settings {
            case .graph: kind = .directory
            case .b2c: kind = .tasks
            case .msal: kind = .me
            }
        }
    }

    public init(store: AccountStore, settings: [SampleSettings], trace: FlowTrace, webDataDirectory: URL?,
                transport: (any HTTPTransport)? = nil) async {
        self.store = store
        self.transport = transport ?? TracingTransport(trace: trace)
        self.trace = trace
        self.webDataDirectory = webDataDirectory
        samples = settings.compactMap(Sample.init(settings:))
        for sample in samples {
            await store.setConfiguration(sample.settings.accountConfiguration, forAccountType: sample.accountType)
            if case .b2c(let b2c) = sample.settings {
                await store.setConfiguration(sample.settings.accountConfiguration.withPolicy(b2c.passwordResetPolicy),
                                             forAccountType: Self.passwordResetType(sample.accountType))
            }
        }
    }

    /// The account type that runs B2C's password-reset user flow for `accountType`.
    public static func passwordResetType(_ accountType: String) -> String { accountType + "#passwordReset" }

    public func sample(_ kind: Sample.Kind) -> Sample? { samples.first { $0.kind == kind } }

    /// The signed-in account of a sample, if any.
    public func account(for sample: Sample) async -> Account? {
        (try? await store.accounts(ofType: sample.accountType))?.first
    }
}
