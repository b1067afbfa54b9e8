import ArgumentParser
import FoundationEssentials
import SesameCommandLine
import SesameCore
import SesameSystem
import SesameWindowModel

/// `sesame device`: this computer's identity in an organization ("Entra registered"), which
/// lets one sign-in serve every app: `status`, `register`, `remove`. docs/DEVICE.md.
struct DeviceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "Register this computer with your organization, see its registration, or remove it.",
        discussion: """
            A registered computer signs every app of the organization in with one sign-in (its Primary Refresh Token), \
            and policies that ask for a registered device let it in. Registered is not managed: a policy that asks for a \
            compliant (Intune) or joined device still refuses it. The keys and the token are kept in your keyring only.
            """,
        subcommands: [Status.self, Register.self, Remove.self], defaultSubcommand: Status.self)

    /// `sesame device status`.
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Say whether this computer is registered, and with whom.")
        @OptionGroup var options: CommonOptions

        func run() throws {
            let options = options
            try tellingFailures {
                try runBlocking {
                    let identity = try await DeviceCommand.identity(options)
                    guard let status = try await identity.status() else {
                        print("This computer is not registered with an organization. `sesame device register` registers it.")
                        return
                    }
                    print(DeviceCommand.describe(status))
                }
            }
        }
    }

    /// `sesame device register`.
    struct Register: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register this computer with the organization of a work account type (a sign-in with a code).",
            discussion: """
                You sign in with a code, on this or any other device, as Microsoft's Authentication Broker: the app \
                Entra ID lets register devices. Sesame never sees your password.
                """)
        @OptionGroup var options: CommonOptions
        @Option(help: "The account type whose organization to register with (the first work account type by default).")
        var accountType: String?
        @Option(help: "The name your organization will know this computer by (its host name by default).") var name: String?
        @Flag(help: "Register without asking first (for scripts).") var yes = false

        func run() throws {
            Termination.installForCommand { signal, _ in "Registration stopped (\(signal)); this computer is not registered." }
            let (options, accountType, yes) = (options, accountType, yes)
            let name = name ?? ThisComputer.hostName()
            try tellingFailures {
                try runBlocking {
                    let (store, profiles) = try await options.store()
                    guard let identity = store.device else { throw DeviceCommand.noKeyring }
                    let target: RegistrationTarget
                    do throws(RegistrationTarget.Problem) {
                        target = try RegistrationTarget(settings: profiles, accountType: accountType)
                    } catch {
                        throw ValidationError(error.description)
                    }
                    if let status = try await identity.status() {
                        Posix.writeStandardError(
                            "sesame: this computer is registered already (device \(status.deviceID)); `sesame device remove` first.\n")
                        throw ExitCode(ExitStatus.failure)
                    }
                    let question = DeviceCommand.question(name: name)
                    if !yes {
                        guard Posix.isTerminal("/proc/self/fd/0") else {
                            throw ValidationError("\(question) Run it in a terminal to answer, or add --yes.")
                        }
                        Posix.writeStandardError("\(question)\nRegister this computer? [y/N] ")
                        guard readLine()?.trimmingWhitespace().lowercased().hasPrefix("y") == true else {
                            Posix.writeStandardError("Not registered.\n")
                            throw ExitCode(ExitStatus.failure)
                        }
                    }
                    let registration = try await identity.register(
                        authority: target.authority, tenant: target.tenant, displayName: name, osVersion: ThisComputer.operatingSystem(),
                        signIn: .deviceCode { authorization in Posix.writeStandardError("\(authorization.instructions)\n") })
                    print(
                        "Registered: your organization knows this computer as “\(name)” (device \(registration.deviceID)). "
                            + "Its apps now sign you in without a page.")
                }
            }
        }
    }

    /// `sesame device remove`.
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove this computer from your organization, and its keys and token from this computer.")
        @OptionGroup var options: CommonOptions

        func run() throws {
            Termination.installForCommand()
            let options = options
            try tellingFailures {
                try runBlocking {
                    let identity = try await DeviceCommand.identity(options)
                    guard let status = try await identity.status() else {
                        print("This computer is not registered with an organization: nothing to remove.")
                        return
                    }
                    try await identity.remove()
                    print("Removed: your organization no longer knows this computer (device \(status.deviceID)); its keys are gone.")
                }
            }
        }
    }

    // MARK: Shared

    /// Says, once, that the organization removed or disabled this computer, when a command's
    /// sign-in found it so (the sign-in itself went on with a page, or failed).
    static func sayLoss(of store: AccountStore) async {
        guard let loss = await store.device?.takeLoss() else { return }
        let after =
            switch loss.code {
            case .deviceRemoved:
                "Sesame has forgotten its registration; sign-ins show their pages again (`sesame device register` registers it anew)."
            case .keysUnreadable: "Sign-ins show their pages until they can be used again."
            default: "Sign-ins show their pages until it is enabled again."
            }
        Posix.writeStandardError("sesame: note: \(loss) \(after)\n")
    }

    static let noKeyring = DeviceIdentityError(
        .storage,
        "Sesame keeps sign-ins in files here, not in a keyring; a computer's keys and its token are never kept in a file, "
            + "so it cannot be registered. Start a keyring (GNOME Keyring, KeePassXC) and sign in again.")

    static func identity(_ options: CommonOptions) async throws -> DeviceIdentity {
        let (store, _) = try await options.store()
        guard let identity = store.device else { throw noKeyring }
        return identity
    }

    static func question(name: String) -> String {
        "Your organization will know this computer as “\(name)”: it appears among your devices, and sign-ins from it name "
            + "it. You can remove it any time (`sesame device remove`)."
    }

    static func describe(_ status: DeviceIdentity.Status) -> String {
        """
        This computer is registered with \(status.authority.host ?? "your organization") (Entra registered; not managed, not joined).
          device id:     \(status.deviceID)
          registered by: \(status.userPrincipalName ?? "unknown")
          keys:          \(status.keysKept)
          sign-in token: renewed as it is used; expires \(status.primaryRefreshTokenExpires.formatted(.iso8601)) unless renewed
        """
    }
}

/// Runs `body`; the device identity's failures and the storage's are told in their sentence.
private func tellingFailures(_ body: () throws -> Void) throws {
    do {
        try tellingStorageFailures(body)
    } catch let error as DeviceIdentityError {
        Posix.writeStandardError("sesame: \(error)\n")
        throw ExitCode(
            error.code == .storage && error.message == DeviceCommand.noKeyring.message ? ExitStatus.noKeyring : ExitStatus.failure)
    }
}
