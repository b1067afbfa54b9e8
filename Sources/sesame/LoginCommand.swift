import ArgumentParser
import FoundationEssentials
import SesameCommandLine
import SesameCore
import SesameGIO
import SesameSystem
import SesameWindowModel

/// `sesame login`: signs an account in from the command line, in the system browser or, on
/// a machine without one, with a device code typed on any other device.
struct LoginCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign an account in: in your browser, or with a code on another device (--device-code).",
        discussion: """
            Without --device-code the sign-in opens in your default browser and comes back to Sesame on a loopback \
            address. With --device-code Sesame prints a web address and a code: open the address on any device, type \
            the code and sign in there; Sesame waits (Ctrl-C stops it). Either way the account is stored as in the \
            window, so `sesame token` works afterwards.
            """)
    @OptionGroup var options: CommonOptions
    @Option(help: "The account type (e.g. myGraphService).") var accountType: String
    @Flag(help: "Sign in on another device with a code (for machines without a browser, or over SSH).") var deviceCode = false
    @Option(
        help:
            "More permissions to give Sesame in this sign-in (repeatable): imap, smtp, pop or mail for Exchange Online's, or a full scope."
    )
    var scope: [String] = []

    func run() throws {
        let (options, accountType, deviceCode) = (options, accountType, deviceCode)
        let scopes = scope.flatMap(MailScope.expand)
        // Ctrl+C, SIGTERM and SIGHUP end the sign-in at once; one that comes while the account is
        // being stored waits for the store.
        Termination.installForCommand { signal, waited in
            waited
                ? "stopped (\(signal)) as the sign-in was being stored: it is stored (`sesame accounts` lists it)."
                : "Sign-in cancelled; nothing was stored."
        }
        do {
            let account = try runBlocking {
                let (store, profiles) = try await options.store()
                guard profiles.contains(where: { $0.accountType == accountType }) else {
                    throw ValidationError(
                        "There is no account type '\(accountType)'; the settings name \(profiles.map(\.accountType).joined(separator: ", "))."
                    )
                }
                // The sign-ins must be readable first: behind a locked keyring, a new sign-in
                // would make a second copy of one that is there.
                _ = try await store.accounts(ofType: accountType)
                if deviceCode {
                    return try await store.signInWithDeviceCode(accountType: accountType, additionalScopes: scopes) { authorization in
                        Posix.writeStandardError("\(authorization.instructions)\n")
                    }
                }
                do {
                    let account = try await store.signIn(
                        accountType: accountType, additionalScopes: scopes, using: SystemBrowserUserAgent.desktop())
                    await DeviceCommand.sayLoss(of: store)
                    return account
                } catch {
                    await DeviceCommand.sayLoss(of: store)
                    throw error
                }
            }
            print("Signed in as \(account.displayName) <\(account.username)> (\(accountType)).")
        } catch let error as AccountStoreError {
            let configuration = try? options.profiles().first(where: { $0.accountType == accountType })?.accountConfiguration
            if let notice = RefusalNotice(error, configuration: configuration, scopes: scopes) {
                // The tenant said no: what it means, the one thing to do, and what the help desk needs.
                notice.record(environment: ProcessInfo.processInfo.environment)
                Posix.writeStandardError("sesame: \(notice.commandLineText)\nNothing was stored.\n")
                throw ExitCode(1)
            }
            Posix.writeStandardError("sesame: \(Self.sentence(for: error, deviceCode: deviceCode))\n")
            throw ExitCode(error.code == .cancelled ? 130 : 1)
        }
    }

    /// What to tell the user, with what to do next.
    static func sentence(for error: AccountStoreError, deviceCode: Bool) -> String {
        let again = deviceCode ? "Run `sesame login --device-code` again for a new code." : "Run `sesame login` again."
        switch error.code {
        case .cancelled: return "Sign-in cancelled; nothing was stored."
        case .deviceCodeDeclined: return "The sign-in was declined on the other device; nothing was stored. \(again)"
        case .deviceCodeExpired: return "The code expired before anyone signed in with it; nothing was stored. \(again)"
        // No answer from a server: the window's sentence, naming the host (and the proxy).
        case _ where error.transportFailure != nil: return "\(UserMessage.text(for: error)) Nothing was stored."
        default: return "\(error.description) Nothing was stored."
        }
    }
}

extension SystemBrowserUserAgent {
    /// The command line's system browser: GIO's default handler for https.
    static func desktop() -> SystemBrowserUserAgent {
        SystemBrowserUserAgent { url in
            try DesktopLauncher.openInDefaultBrowser(url)
            Posix.writeStandardError("Continue the sign-in in your browser; Sesame waits for it (Ctrl-C stops).\n")
        }
    }
}
