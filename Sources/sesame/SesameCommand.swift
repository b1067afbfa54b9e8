import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import SesameCore
import SesameGtk
import SesameKeyring
import SesameSamples
import SesameService
import SesameSystem

/// `sesame`: the window by default, and headless commands over the same store. `main` is
/// synchronous: the window runs GLib's main loop on the main thread; the headless commands run
/// their async work off it and wait.
@main
struct SesameCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sesame",
        abstract: "Sign in to the Microsoft identity platform from the Linux desktop.",
        version: SesameVersion.current,
        subcommands: [Window.self, LoginCommand.self, Accounts.self, TokenCommand.self, SignOut.self, Doctor.self],
        defaultSubcommand: Window.self)
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
    // What the command stored is on the disk before the process ends.
    Durability.shared.waitUntilFlushed()
    return try outcome.result!.get()
}

/// As ``runBlocking(_:)``, and Ctrl-C (SIGINT) cancels the work instead of killing the process,
/// so that it can stop cleanly and say so.
func runBlockingUntilInterrupted<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = BlockingOutcome<T>()
    let done = DispatchSemaphore(value: 0)
    let task = Task.detached {
        do { outcome.result = .success(try await body()) } catch { outcome.result = .failure(error) }
        done.signal()
    }
    signal(SIGINT, SIG_IGN)
    let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    interrupt.setEventHandler { task.cancel() }
    interrupt.resume()
    done.wait()
    Durability.shared.waitUntilFlushed()
    interrupt.cancel()
    signal(SIGINT, SIG_DFL)
    return try outcome.result!.get()
}

/// The result a ``runBlocking(_:)`` waits for; written once before the semaphore is signalled.
private final class BlockingOutcome<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}

/// Options shared by every command.
struct CommonOptions: ParsableArguments {
    @Option(name: .customLong("settings"), help: "A settings.plist (repeatable); the bundled samples when absent.")
    var settingsFiles: [String] = []

    @Flag(help: "Log what happens (never a secret) to stderr.")
    var verbose = false

    @Option(help: ArgumentHelp("Point the bundled settings at an identity emulator at URL (e.g. http://127.0.0.1:8400).", valueName: "URL"))
    var emulator: String?

    @Option(
        name: .customLong("sign-in-with"),
        help: ArgumentHelp(
            "Where interactive sign-ins happen: webview (the window's own page) or browser (your default browser); "
                + "overrides each settings file's signInWith.", valueName: "webview|browser"))
    var signInWith: String?

    /// The settings of every profile, bundled or given, pointed at the emulator when asked; each
    /// file's warnings (keys its shape does not read) are printed to stderr. Call it once per run.
    func profiles() throws -> [SampleSettings] {
        try loadSettings().map(\.settings)
    }

    /// The settings files as read (settings pointed at the emulator when asked), their warnings
    /// printed to stderr once, as `sesame: warning: <file>: …`.
    /// - Throws: `ValidationError` with the first file that cannot be used.
    func loadSettings() throws -> [SettingsFile] {
        try loadEachSettingsFile().map { loaded in
            switch loaded {
            case .success(let file): return file
            case .failure(let error): throw ValidationError("\(error)")
            }
        }
    }

    /// Each settings file as read, or why it cannot be used (`sesame doctor` reports a broken
    /// file and goes on with the others); the warnings of those read are printed to stderr once.
    func loadEachSettingsFile() throws -> [Result<SettingsFile, SettingsError>] {
        let files = settingsFiles.isEmpty ? try BundledResources.settingsFiles() : settingsFiles.map { URL(fileURLWithPath: $0) }
        let base = try emulatorURL()
        var method: SignInMethod?
        if let signInWith {
            guard let chosen = SignInMethod(rawValue: signInWith.lowercased()) else {
                throw ValidationError("--sign-in-with must be webview or browser, not '\(signInWith)'.")
            }
            method = chosen
        }
        return files.map { file in
            Result { () throws(SettingsError) -> SettingsFile in
                var loaded = try SettingsFile.load(contentsOf: file)
                if let method { loaded.settings.signInWith = method }
                if let base { loaded.settings = loaded.settings.pointed(at: base) }
                Self.printWarnings(of: loaded)
                return loaded
            }
        }
    }

    /// The most warnings printed for one file: a file of thousands of stray keys gets a count.
    static let warningsPrintedPerFile = 20

    static func printWarnings(of file: SettingsFile) {
        for warning in file.warnings.prefix(warningsPrintedPerFile) {
            Posix.writeStandardError("sesame: warning: \(warning)\n")
        }
        let more = file.warnings.count - warningsPrintedPerFile
        if more > 0 {
            let line = "sesame: warning: \(file.path): and \(more) more keys \(file.settings.shape.settingsFileName) does not read\n"
            Posix.writeStandardError(line)
        }
    }

    func emulatorURL() throws -> URL? {
        guard let emulator else { return nil }
        guard let url = URL(string: emulator), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
            throw ValidationError("--emulator needs an http(s) URL such as http://127.0.0.1:8400, got '\(emulator)'.")
        }
        return url
    }

    func bootstrapLogging() {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = verbose ? .debug : .warning
            return handler
        }
    }

    /// A store over the preferred storage, configured with every profile; `bootstrapLogging`:
    /// false when the command has set logging up already (it can be set up once).
    func store(bootstrapLogging bootstrap: Bool = true) async throws -> (AccountStore, [SampleSettings]) {
        if bootstrap { bootstrapLogging() }
        let profiles = try profiles()
        let (storage, notice) = try SecretServiceTokenStorage.chosen()
        if let notice { Posix.writeStandardError("sesame: note: \(notice)\n") }
        let store = AccountStore(storage: storage, transport: SesameCommand.desktopTransport())
        for profile in profiles {
            await store.setConfiguration(profile.accountConfiguration, forAccountType: profile.accountType)
        }
        return (store, profiles)
    }
}

extension SesameCommand {
    /// The HTTP transport of the window and of every command: each request through the proxy the
    /// desktop gives for its URL (GIO's resolver, as WebKit's).
    static func desktopTransport(resolver: DesktopProxyResolver = DesktopProxyResolver()) -> AsyncHTTPClientTransport {
        AsyncHTTPClientTransport(proxyResolver: resolver)
    }
}

extension SesameCommand {
    /// `sesame accounts`: the signed-in accounts of every account type.
    struct Accounts: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the signed-in accounts of each account type.")
        @OptionGroup var options: CommonOptions

        func run() throws {
            let options = options
            if case .answered(let values) = ServiceClient.call("ListAccounts", []), case .dictionaries(let list)? = values.first {
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
            let (options, account, accountType) = (options, account, accountType)
            switch ServiceClient.call("SignOut", [.string(accountType), .string(account ?? "")]) {
            case .answered:
                print("Signed out \(account ?? "the account") (\(accountType)).")
                return
            case .failed(let error):
                Posix.writeStandardError("sesame: \(error.message)\n")
                throw ExitCode(ServiceClient.kind(error) == "NoSuchAccount" ? 2 : 1)
            case .notRunning:
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
