import ArgumentParser
import FoundationEssentials
import SesameCore
import SesameSamples
import SesameSystem
import SesameWindowModel

/// The exit statuses the commands share, one for each thing a person (or a mail program's
/// password command) does differently: docs/COMMAND-LINE.md, "Exit status".
enum ExitStatus {
    /// Anything else; standard error says what.
    static let failure: Int32 = 1
    /// Only a sign-in can give a token: standard error names the command that starts one.
    static let signInNeeded: Int32 = 2
    /// The keyring holding the sign-ins is locked: unlock it and run the command again.
    static let keyringLocked: Int32 = 3
    /// The sign-ins are in the desktop keyring and no keyring answers here (no session bus).
    static let noKeyring: Int32 = 4
    /// The disk holding the sign-ins is full: free some space and run the command again.
    static let diskFull: Int32 = 5
    /// The folder holding the sign-ins cannot be written.
    static let readOnly: Int32 = 6
    /// Sesame's account service ended before it answered.
    static let serviceEnded: Int32 = 7

    /// The status for a storage problem.
    static func of(_ problem: TokenStorageError.Problem) -> Int32 {
        switch problem {
        case .keyringLocked: keyringLocked
        case .keyringUnavailable: noKeyring
        case .diskFull: diskFull
        case .readOnly: readOnly
        case .other: failure
        }
    }
}

/// Runs `body`; a storage failure (a locked keyring, no keyring, a full or read-only disk) is
/// told in its sentence and ends the command with its own status. Other errors pass through.
func tellingStorageFailures<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as AccountStoreError where error.code == .storageUnavailable {
        Posix.writeStandardError("sesame: \(UserMessage.text(for: error))\n")
        throw ExitCode(ExitStatus.of(error.storageProblem ?? .other))
    } catch let error as TokenStorageError {
        Posix.writeStandardError("sesame: \(UserMessage.text(for: AccountStoreError.from(error)))\n")
        throw ExitCode(ExitStatus.of(error.problem))
    }
}

extension Termination {
    /// How the headless commands end on SIGINT, SIGTERM and SIGHUP: a sentence on standard error
    /// (`sentence` gets the signal's name and whether a refresh or a write under way was finished
    /// first), what was stored flushed to the disk, then the signal's own ending.
    static func installForCommand(sentence: @escaping @Sendable (_ signal: String, _ waited: Bool) -> String = commandSentence) {
        shared.install { signal, waited in
            Posix.writeStandardError("sesame: \(sentence(Termination.name(of: signal), waited))\n")
            Durability.shared.waitUntilFlushed()
        }
    }

    /// What `sesame token`, `accounts` and `signout` say when a signal ends them.
    @Sendable static func commandSentence(signal: String, waited: Bool) -> String {
        waited
            ? "stopped (\(signal)) once what was under way was stored; nothing was lost."
            : "stopped (\(signal)); nothing was changed."
    }
}
