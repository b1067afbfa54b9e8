import Foundation

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
}

/// Which remote hosts sign in through Sesame: `$XDG_CONFIG_HOME/sesame/git.conf`, one host a line,
/// `HOST ACCOUNT_TYPE [SCOPE…]` (`#` starts a comment), e.g.
/// `dev.azure.com myGraphService 499b84ac-1321-427f-aa17-267ca6975798/.default`. HOST is what git
/// calls it: with `:PORT` when the URL has one.
public struct GitHosts: Sendable, Equatable {
    /// One host's account type and scopes (empty: the account type's own).
    public struct Entry: Sendable, Equatable {
        /// An entry; see each property.
        public init(accountType: String, scopes: [String]) {
            self.accountType = accountType
            self.scopes = scopes
        }

        /// The account type whose account signs in.
        public let accountType: String
        /// The scopes the token must carry.
        public let scopes: [String]
    }

    /// The hosts, lower-cased.
    public let entries: [String: Entry]

    /// The hosts of a file's text (malformed lines skipped; the first line for a host wins).
    public init(parsing text: String) {
        var entries: [String: Entry] = [:]
        for raw in text.prefix(GitCredential.maximumInput).split(separator: "\n") {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard words.count >= 2, words.allSatisfy({ $0.utf8.count <= 512 }) else { continue }
            let host = words[0].lowercased()
            if entries[host] == nil { entries[host] = Entry(accountType: words[1], scopes: Array(words.dropFirst(2).prefix(32))) }
        }
        self.entries = entries
    }

    /// The hosts in `file` (none when it is missing or unreadable).
    public static func load(from file: URL) -> GitHosts {
        GitHosts(parsing: (try? String(contentsOf: file, encoding: .utf8)) ?? "")
    }

    /// `$XDG_CONFIG_HOME/sesame/git.conf` (by default `~/.config/sesame/git.conf`).
    public static func defaultFile(environment: [String: String]) -> URL {
        let configHome =
            environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? URL(filePath: $0) : nil }
            ?? URL(filePath: environment["HOME"] ?? NSHomeDirectory()).appending(path: ".config")
        return configHome.appending(path: "sesame/git.conf")
    }

    /// The entry for git's `host` attribute.
    public func entry(forHost host: String) -> Entry? { entries[host.lowercased()] }
}
