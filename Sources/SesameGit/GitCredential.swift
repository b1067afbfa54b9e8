import FoundationEssentials
import SesameSystem

/// git's credential helper protocol (`git help credential`): `key=value` lines on standard input
/// up to a blank line or the end; what the helper knows, as lines back. Read as hostile input:
/// bounded, unknown keys ignored, no line with a NUL or a newline in a value is ever written.
public enum GitCredential {
    /// The most bytes read from git.
    public static let maximumInput = 64 * 1024

    /// The attributes git sent (`protocol`, `host`, `path`, `username`, …); the first of each key.
    public static func parse(_ text: String) -> [String: String] {
        var attributes: [String: String] = [:]
        for line in text.prefix(maximumInput).split(separator: "\n", omittingEmptySubsequences: false) {
            if line.isEmpty { break }
            guard let equals = line.firstIndex(of: "="), !line.contains("\u{0}") else { continue }
            let key = String(line[..<equals])
            if attributes[key] == nil { attributes[key] = String(line[line.index(after: equals)...]) }
        }
        return attributes
    }

    /// The lines of an answer (a value with a newline or NUL is left out: git would misread it).
    public static func answer(_ attributes: [(String, String)]) -> String {
        attributes.filter { !$0.1.contains("\n") && !$0.1.contains("\u{0}") }.map { "\($0)=\($1)\n" }.joined()
    }

    /// What the helper does for one of git's requests (`git-credential-sesame ACTION`).
    public enum Decision: Sendable, Equatable {
        /// Ask Sesame's account service for a token of this account type and scopes.
        case ask(GitRemotes.Remote)
        /// Say nothing: git goes on to its other helpers, or to the user. `note`, when there is
        /// one, says on standard error why this remote gets no token (git shows it).
        case stayQuiet(note: String?)
    }

    /// What to do for `action` with git's `attributes`, given the user's `remotes`. Only `get` is
    /// ever answered, only for a remote the user listed, and only over HTTPS (plain HTTP only to
    /// this computer, and only where the user's line says `--allow-plain-http`): git would send
    /// the token in the clear. `store` and `erase` keep and forget nothing — the token is
    /// Sesame's, and git expects no answer to them.
    public static func decide(action: String, attributes: [String: String], remotes: GitRemotes) -> Decision {
        guard action == "get" else { return .stayQuiet(note: nil) }
        guard let scheme = attributes["protocol"]?.lowercased(), let host = attributes["host"]?.lowercased(), !host.isEmpty else {
            return .stayQuiet(note: nil)
        }
        let path = attributes["path"]
        let candidates = remotes.remotes.filter { $0.host == host }
        guard !candidates.isEmpty else { return .stayQuiet(note: nil) }
        switch scheme {
        case "https":
            break
        case "http":
            guard candidates.contains(where: { $0.scheme == "http" }) else {
                return .stayQuiet(
                    note: "not answering for http://\(host): Sesame gives tokens to git only over HTTPS (git would send it unencrypted); "
                        + "use https://\(host)")
            }
        default:
            return .stayQuiet(note: nil)
        }
        let sameScheme = candidates.filter { $0.scheme == scheme }
        if let match = sameScheme.filter({ $0.matches(path: path) }).max(by: { $0.pathPrefix.count < $1.pathPrefix.count }) {
            return .ask(match)
        }
        if path == nil, sameScheme.contains(where: { !$0.pathPrefix.isEmpty }) {
            return .stayQuiet(
                note:
                    "git.conf lists paths on \(host), but git sent none: run `git config --global credential.\(scheme)://\(host).useHttpPath true`"
            )
        }
        return .stayQuiet(note: nil)
    }
}

/// Which remotes sign in through Sesame: `$XDG_CONFIG_HOME/sesame/git.conf`, one remote a line,
/// `REMOTE ACCOUNT_TYPE [SCOPE…] [--allow-plain-http]` (`#` starts a comment), e.g.
/// `dev.azure.com myGraphService 499b84ac-1321-427f-aa17-267ca6975798/.default`.
///
/// REMOTE is `HOST[:PORT][/PATH]` — HTTPS — or a URL, `https://HOST[:PORT][/PATH]`; HOST is what
/// git calls it (with `:PORT` when the URL has one). A PATH is a prefix of the repository's path,
/// whole segments, matched when git sends paths (`credential.useHttpPath`, which Azure Repos
/// users set); the longest matching prefix wins. `http://HOST…` is accepted only for a host on
/// this computer (a test server) and only with `--allow-plain-http` on the line: the token would
/// cross the network unencrypted. Lines that break a rule are skipped and listed in ``problems``.
public struct GitRemotes: Sendable, Equatable {
    /// One remote the user listed.
    public struct Remote: Sendable, Equatable {
        /// `https`, or `http` (loopback and opted in).
        public let scheme: String
        /// The host, lower-cased, with `:PORT` when the line has one.
        public let host: String
        /// The repository path prefix, without leading or trailing `/` (empty: any path).
        public let pathPrefix: String
        /// The account type whose account signs in.
        public let accountType: String
        /// The scopes the token must carry (empty: the account type's own).
        public let scopes: [String]

        /// Whether git's `path` attribute is under this remote's prefix (whole segments).
        func matches(path: String?) -> Bool {
            if pathPrefix.isEmpty { return true }
            guard let path else { return false }
            let trimmed = path.trimming { "/".contains($0) }
            return trimmed == pathPrefix || trimmed.hasPrefix(pathPrefix + "/")
        }
    }

    /// The remotes, in the file's order.
    public let remotes: [Remote]
    /// The lines skipped, each with its number and why.
    public let problems: [String]

    /// The most words a line may have, and the longest word.
    static let maximumWords = 34
    static let maximumWordLength = 512

    /// The remotes of a file's text.
    public init(parsing text: String) {
        var remotes: [Remote] = []
        var problems: [String] = []
        for (index, raw) in text.prefix(GitCredential.maximumInput).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
            if words.isEmpty { continue }
            switch Self.remote(words) {
            case .success(let remote): remotes.append(remote)
            case .failure(let problem): problems.append("git.conf line \(index + 1): \(problem.reason)")
            }
        }
        self.remotes = remotes
        self.problems = problems
    }

    private struct Problem: Error {
        let reason: String
    }

    private static func remote(_ words: [String]) -> Result<Remote, Problem> {
        guard words.count >= 2 else { return .failure(Problem(reason: "a remote needs an account type after it")) }
        guard words.count <= maximumWords, words.allSatisfy({ $0.utf8.count <= maximumWordLength }) else {
            return .failure(Problem(reason: "too long"))
        }
        let allowsPlainHTTP = words.contains("--allow-plain-http")
        let rest = words.dropFirst(2).filter { $0 != "--allow-plain-http" }
        guard !rest.contains(where: { $0.hasPrefix("--") }) else {
            return .failure(Problem(reason: "the only option is --allow-plain-http"))
        }
        var address = words[0]
        var scheme = "https"
        if let separator = address.firstRange(of: "://") {
            scheme = address[..<separator.lowerBound].lowercased()
            address = String(address[separator.upperBound...])
        }
        let host = String(address.prefix { $0 != "/" }).lowercased()
        let pathPrefix = String(address.dropFirst(host.count)).trimming { "/".contains($0) }
        guard !host.isEmpty, !host.contains("@"), let parsed = URL(string: "\(scheme)://\(host)/"), parsed.host != nil else {
            return .failure(Problem(reason: "\(words[0]) is not a host or an https:// URL"))
        }
        switch scheme {
        case "https":
            break
        case "http":
            guard parsed.isLoopback else {
                return .failure(Problem(reason: "\(words[0]): plain http only to this computer; Sesame gives tokens only over HTTPS"))
            }
            guard allowsPlainHTTP else {
                return .failure(
                    Problem(reason: "\(words[0]): plain http needs --allow-plain-http on the line (the token is sent unencrypted)"))
            }
        default:
            return .failure(Problem(reason: "\(words[0]): only https:// remotes get tokens"))
        }
        return .success(Remote(scheme: scheme, host: host, pathPrefix: pathPrefix, accountType: words[1], scopes: Array(rest)))
    }

    /// The remotes in `file` (none when it is missing or unreadable).
    public static func load(from file: URL) -> GitRemotes {
        GitRemotes(parsing: (try? String(contentsOf: file, encoding: .utf8)) ?? "")
    }

    /// `$XDG_CONFIG_HOME/sesame/git.conf` (by default `~/.config/sesame/git.conf`).
    public static func defaultFile(environment: [String: String]) -> URL {
        let configHome =
            environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? URL(filePath: $0) : nil }
            ?? URL(filePath: environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path).appending(path: ".config")
        return configHome.appending(path: "sesame/git.conf")
    }
}
