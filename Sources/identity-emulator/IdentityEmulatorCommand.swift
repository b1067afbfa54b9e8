import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import IdentityEmulator

/// `identity-emulator`: the local Microsoft identity platform, Graph users API and B2C task API.
///
/// Its first line on stdout is `identity-emulator listening on <base URL>`; with `--tls` the
/// second is `ca-certificate <path>`. One-time codes are printed as `mfa-code <user> <code>`.
@main
struct IdentityEmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "identity-emulator",
        abstract: "A local Microsoft identity platform (Entra v2.0 + B2C), Graph users API and B2C task API.",
        discussion: """
            Demo accounts (password Passw0rd!): alex@contoso.onmicrosoft.com, megan@contoso.onmicrosoft.com (SMS code, \
            printed as 'mfa-code <user> <code>'; Microsoft Authenticator's requests as 'authenticator-push <user> <number>', \
            answered with 'identity-emulator phone'); federated domain fabrikam.example (Fabrikam's AD FS at \
            --federation-hostname): pat@fabrikam.example, lee@fabrikam.example; B2C tenant fabrikamb2c: sam@example.com, \
            kim@example.com.
            """,
        subcommands: [PhoneCommand.self])

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(
        help: ArgumentHelp(
            "The name clients reach the emulator by, when not the listen address (behind a proxy, at a name only the proxy "
                + "resolves): its base URL, pages, discovery, tokens and --tls certificate use it.",
            valueName: "NAME"))
    var hostname: String?

    @Option(
        name: .customLong("federation-hostname"),
        help: ArgumentHelp(
            "The name the federated domain fabrikam.example's identity provider (AD FS, paths under /adfs/) is reached by: the same "
                + "listener, another host name. Default: localhost for 127.0.0.1, 127.0.0.1 for localhost, else sts.<hostname>.",
            valueName: "NAME"))
    var federationHostname: String?

    @Option(
        name: .customLong("device-registration-hostname"),
        help: ArgumentHelp(
            "The name the device registration service is reached by (clients such as roadtx hard-code "
                + "enterpriseregistration.windows.net): the same listener, another host name, covered by the --tls certificate. "
                + "Default: the emulator's own host name.",
            valueName: "NAME"))
    var deviceRegistrationHostname: String?

    @Option(help: "Port to listen on (0 = any free port).")
    var port = 0

    @Flag(help: "Serve HTTPS with a local CA created once in the state directory.")
    var tls = false

    @Option(name: .customLong("state-dir"), help: "Keep refresh tokens, sessions, consents, sign-ups, tasks and keys here.")
    var stateDirectory: String?

    @Option(help: "How many Contoso users (the demo accounts included).")
    var users = 300

    @Option(help: "Seed for the generated directory: the same seed gives the same users.")
    var seed = "sesame"

    @Option(
        name: .customLong("client"),
        help: ArgumentHelp("Register a public client: ID=REDIRECT_URI[,REDIRECT_URI…] (repeatable).", valueName: "ID=URI"))
    var clients: [String] = []

    @Option(
        name: .customLong("multi-tenant"),
        help: ArgumentHelp(
            "Make a client's sign-in audience any organization (repeatable); apps are single-tenant otherwise, and /common refuses them.",
            valueName: "ID"))
    var multiTenantClients: [String] = []

    @Flag(help: "Show one-time codes on the pages too (they are always printed on stdout).")
    var demo = false

    @Flag(
        name: .customLong("stop-when-input-ends"),
        help: "Stop when standard input ends: started by a program (sesame --demo) that holds it open, it ends with that program.")
    var stopWhenInputEnds = false

    @Option(
        name: .customLong("key-rollover"),
        help: ArgumentHelp(
            "Roll the signing key over every SECONDS (the old key stays published); POST /.emulator/keys/rotate does it at once.",
            valueName: "SECONDS"))
    var keyRollover: Int?

    @Option(
        name: .customLong("user-consent"),
        help: ArgumentHelp(
            "The tenant's user consent setting: allowed, or admin-only (every app needs an administrator's approval).", valueName: "POLICY")
    )
    var userConsent = "allowed"

    @Option(
        name: .customLong("policy"),
        help: ArgumentHelp(
            "A JSON file of each tenant's refusals: Conditional Access, consent, account states (docs/EMULATOR.md).", valueName: "FILE"))
    var policyFile: String?

    @Flag(
        help: "Be friendlier than the real services, for demos: every app multi-tenant, user consent always allowed, every Graph property.")
    var lenient = false

    @Option(
        name: .customLong("access-token-lifetime"),
        help: ArgumentHelp(
            "Seconds an access token lives (default: 60–90 minutes, as Entra; B2C one hour). Short lifetimes make clients refresh.",
            valueName: "SECONDS"))
    var accessTokenLifetime: Int?

    @Option(
        name: .customLong("device-code-lifetime"),
        help: ArgumentHelp("Seconds a device code lives (default 900, as Entra).", valueName: "SECONDS"))
    var deviceCodeLifetime = 900

    @Option(
        name: .customLong("authenticator-timeout"),
        help: ArgumentHelp(
            "Seconds a Microsoft Authenticator notification waits for the phone (default 55, as Entra); answer it with "
                + "'identity-emulator phone'.",
            valueName: "SECONDS"))
    var authenticatorTimeout = 55

    @Option(
        name: .customLong("device-code-interval"),
        help: ArgumentHelp("Seconds a device must wait between polls for its token (default 5, as Entra).", valueName: "SECONDS"))
    var deviceCodeInterval = 5

    @Option(
        help: ArgumentHelp(
            "Faults to inject, as FAMILY:KIND[=VALUE][@RATE],…: families signin, token, discovery, graph, tasks, all; kinds "
                + "status=CODE[/RETRY-AFTER], latency=MS, drop, truncate, non-json, html, trickle, oversized, revoke-refresh; "
                + "skew=SECONDS. Drawn from --seed. Change them while running with POST /.emulator/faults.",
            valueName: "SPEC"))
    var faults: String?

    @Option(
        name: .customLong("refresh-token-reuse"),
        help: ArgumentHelp(
            "What a refresh token redeemed twice does: allowed (Entra keeps it valid), or revoke-family (strict servers' reuse detection).",
            valueName: "POLICY"))
    var refreshTokenReuse = "allowed"

    @Option(
        name: .customLong("clock-offset"),
        help: ArgumentHelp(
            "Run the service's clock SECONDS ahead of this computer's (negative, as --clock-offset=-600: behind): its Date headers and tokens' times.",
            valueName: "SECONDS"))
    var clockOffset = 0

    func validate() throws {
        guard abs(clockOffset) <= 366 * 86_400 else { throw ValidationError("--clock-offset must be within a year, not \(clockOffset) s.") }
        guard RefreshTokenReuse(rawValue: refreshTokenReuse) != nil else {
            throw ValidationError("--refresh-token-reuse must be allowed or revoke-family, not '\(refreshTokenReuse)'.")
        }
        if let faults {
            do { _ = try FaultPlan.parse(faults) } catch { throw ValidationError("--faults: \(error)") }
        }
        for (option, name, example) in [
            ("--hostname", hostname, "login.contoso.test"), ("--federation-hostname", federationHostname, "sts.fabrikam.test"),
            ("--device-registration-hostname", deviceRegistrationHostname, "enterpriseregistration.windows.net"),
        ] {
            guard let name else { continue }
            let valid =
                !name.isEmpty && name.count <= 253 && name.first != "-" && name.first != "."
                && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }
            guard valid else {
                throw ValidationError("\(option) must be a DNS name such as \(example) (letters, digits, '-' and '.'), not '\(name)'.")
            }
        }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be between 0 and 65535.") }
        guard users >= 0 else { throw ValidationError("--users must be 0 or more.") }
        if let accessTokenLifetime, accessTokenLifetime <= 0 {
            throw ValidationError("--access-token-lifetime must be a positive number of seconds, not \(accessTokenLifetime).")
        }
        guard deviceCodeLifetime > 0 else {
            throw ValidationError("--device-code-lifetime must be a positive number of seconds, not \(deviceCodeLifetime).")
        }
        guard deviceCodeInterval > 0 else {
            throw ValidationError("--device-code-interval must be a positive number of seconds, not \(deviceCodeInterval).")
        }
        if let keyRollover, keyRollover <= 0 {
            throw ValidationError("--key-rollover must be a positive number of seconds, not \(keyRollover).")
        }
        guard UserConsentPolicy(rawValue: userConsent) != nil else {
            throw ValidationError("--user-consent must be allowed or admin-only, not '\(userConsent)'.")
        }
        for client in clients {
            do { _ = try ClientRegistration.parse(commandLine: client) } catch { throw ValidationError("\(error)") }
        }
        _ = try policies()
    }

    /// The `--policy` file's content, or a message that says what to fix in it.
    func policies() throws -> TenantPolicies {
        guard let policyFile else { return TenantPolicies() }
        guard let data = FileManager.default.contents(atPath: policyFile) else {
            throw ValidationError("--policy: cannot read \(policyFile).")
        }
        do {
            return try TenantPolicies.parse(data)
        } catch {
            throw ValidationError("--policy \(policyFile): \(error)")
        }
    }

    func run() async throws {
        var configuration = EmulatorConfiguration()
        configuration.host = host
        configuration.hostname = hostname?.lowercased()
        configuration.federationHostname = federationHostname?.lowercased()
        configuration.deviceRegistrationHostname = deviceRegistrationHostname?.lowercased()
        configuration.port = port
        configuration.tls = tls
        configuration.stateDirectory = stateDirectory.map { URL(filePath: $0) }
        configuration.userCount = users
        configuration.seed = seed
        configuration.extraClients = try clients.map(ClientRegistration.parse(commandLine:))
        configuration.multiTenantClients = Set(multiTenantClients)
        configuration.lenient = lenient
        configuration.userConsent = UserConsentPolicy(rawValue: userConsent) ?? .allowed
        configuration.policies = try policies()
        configuration.keyRolloverInterval = keyRollover.map(TimeInterval.init)
        configuration.demoMode = demo
        configuration.accessTokenLifetime = accessTokenLifetime
        configuration.deviceCodeLifetime = deviceCodeLifetime
        configuration.deviceCodeInterval = deviceCodeInterval
        guard authenticatorTimeout > 0 else { throw ValidationError("--authenticator-timeout must be a positive number of seconds.") }
        configuration.authenticatorTimeout = TimeInterval(authenticatorTimeout)
        if let faults { configuration.faults = try FaultPlan.parse(faults) }
        configuration.refreshTokenReuse = RefreshTokenReuse(rawValue: refreshTokenReuse) ?? .allowed
        configuration.clockOffset = TimeInterval(clockOffset)
        configuration.announce = { line in Self.say(line) }

        if stopWhenInputEnds { Self.stopWhenInputEnds() }
        Self.endWithinShutdownLimitOnceAsked()
        let emulator: IdentityEmulator
        do {
            emulator = try await IdentityEmulator(configuration: configuration)
        } catch {
            StandardStream.error.write("identity-emulator: \(error)\n")
            throw ExitCode.failure
        }
        for warning in await emulator.warnings {
            StandardStream.error.write("identity-emulator: \(warning)\n")
        }
        do {
            try await emulator.run { base, caCertificate in
                Self.say("identity-emulator listening on \(base.absoluteString)")
                if let caCertificate { Self.say("ca-certificate \(caCertificate)") }
            }
        } catch {
            StandardStream.error.write("identity-emulator: cannot serve on \(host):\(port): \(error)\n")
            throw ExitCode.failure
        }
    }

    /// Ends the process once standard input reaches its end (the program holding its other end
    /// ended, however it ended): a dispatch source reads what comes, and the end ends it.
    static func stopWhenInputEnds() {
        let source = DispatchSource.makeReadSource(fileDescriptor: 0, queue: .global())
        source.setEventHandler {
            var buffer = [UInt8](repeating: 0, count: 256)
            let count = Glibc.read(0, &buffer, buffer.count)
            if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN) { Glibc.exit(0) }
        }
        source.resume()
        inputWatch = source
    }

    nonisolated(unsafe) private static var inputWatch: (any DispatchSourceRead)?

    /// SIGTERM or SIGINT starts the emulator's graceful shutdown (in `run`); this bounds it. What
    /// is still being cancelled ``IdentityEmulator/shutdownLimit`` later ends with the process,
    /// status 0 as a graceful end: it was asked to end, and it did.
    static func endWithinShutdownLimitOnceAsked() {
        signalWatches = [SIGTERM, SIGINT].map { number in
            // ServiceGroup sets both signals to be ignored too; a dispatch source sees them either way.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            let limit = IdentityEmulator.shutdownLimit.components
            let milliseconds = Int(limit.seconds) * 1_000 + Int(limit.attoseconds / 1_000_000_000_000_000)
            source.setEventHandler {
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) {
                    Glibc._exit(0)
                }
            }
            source.resume()
            return source
        }
    }

    nonisolated(unsafe) private static var signalWatches: [any DispatchSourceSignal] = []

    /// One line on stdout, written at once (tools read these lines while the emulator runs).
    static func say(_ line: String) {
        StandardStream.output.write((line + "\n"))
    }
}

/// Standard output and error, written whole (Foundation's `FileHandle`, without Foundation).
enum StandardStream {
    case output, error

    /// Writes `text`; a stream that is gone has nowhere to say so.
    func write(_ text: String) {
        var bytes = Array(text.utf8)
        let descriptor = self == .output ? STDOUT_FILENO : STDERR_FILENO
        while !bytes.isEmpty {
            let written = Glibc.write(descriptor, bytes, bytes.count)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes.removeFirst(written)
        }
    }
}
