import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import SesameCommandLine
import SesameCore
import SesameKeyring
import SesameService
import SesameSystem
import SesameWindowModel

/// `sesame`: the window by default, and headless commands over the same store. `main` is
/// synchronous: the window runs GLib's main loop on the main thread; the headless commands run
/// their async work off it and wait.
@main
struct SesameCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sesame",
        abstract: "Sign in to the Microsoft identity platform from the Linux desktop.",
        version: SesameVersion.current,
        subcommands: [Window.self, LoginCommand.self, Accounts.self, TokenCommand.self, SignOut.self, DeviceCommand.self, Doctor.self],
        defaultSubcommand: Window.self)

    /// Handles SIGINT, SIGTERM and SIGHUP from the start (each command then says its own sentence),
    /// then parses and runs.
    static func main() {
        Termination.installForCommand()
        main(nil)
    }
}

/// Runs async work from synchronous code on the main thread (the headless commands).
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = BlockingOutcome<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { outcome.result = .success(try await body()) } catch { outcome.result = .failure(error) }
        done.signal()
    }
    done.wait()
    // Stopped by a signal meanwhile: the process ends as the signal asks, not with this work's status.
    Termination.shared.waitIfEnding()
    // What the command stored is on the disk before the process ends.
    Durability.shared.waitUntilFlushed()
    return try tellingStorageFailures { try outcome.result!.get() }
}

/// The result a ``runBlocking(_:)`` waits for; written once before the semaphore is signalled.
private final class BlockingOutcome<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}

extension SesameCommand {
    /// The HTTP transport of the window and of every command (``CommonOptions/desktopTransport(resolver:)``).
    static func desktopTransport(resolver: DesktopProxyResolver = DesktopProxyResolver()) -> AsyncHTTPClientTransport {
        CommonOptions.desktopTransport(resolver: resolver)
    }
}

extension SesameCommand {
    /// `sesame accounts`: the signed-in accounts of every account type.
    struct Accounts: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the signed-in accounts of each account type.")
        @OptionGroup var options: CommonOptions

        func run() throws {
            Termination.installForCommand()
            let options = options
            let answer = ServiceClient.call("ListAccounts", [])
            if case .failed(let error) = answer {
                Posix.writeStandardError("sesame: \(ServiceClient.sentence(error))\n")
                throw ExitCode(ServiceClient.exitStatus(error))
            }
            if case .answered(let values) = answer, case .dictionaries(let list)? = values.first {
                let accounts = list.map { Dictionary($0, uniquingKeysWith: { first, _ in first }) }
                for profile in try options.profiles() {
                    print("\(profile.accountType) (\(profile.accountConfiguration.authorizationURL.host ?? "?")):")
                    let mine = accounts.filter { $0["account_type"]?.string == profile.accountType }
                    if mine.isEmpty { print("  no account signed in") }
                    for account in mine {
                        let mark = account["needs_sign_in"] == .bool(true) ? "  [sign in again]" : ""
                        let (name, user, id) = (
                            account["display_name"]?.string ?? "", account["username"]?.string ?? "",
                            account["home_account_id"]?.string ?? ""
                        )
                        print("  \(name) <\(user)>  \(id)\(mark)")
                    }
                }
                return
            }
            try runBlocking {
                let (store, profiles) = try await options.store()
                for profile in profiles {
                    let accounts = try await store.accounts(ofType: profile.accountType)
                    print("\(profile.accountType) (\(profile.accountConfiguration.authorizationURL.host ?? "?")):")
                    if accounts.isEmpty { print("  no account signed in") }
                    for account in accounts {
                        let mark = account.interactionRequired ? "  [sign in again]" : ""
                        print("  \(account.displayName) <\(account.username)>  \(account.homeAccountID)\(mark)")
                    }
                }
            }
        }
    }

    /// `sesame signout`: removes an account's tokens.
    struct SignOut: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "signout", abstract: "Sign an account out (its tokens are deleted).")
        @OptionGroup var options: CommonOptions
        @Option(help: "The account type.") var accountType: String
        @Option(help: "The account's username, when the type has several.") var account: String?

        func run() throws {
            Termination.installForCommand()
            let (options, account, accountType) = (options, account, accountType)
            switch ServiceClient.call("SignOut", [.string(accountType), .string(account ?? "")]) {
            case .answered:
                print("Signed out \(account ?? "the account") (\(accountType)).")
                return
            case .failed(let error):
                Posix.writeStandardError("sesame: \(ServiceClient.sentence(error))\n")
                throw ExitCode(ServiceClient.exitStatus(error))
            case .notRunning, .noBus:
                break
            }
            try runBlocking {
                let (store, _) = try await options.store()
                let signedIn = try await pick(account, from: store.accounts(ofType: accountType), type: accountType)
                try await store.remove(signedIn)
                print("Signed out \(signedIn.displayName) (\(accountType)).")
            }
        }
    }
}

/// The account a command means: the only one, or the one whose username was given.
func pick(_ username: String?, from accounts: [Account], type: String) throws -> Account {
    if let username {
        guard let match = accounts.first(where: { $0.username.equalsIgnoringCase(username) }) else {
            Posix.writeStandardError("sesame: no account \(username) is signed in for \(type).\n")
            throw ExitCode(2)
        }
        return match
    }
    guard let only = accounts.first else {
        Posix.writeStandardError("sesame: nobody is signed in for \(type); run `sesame` and sign in.\n")
        throw ExitCode(2)
    }
    guard accounts.count == 1 else {
        throw ValidationError(
            "\(type) has \(accounts.count) accounts; choose one with --account (\(accounts.map(\.username).joined(separator: ", "))).")
    }
    return only
}
