import FoundationEssentials
import SesameSystem

/// The broker's latest calls, kept for `sesame doctor` (the service has no window to show them
/// in): one line each — when, the method, the program as the system identified it, the app it
/// named, what it got (a token, a refusal's status, how many accounts). Never a token, a user
/// name or a request's content.
public struct BrokerCallLog: Sendable {
    /// The file.
    public let file: URL
    /// The most calls kept.
    public static let kept = 30

    public init(file: URL) { self.file = file }

    /// Where `sesame-service` keeps them: `$XDG_STATE_HOME/sesame/broker-calls.log`.
    public static func defaultFile(environment: [String: String]) -> URL {
        let state =
            environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? ((environment["HOME"] ?? "/") + "/.local/state")
        return URL(fileURLWithPath: state).appending(path: "sesame/broker-calls.log")
    }

    /// The calls as kept, oldest first (bounded).
    public var lines: [String] {
        guard let data = FileManager.default.contents(atPath: file.path), data.count <= 64 * 1024 else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").suffix(Self.kept).map(String.init)
    }

    /// Adds a call and what it was answered; failures to write are ignored.
    func append(_ request: BrokerRequest, program: ProgramIdentity, reply: String, now: Date = Date()) {
        let outcome: String
        if reply.contains("\"accessToken\"") {
            outcome = "a token"
        } else if reply.contains("\"cookieItems\"") {
            outcome = "a single sign-on cookie"
        } else if let range = reply.firstRange(of: "\"status\":") {
            outcome = "refused (status \(reply[range.upperBound...].prefix { $0.isNumber }))"
        } else if reply.hasPrefix("{\"accounts\"") {
            outcome = "\(reply.components(separatedBy: "\"homeAccountId\"").count - 1) account(s)"
        } else {
            outcome = "answered"
        }
        let app = request.clientID.map { " for the app \($0)" } ?? ""
        let line = "\(now.formatted(.iso8601))  \(request.method.rawValue)  \(DisplayText.escaped(program.id))\(app) → \(outcome)"
        let folder = file.deletingLastPathComponent()
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // Which programs asked for what, and when, is the user's alone: written whole to a new
        // file of the user's (0600, whatever the umask), then renamed over the log, so that an
        // earlier, more open log is replaced and a reader never sees half of it.
        let text = (lines.suffix(Self.kept - 1) + [line]).joined(separator: "\n") + "\n"
        let temporary = folder.appending(path: ".\(file.lastPathComponent).\(UUID().uuidString)").path
        do {
            let descriptor = try Posix.openOwnFileForWriting(temporary)
            defer { Posix.close(descriptor) }
            try Posix.writeAll(descriptor, Array(text.utf8))
            try Posix.rename(temporary, to: file.path)
        } catch {
            Posix.removeFile(temporary)
        }
    }
}

extension BrokerRequest {
    /// The method that carried it.
    public var method: BrokerMethod {
        switch self {
        case .version: .getLinuxBrokerVersion
        case .accounts: .getAccounts
        case .silent: .acquireTokenSilently
        case .interactive: .acquireTokenInteractively
        case .removeAccount: .removeAccount
        case .cancelInteractiveFlow: .cancelInteractiveFlow
        case .prtSsoCookie: .acquirePrtSsoCookie
        case .signedHTTPRequest: .generateSignedHttpRequest
        }
    }
}
