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
