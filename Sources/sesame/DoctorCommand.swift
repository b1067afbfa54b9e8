import ArgumentParser
import FoundationEssentials
import SesameCommandLine
import SesameCore
import SesameKeyring
import SesameService
import SesameWindowModel

extension SesameCommand {
    /// `sesame doctor`: what an administrator runs when sign-in fails at work.
    struct Doctor: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check what sign-in needs: proxies, discovery, certificates, endpoints, the clock, the keyring.",
            discussion: """
                For each account type: the proxy each endpoint takes (credentials masked), whether discovery and the signing \
                keys can be fetched and how long that takes, who issued each server's certificate, the endpoints and client \
                authentication a sign-in would use, and this computer's clock against the service's; then whether the \
                keyring answers and where sign-ins are kept. Each line is OK or says what to fix; the exit status is 1 when \
                something needs fixing. Nothing secret is printed, and no sign-in or token request is made — except with \
                --mail, which asks for the mail permission's token silently and signs in to each server named (imaps://host, \
                smtp://host for STARTTLS on 587), checking the permission granted and the token's audience on the way.
                """)
        @OptionGroup var options: CommonOptions
        @Option(
            help: ArgumentHelp(
                "A mail server to sign in to (repeatable): imaps://outlook.office365.com, smtp://smtp.office365.com.", valueName: "URL"))
        var mail: [String] = []
        @Option(help: "The account type --mail uses.") var accountType = "myGraphService"
        @Option(help: "The account --mail uses, when the type has several.") var account: String?

        func validate() throws {
            for server in mail where URL(string: server).flatMap(MailServerAddress.init(url:)) == nil {
                throw ValidationError("--mail takes imaps://, imap://, smtps:// or smtp:// with a host, not '\(server)'.")
            }
        }

        func run() throws {
            let (options, mail, accountType, account) = (options, mail, accountType, account)
            // The bus is asked on the main thread, before it waits for the checks.
            let broker = MainActor.assumeIsolated { DoctorBroker(environment: ProcessInfo.processInfo.environment).lines() }
            let healthy = try runBlocking {
                options.bootstrapLogging()
                let files = try options.loadEachSettingsFile()
                // The app's own resolver and transport: the routes printed are the routes taken.
                let resolver = DesktopProxyResolver()
                let check = HealthCheck(transport: SesameCommand.desktopTransport(resolver: resolver), proxyResolver: resolver)
                var report = DoctorReport()
                for file in files {
                    switch file {
                    case .success(let file): report.add(await check.diagnose(file))
                    case .failure(let error): report.add(error)
                    }
                }
                report.addStorage(SecretServiceTokenStorage.diagnosis())
                if let last = RefusalNotice.latest(environment: ProcessInfo.processInfo.environment) { report.addLastRefusal(last) }
                report.addBroker(broker)
                report.addDevice(await DoctorDevice.lines())
                if !mail.isEmpty {
                    let (store, _) = try await options.store(bootstrapLogging: false)
                    let servers = mail.compactMap { URL(string: $0).flatMap(MailServerAddress.init(url:)) }
                    report.addMail(await DoctorMail(store: store, accountType: accountType, username: account, servers: servers).lines())
                }
                report.finish()
                print(report.text, terminator: "")
                return report.isHealthy
            }
            if !healthy { throw ExitCode(1) }
        }
    }
}
