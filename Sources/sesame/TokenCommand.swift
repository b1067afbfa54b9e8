import ArgumentParser
import FoundationEssentials
import SesameCommandLine
import SesameCore
import SesameGIO
import SesameService
import SesameSystem
import SesameWindowModel

/// `sesame token`: a token without a sign-in page, for scripts and mail clients (`PassCmd`,
/// `passwordeval`, `imap_oauth_refresh_command`). When only a sign-in can give a token, it says
/// which command starts one and exits with 2. Run by a program, it goes through the account
/// service, which asks the user the first time about that program (it says on standard error
/// that it waits for the answer).
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print an access token for an account, without interaction.",
        discussion: """
            Mail clients: --scope imap, smtp, pop or mail (IMAP and SMTP) names Exchange Online's permissions; \
            --format xoauth2 or oauthbearer prints the SASL string a client sends, json the token with its expiry. \
            Exit status: 0 the token was printed; 2 only a sign-in can give one (stderr says which command starts it); \
            1 anything else (stderr says what).
            """)

    /// What is printed.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        /// The access token alone (what `PassCmd` and `passwordeval` want).
        case token
        /// SASL XOAUTH2's initial response, base64.
        case xoauth2
        /// SASL OAUTHBEARER's initial response (RFC 7628), base64.
        case oauthbearer
        /// `{"access_token", "token_type", "expires_on", "expires_in", "username"}`.
        case json
    }

    @OptionGroup var options: CommonOptions
    @Option(help: "The account type (e.g. myGraphService).") var accountType: String
    @Option(help: "A scope the token must carry (repeatable); imap, smtp, pop or mail for Exchange Online's.")
    var scope: [String] = []
    @Option(help: "The account's username, when the type has several.") var account: String?
    @Option(help: "What to print: token, xoauth2, oauthbearer or json.") var format: Format = .token
    @Option(help: "The mail server's host name, for --format oauthbearer.") var host: String?
    @Option(help: "The mail server's port, for --format oauthbearer.") var port: Int?

    var scopes: [String] { scope.flatMap(MailScope.expand) }

    func validate() throws {
        if let port, !(1...65535).contains(port) { throw ValidationError("--port must be between 1 and 65535, not \(port).") }
        if (host != nil || port != nil) && format != .oauthbearer {
            throw ValidationError("--host and --port belong to --format oauthbearer.")
        }
    }

    func run() throws {
        Termination.installForCommand()
        let scopes = scopes
        // Run by a program, not typed by a person: the account service decides, started if need be.
        let requester = ProcessIdentification().tokenCommandRequester(Posix.processID) ?? .person
        let byProgram = requester != .person
        let answer = ServiceClient.call(
            "GetAccessToken", [.string(accountType), .string(account ?? ""), .strings(scopes)], startService: byProgram
        ) { program, username in
            Posix.writeStandardError(
                "sesame: waiting for your answer in Sesame's window: may \(DisplayText.escaped(program)) use "
                    // The service names the account only to a program that named it or may see it.
                    + "\(username.isEmpty ? "your account" : DisplayText.escaped(username))?\n"
            )
        }
        switch answer {
        case .answered(let values):
            let token = Secret(values.first?.string ?? "")
            let expiresOn = Date(timeIntervalSince1970: TimeInterval(values.dropFirst().first?.int64 ?? 0))
            print(try render(token, expiresOn: expiresOn, username: { try serviceUsername() }))
            return
        case .failed(let error):
            // The tenant said no: printed and recorded as when the command meets the refusal itself.
            if let refusal = RefusalMessage(text: error.message), refusal.details.errorCode != "AADSTS65001" {
                let code: AccountStoreError.Code =
                    ServiceClient.kind(error) == "InteractionRequired" ? .interactionRequired : .authorizationFailed
                try report(refusal.storeError(code))
            }
            let needsSignIn = ["InteractionRequired", "NoSuchAccount"].contains(ServiceClient.kind(error))
            let advice = needsSignIn ? " " + signInAdvice(username: account, consentMissing: error.message.contains("AADSTS65001")) : ""
            Posix.writeStandardError("sesame: \(ServiceClient.sentence(error))\(advice)\n")
            throw ExitCode(needsSignIn ? ExitStatus.signInNeeded : ServiceClient.exitStatus(error))
        case .notRunning where byProgram:
            // Nobody can ask the user about the program: no token, rather than one the user was not asked about.
            Posix.writeStandardError(
                "sesame: Sesame's account service is not running and D-Bus cannot start it, so nobody can ask you whether "
                    + "\(Self.requesterName(requester)) may use your account. Start Sesame (or `sesame --service`) and run this again; "
                    + "`sesame doctor` says why it cannot be started.\n")
            throw ExitCode(1)
        case .notRunning, .noBus:
            // Typed by the person, or no session bus at all (an SSH login, cron): the store itself.
            // Without a bus there is no keyring either, so what it reads is files any program of
            // this user could read; docs/SECURITY.md.
            break
        }
        let (options, account, accountType) = (options, account, accountType)
        let printed = try runBlocking { () async throws -> String in
            let (store, _) = try await options.store()
            let accounts: [Account]
            do {
                accounts = try await Self.accounts(of: store, type: accountType, username: account)
            } catch let error as AccountStoreError where TenantRefusal(serviceCode: error.serviceCode) != nil {
                // The organization refused this computer's sign-in (a policy asking for a managed device).
                try report(error)
            }
            let signedIn = try pick(account, from: accounts, type: accountType)
            do {
                let token = try await store.accessToken(for: signedIn, scopes: scopes.isEmpty ? nil : scopes)
                return try render(token.secret, expiresOn: token.expiresOn, username: { signedIn.username })
            } catch let error as AccountStoreError
                where error.serviceCode != "AADSTS65001" && TenantRefusal(serviceCode: error.serviceCode) != nil
            {
                try report(error)
            } catch let error as AccountStoreError where error.code == .storageUnavailable {
                throw error
            } catch let error as AccountStoreError where error.code == .interactionRequired {
                let consentMissing = error.serviceCode == "AADSTS65001"
                let said =
                    consentMissing ? "Sesame may not use these permissions for \(signedIn.username) yet." : UserMessage.text(for: error)
                Posix.writeStandardError(
                    "sesame: \(said) \(signInAdvice(username: signedIn.username, consentMissing: consentMissing))\n")
                throw ExitCode(2)
            } catch let error as AccountStoreError {
                Posix.writeStandardError("sesame: \(UserMessage.text(for: error))\n")
                throw ExitCode(1)
            }
        }
        print(printed)
    }

    /// The type's signed-in accounts; with none, the one this computer's Primary Refresh Token
    /// signs in with no page, when the computer is registered and the PRT serves the app.
    static func accounts(of store: AccountStore, type: String, username: String?) async throws -> [Account] {
        let accounts = try await store.accounts(ofType: type)
        guard accounts.isEmpty else { return accounts }
        do {
            let signedIn = try await store.signInWithDevice(accountType: type, parameters: username.map { ["login_hint": $0] } ?? [:])
            await DeviceCommand.sayLoss(of: store)
            return signedIn.map { [$0] } ?? []
        } catch {
            await DeviceCommand.sayLoss(of: store)
            throw error
        }
    }

    /// The tenant said no: what it means, the one thing to do, what the help desk needs — printed,
    /// and kept for `sesame doctor`.
    private func report(_ error: AccountStoreError) throws -> Never {
        let configuration = try? options.profiles().first(where: { $0.accountType == accountType })?.accountConfiguration
        let notice = RefusalNotice(error, configuration: configuration, scopes: scopes)
        notice?.record(environment: ProcessInfo.processInfo.environment)
        Posix.writeStandardError("sesame: \(notice?.commandLineText ?? UserMessage.text(for: error))\n")
        throw ExitCode(error.code == .interactionRequired ? 2 : 1)
    }

    /// The requesting program's name, as a sentence shows it.
    private static func requesterName(_ requester: TokenCommandRequester) -> String {
        guard case .program(let caller) = requester else { return "the program that ran this command" }
        return DisplayText.escaped(caller.program.name)
    }

    /// The token as `format` asks.
    private func render(_ token: Secret, expiresOn: Date, username: () throws -> String) throws -> String {
        switch format {
        case .token: return token.revealed
        case .xoauth2: return SASLResponse.xoauth2(user: try username(), token: token)
        case .oauthbearer: return SASLResponse.oauthBearer(user: try username(), token: token, host: host, port: port)
        case .json:
            let expiresOn = Int(expiresOn.timeIntervalSince1970)
            let printed = PrintedToken(
                accessToken: token.revealed, tokenType: "Bearer", expiresOn: expiresOn,
                expiresIn: max(0, expiresOn - Int(Date().timeIntervalSince1970)), username: try username())
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return String(decoding: try encoder.encode(printed), as: UTF8.self)
        }
    }

    /// `--format json`'s object.
    private struct PrintedToken: Encodable {
        let accessToken: String
        let tokenType: String
        /// Seconds since 1970.
        let expiresOn: Int
        let expiresIn: Int
        let username: String

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case tokenType = "token_type"
            case expiresOn = "expires_on"
            case expiresIn = "expires_in"
            case username
        }
    }

    /// The user name of the account the service answered for: the one named, or the type's only one.
    private func serviceUsername() throws -> String {
        if let account { return account }
        guard case .answered(let values) = ServiceClient.call("ListAccounts", []), case .dictionaries(let list)? = values.first else {
            throw ValidationError("Name the account with --account: the account service did not list it.")
        }
        let mine = list.map { Dictionary($0, uniquingKeysWith: { first, _ in first }) }
            .filter { $0["account_type"]?.string == accountType }
            .compactMap { $0["username"]?.string }
        guard mine.count == 1, let only = mine.first else {
            throw ValidationError("Name the account with --account (\(mine.joined(separator: ", "))).")
        }
        return only
    }

    /// Which command signs in with these permissions; when the permissions were never given
    /// (`consentMissing`: AADSTS65001) and they are Exchange's, also the link an administrator
    /// approves the app with, for an organization that lets only them consent.
    private func signInAdvice(username: String?, consentMissing: Bool) -> String {
        let named = scope.map { "--scope \($0)" }.joined(separator: " ")
        let command = "`sesame login --account-type \(accountType)\(named.isEmpty ? "" : " " + named)`"
        var advice = "Sign in\(username.map { " as \($0)" } ?? "") with \(command)."
        guard consentMissing, scopes.contains(where: MailScope.isExchange),
            let profile = try? options.profiles().first(where: { $0.accountType == accountType }),
            let link = profile.accountConfiguration.adminConsentURL(scopes: scopes)
        else { return advice }
        advice +=
            " If that sign-in says \"Need admin approval\", your organization lets only administrators approve apps: "
            + "send your IT administrator this link to approve Sesame for everyone: \(link.absoluteString)"
        return advice
    }
}
