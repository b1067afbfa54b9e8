import ArgumentParser
import FoundationEssentials
import Logging
import SesameCore
import SesameKeyring
import SesameService
import SesameSystem

/// Options shared by every command.
public struct CommonOptions: ParsableArguments, Sendable {
    public init() {}

    @Option(name: .customLong("settings"), help: "A settings.plist (repeatable); the bundled samples when absent.")
    public var settingsFiles: [String] = []

    @Flag(help: "Log what happens (never a secret) to stderr.")
    public var verbose = false

    @Option(help: ArgumentHelp("Point the bundled settings at an identity emulator at URL (e.g. http://127.0.0.1:8400).", valueName: "URL"))
    public var emulator: String?

    @Option(
        name: .customLong("sign-in-with"),
        help: ArgumentHelp(
            "Where interactive sign-ins happen: webview (the window's own page) or browser (your default browser); "
                + "overrides each settings file's signInWith.", valueName: "webview|browser"))
    public var signInWith: String?

    /// The settings of every profile, bundled or given, pointed at the emulator when asked; each
    /// file's warnings (keys its shape does not read) are printed to stderr. Call it once per run.
    public func profiles() throws -> [SampleSettings] {
        try loadSettings().map(\.settings)
    }

    /// The settings files as read (settings pointed at the emulator when asked), their warnings
    /// printed to stderr once, as `sesame: warning: <file>: …`.
    /// - Throws: `ValidationError` with the first file that cannot be used.
    public func loadSettings() throws -> [SettingsFile] {
        try loadEachSettingsFile().map { loaded in
            switch loaded {
            case .success(let file): return file
            case .failure(let error): throw ValidationError("\(error)")
            }
        }
    }

    /// Each settings file as read, or why it cannot be used (`sesame doctor` reports a broken
    /// file and goes on with the others); the warnings of those read are printed to stderr once.
    public func loadEachSettingsFile() throws -> [Result<SettingsFile, SettingsError>] {
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
    public static let warningsPrintedPerFile = 20

    public static func printWarnings(of file: SettingsFile) {
        for warning in file.warnings.prefix(warningsPrintedPerFile) {
            Posix.writeStandardError("sesame: warning: \(warning)\n")
        }
        let more = file.warnings.count - warningsPrintedPerFile
        if more > 0 {
            let line =
                "sesame: warning: \(DisplayText.escaped(file.path)): and \(more) more keys "
                + "\(file.settings.shape.settingsFileName) does not read\n"
            Posix.writeStandardError(line)
        }
    }

    public func emulatorURL() throws -> URL? {
        guard let emulator else { return nil }
        guard let url = URL(string: emulator), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
            throw ValidationError("--emulator needs an http(s) URL such as http://127.0.0.1:8400, got '\(emulator)'.")
        }
        return url
    }

    public func bootstrapLogging() {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = verbose ? .debug : .warning
            return handler
        }
    }

    /// A store over the preferred storage, configured with every profile; `bootstrapLogging`:
    /// false when the command has set logging up already (it can be set up once).
    public func store(bootstrapLogging bootstrap: Bool = true) async throws -> (AccountStore, [SampleSettings]) {
        if bootstrap { bootstrapLogging() }
        let profiles = try profiles()
        // Typed by a person at a terminal, a locked keyring shows its own unlock prompt, as
        // `secret-tool` does, and the command says it waits for it; run by a program (a mail
        // program's password command), no dialog comes out of nowhere: the command says the
        // keyring is locked. So does a terminal with no display (an SSH login, a text console):
        // no prompt would show there, and the command would wait for it in silence.
        let typed = Posix.isTerminal("/proc/self/fd/0")
        let environment = ProcessInfo.processInfo.environment
        let display = !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
        var onLocked: (@Sendable (_ prompting: Bool) -> Void)?
        if typed { onLocked = { prompting in CommonOptions.sayLocked(prompting: prompting) } }
        let (storage, notice) = try SecretServiceTokenStorage.chosen(promptsToUnlock: typed && display, onLocked: onLocked)
        if let notice { Posix.writeStandardError("sesame: note: \(notice)\n") }
        let transport = CommonOptions.desktopTransport()
        let store = AccountStore(
            storage: storage, transport: transport, device: DeviceIdentity.desktop(for: storage, transport: transport))
        for profile in profiles {
            await store.setConfiguration(profile.accountConfiguration, forAccountType: profile.accountType)
        }
        return (store, profiles)
    }

    /// What a command typed at a terminal says when the keyring holding the sign-ins is locked:
    /// what it waits for, or why no prompt shows (the status-3 sentence follows).
    static func sayLocked(prompting: Bool) {
        Posix.writeStandardError(
            prompting
                ? "sesame: the keyring holding your sign-ins is locked: waiting for you to unlock it in the keyring's own prompt "
                    + "(the password goes to the keyring, never to Sesame).\n"
                : "sesame: no display here for the keyring's unlock prompt: unlock the keyring in your desktop session "
                    + "(logging in to it unlocks it), then run this again.\n")
    }

    /// The HTTP transport of the window, the service and every command: each request through the
    /// proxy the desktop gives for its URL (GIO's resolver, as WebKit's).
    public static func desktopTransport(resolver: DesktopProxyResolver = DesktopProxyResolver()) -> AsyncHTTPClientTransport {
        AsyncHTTPClientTransport(proxyResolver: resolver)
    }
}
