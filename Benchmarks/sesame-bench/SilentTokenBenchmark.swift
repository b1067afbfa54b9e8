import Foundation
import SesameCore
import SesameKeyring
import SesameSamples
import SesameService
import SesameTestSupport
import SesameWindowModel

/// `sesame-bench silent-token EMULATOR_URL STORAGE CACHE_COPY [ROUNDS]`: signs alex in to the
/// Directory sample through the emulator's pages (headless), then asks the store for his token
/// without interaction, in process, as fast as it answers — ROUNDS (5) of one second — and prints one
/// JSON line: `{"store": …, "rounds": [acquisitions per second, …]}`. STORAGE is `files` (a
/// temporary folder) or `keyring` (the session's Secret Service). The cache's JSON is copied to
/// CACHE_COPY, so that MSAL for Python can be measured on the same content.
///
/// `sesame-bench prt-token EMULATOR_URL [ROUNDS]`: a registered device's PRT against a refresh
/// token (``DeviceIdentityBenchmark``).
///
/// `sesame-bench allow-program EMULATOR_URL SESAME_DATA_DIR PROGRAM CACHE_COPY`: signs alex in
/// into the file store in SESAME_DATA_DIR (`$XDG_DATA_HOME/sesame` of a `sesame --service` to
/// come) and records the user's "Always" for the executable PROGRAM on his account (scope
/// `User.Read`), as the window's question would: the D-Bus figure's setup.
///
/// `sesame-bench mail-account EMULATOR_URL SESAME_DATA_DIR PROGRAM CACHE_COPY`: signs alex in with
/// the mail permissions (`sesame login --scope mail`'s sign-in) into the file store in
/// SESAME_DATA_DIR, gets his IMAP token once, so that `sesame token --scope imap` finds it warm, and
/// records the user's "Always" for PROGRAM — the mail program that runs the command (the bench's
/// interpreter) — on Exchange's resource: the mail figure's setup.
@main
struct SilentTokenBenchmark {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "allow-program", arguments.count == 5, let base = URL(string: arguments[1]) {
            do {
                try await allowProgram(
                    base: base, data: URL(filePath: arguments[2]), program: arguments[3], cacheCopy: URL(filePath: arguments[4]))
            } catch {
                FileHandle.standardError.write(Data("sesame-bench: \(error)\n".utf8))
                exit(1)
            }
            return
        }
        if arguments.first == "mail-account", arguments.count == 5, let base = URL(string: arguments[1]) {
            do {
                try await mailAccount(
                    base: base, data: URL(filePath: arguments[2]), program: arguments[3], cacheCopy: URL(filePath: arguments[4]))
            } catch {
                FileHandle.standardError.write(Data("sesame-bench: \(error)\n".utf8))
                exit(1)
            }
            return
        }
        if arguments.first == "prt-token", (2...3).contains(arguments.count), let base = URL(string: arguments[1]) {
            do {
                try await DeviceIdentityBenchmark.run(base: base, rounds: arguments.count == 3 ? max(1, Int(arguments[2]) ?? 5) : 5)
            } catch {
                FileHandle.standardError.write(Data("sesame-bench: \(error)\n".utf8))
                exit(1)
            }
            return
        }
        guard (4...5).contains(arguments.count), arguments[0] == "silent-token", let base = URL(string: arguments[1]) else {
            FileHandle.standardError.write(Data("usage: sesame-bench silent-token EMULATOR_URL files|keyring CACHE_COPY [ROUNDS]\n".utf8))
            exit(64)
        }
        let rounds = arguments.count == 5 ? max(1, Int(arguments[4]) ?? 5) : 5
        do {
            try await silentToken(base: base, storageKind: arguments[2], cacheCopy: URL(filePath: arguments[3]), rounds: rounds)
        } catch {
            FileHandle.standardError.write(Data("sesame-bench: \(error)\n".utf8))
            exit(1)
        }
    }

    static func silentToken(base: URL, storageKind: String, cacheCopy: URL, rounds count: Int) async throws {
        let storage: any TokenStorage
        let folder = FileManager.default.temporaryDirectory.appending(path: "sesame-bench-\(UUID().uuidString)")
        switch storageKind {
        case "files": storage = FileTokenStorage(directory: folder)
        case "keyring": storage = SecretServiceTokenStorage()
        default: throw BenchError("storage is files or keyring, not \(storageKind)")
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        let settings = try SampleSettings.load(contentsOf: Repository.settings("directory.plist")).pointed(at: base)
        let store = AccountStore(storage: storage)
        await store.setConfiguration(settings.accountConfiguration, forAccountType: settings.accountType)
        let alex = try await store.signIn(accountType: settings.accountType, using: HeadlessSignIn(base: base))
        _ = try await store.accessToken(for: alex, scopes: ["User.Read"])  // the access token cached

        // The same content for MSAL: the cache as stored.
        let group = settings.accountConfiguration.storageGroup
        _ = try storage.transact(group: group) { data in
            if let data { try? data.write(to: cacheCopy) }
            return .keep
        }

        var rounds: [Double] = []
        for _ in 0..<count {
            let started = ContinuousClock.now
            var count = 0
            while started.duration(to: .now) < .seconds(1) {
                _ = try await store.accessToken(for: alex, scopes: ["User.Read"])
                count += 1
            }
            rounds.append(Double(count) / (started.duration(to: .now) / .seconds(1)))
        }
        try? await store.remove(alex)
        let line = try JSONSerialization.data(withJSONObject: ["store": storageKind, "rounds": rounds])
        print(String(decoding: line, as: UTF8.self))
    }
}

extension SilentTokenBenchmark {
    static func allowProgram(base: URL, data: URL, program: String, cacheCopy: URL) async throws {
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        try Data("files\n".utf8).write(to: data.appending(path: "storage"))
        let storage = FileTokenStorage(directory: data)
        let settings = try SampleSettings.load(contentsOf: Repository.settings("directory.plist")).pointed(at: base)
        let store = AccountStore(storage: storage)
        await store.setConfiguration(settings.accountConfiguration, forAccountType: settings.accountType)
        let alex = try await store.signIn(accountType: settings.accountType, using: HeadlessSignIn(base: base))
        let token = try await store.accessToken(for: alex, scopes: ["User.Read"])
        _ = try storage.transact(group: settings.accountConfiguration.storageGroup) { bytes in
            if let bytes { try? bytes.write(to: cacheCopy) }
            return .keep
        }
        guard let identity = ProgramIdentity.executable(program) else { throw BenchError("\(program) is no program path") }
        await MainActor.run {
            ProgramAccess(file: data.appending(path: "program-access.json"))
                .record(.always, for: AccessRequest(program: identity, account: alex, resource: "", scopes: token.scopes))
        }
        print(#"{"account": "alex@contoso.onmicrosoft.com"}"#)
    }
}

extension SilentTokenBenchmark {
    static func mailAccount(base: URL, data: URL, program: String, cacheCopy: URL) async throws {
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        try Data("files\n".utf8).write(to: data.appending(path: "storage"))
        let storage = FileTokenStorage(directory: data)
        let settings = try SampleSettings.load(contentsOf: Repository.settings("directory.plist")).pointed(at: base)
        let store = AccountStore(storage: storage)
        await store.setConfiguration(settings.accountConfiguration, forAccountType: settings.accountType)
        let alex = try await store.signIn(
            accountType: settings.accountType, additionalScopes: MailScope.expand("mail"), using: HeadlessSignIn(base: base))
        let token = try await store.accessToken(for: alex, scopes: [MailScope.imap.scope])
        _ = try storage.transact(group: settings.accountConfiguration.storageGroup) { bytes in
            if let bytes { try? bytes.write(to: cacheCopy) }
            return .keep
        }
        guard let identity = ProgramIdentity.executable(program) else { throw BenchError("\(program) is no program path") }
        await MainActor.run {
            ProgramAccess(file: data.appending(path: "program-access.json")).record(
                .always,
                for: AccessRequest(
                    program: identity, account: alex, resource: ScopeResource.of(MailScope.imap.scope), scopes: token.scopes))
        }
        print(#"{"account": "alex@contoso.onmicrosoft.com"}"#)
    }
}

/// The emulator's pages walked over sockets, as the tests' headless browser does; alex has no
/// SMS step.
final class HeadlessSignIn: SignInUserAgent {
    private let browser: HeadlessBrowser

    init(base: URL) { browser = HeadlessBrowser.sockets(base: base, codes: OneTimeCodes()) }

    func present(_ session: SignInSession) async throws {
        let page = try await browser.signIn("alex@contoso.onmicrosoft.com", authorize: session.authorizationURL.absoluteString)
        guard let location = page.location, let redirect = URL(string: location), session.resume(with: redirect) else {
            session.cancel()
            throw BenchError("the sign-in pages did not redirect to the app (\(page.status))")
        }
    }

    func dismiss(_ session: SignInSession) async {}
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
