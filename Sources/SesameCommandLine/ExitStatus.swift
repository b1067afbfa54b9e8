import ArgumentParser
import SesameCore
import SesameSystem

/// The exit statuses the commands share, one for each thing a person (or a mail program's
/// password command) does differently: docs/COMMAND-LINE.md, "Exit status".
public enum ExitStatus {
    /// Anything else; standard error says what.
    public static let failure: Int32 = 1
    /// Only a sign-in can give a token: standard error names the command that starts one.
    public static let signInNeeded: Int32 = 2
    /// The keyring holding the sign-ins is locked: unlock it and run the command again.
    public static let keyringLocked: Int32 = 3
    /// The sign-ins are in the desktop keyring and no keyring answers here (no session bus).
    public static let noKeyring: Int32 = 4
    /// The disk holding the sign-ins is full: free some space and run the command again.
    public static let diskFull: Int32 = 5
    /// The folder holding the sign-ins cannot be written.
    public static let readOnly: Int32 = 6
    /// Sesame's account service ended before it answered.
    public static let serviceEnded: Int32 = 7

    /// The status for a storage problem.
    public static func of(_ problem: TokenStorageError.Problem) -> Int32 {
        switch problem {
        case .keyringLocked: keyringLocked
        case .keyringUnavailable: noKeyring
        case .diskFull: diskFull
        case .readOnly: readOnly
        case .other: failure
        }
    }
}

extension Termination {
    /// How the headless commands end on SIGINT, SIGTERM and SIGHUP: a sentence on standard error
    /// (`sentence` gets the signal's name and whether a refresh or a write under way was finished
    /// first), what was stored flushed to the disk, then the signal's own ending.
    public static func installForCommand(sentence: @escaping @Sendable (_ signal: String, _ waited: Bool) -> String = commandSentence) {
        shared.install { signal, waited in
            Posix.writeStandardError("sesame: \(sentence(Termination.name(of: signal), waited))\n")
            Durability.shared.waitUntilFlushed()
        }
    }

    /// What `sesame token`, `accounts` and `signout` say when a signal ends them.
    @Sendable public static func commandSentence(signal: String, waited: Bool) -> String {
        waited
            ? "stopped (\(signal)) once what was under way was stored; nothing was lost."
            : "stopped (\(signal)); nothing was changed."
    }
}
