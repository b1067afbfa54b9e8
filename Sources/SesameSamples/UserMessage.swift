import Foundation
import SesameCore

/// The text a user reads for an error, made in one place.
public enum UserMessage {
    /// What to show for `error`: the typed errors' own sentences (with the service's code).
    public static func text(for error: any Error) -> String {
        switch error {
        case let error as AccountStoreError: error.description
        case let error as CustomStringConvertible: error.description
        default: "\(error)"
        }
    }
}

/// What a page's action button offers, and says.
public enum SampleAction: Equatable, Sendable {
    /// Nobody is signed in.
    case signIn
    /// The session ended (the service needs an interactive sign-in).
    case signInAgain
    /// The last request failed for another reason.
    case retry

    /// The button's label.
    public var title: String {
        switch self {
        case .signIn: L("Sign in")
        case .signInAgain: L("Sign in again")
        case .retry: L("Retry")
        }
    }

    /// The action a failure offers: signing in again when only that helps, else trying again.
    public static func after(_ error: any Error) -> SampleAction {
        (error as? AccountStoreError)?.code == .interactionRequired ? .signInAgain : .retry
    }
}
