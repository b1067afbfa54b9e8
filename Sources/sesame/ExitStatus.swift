import ArgumentParser
import FoundationEssentials
import SesameCommandLine
import SesameCore
import SesameSystem
import SesameWindowModel

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
