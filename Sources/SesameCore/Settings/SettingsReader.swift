import FoundationEssentials
import Glibc
import SesameSystem

/// Reads typed values out of a property-list dictionary, turning every problem into a
/// ``SettingsError`` that names the file and the key, and noting every key a shape asks for
/// (each spelling, present or not), so that the keys nobody asked for become
/// ``SettingsWarning``s and a missing key can name the file's near miss.
final class SettingsReader {
    let file: String
    let values: [String: PropertyListValue]
    /// The keys asked for so far, in the order first asked: the shape's vocabulary.
    private(set) var consulted: [String] = []
    private var consultedSet: Set<String> = []

    /// The largest settings file read: the seeds' are under 2 KiB.
    static let maximumSize = 1024 * 1024

    convenience init(contentsOf url: URL) throws(SettingsError) {
        // A plain file, read up to the limit: never a device (/dev/zero) or a pipe that never ends.
        let bytes: [UInt8]
        do {
            bytes = try Posix.readRegularFile(url.path, limit: Self.maximumSize)
        } catch {
            throw SettingsError(
                file: url.path, key: nil, problem: .unreadable(reason: error.code == ENOENT ? "no such file" : error.message))
        }
        guard bytes.count <= Self.maximumSize else {
            throw SettingsError(
                file: url.path, key: nil, problem: .unreadable(reason: "it is larger than 1 MiB; a settings file is a few kilobytes"))
        }
        try self.init(data: Data(bytes), file: url.path)
    }

    init(data: Data, file: String) throws(SettingsError) {
        self.file = file
        guard let dictionary = try? PropertyListDecoder().decode([String: PropertyListValue].self, from: data) else {
            throw SettingsError(file: file, key: nil, problem: .notAPropertyList)
        }
        self.values = dictionary
    }

    /// Whether any of the spellings is present.
    func has(_ keys: String...) -> Bool {
        keys.contains { values[$0] != nil }
    }

    /// The first present spelling's raw value and the key it was found under. Every spelling
    /// counts as read: a file that uses one of them uses the key.
    private func raw(_ keys: [String]) -> (key: String, value: PropertyListValue)? {
        for key in keys where consultedSet.insert(key).inserted {
            consulted.append(key)
        }
        for key in keys {
            if let value = values[key] { return (key, value) }
        }
        return nil
    }

    private func name(_ keys: [String]) -> String { keys.joined(separator: "\" or \"") }

    /// A string that may be empty (the B2C seed's `clientSecret`).
    func optionalString(_ keys: String...) throws(SettingsError) -> String? {
        try optionalString(keys)
    }

    /// A string that must be present and not empty, and not one of the seeds' `<client ID>`
    /// placeholders: a user who forgot to replace one is told so here, not by an AADSTS page.
    func requiredString(_ keys: String...) throws(SettingsError) -> String {
        let (key, text) = try requiredString(keys)
        guard !(text.hasPrefix("<") && text.hasSuffix(">")) else {
            throw SettingsError(file: file, key: key, problem: .malformedValue(expected: "a value, not the placeholder \(text)"))
        }
        return text
    }

    /// An absolute URL (scheme and, except for URNs, host).
    func requiredURL(_ keys: String...) throws(SettingsError) -> URL {
        let (key, text) = try requiredString(keys)
        return try url(text, key: key)
    }

    /// An absolute URL if present.
    func optionalURL(_ keys: String...) throws(SettingsError) -> URL? {
        guard let text = try optionalString(keys), !text.isEmpty else { return nil }
        return try url(text, key: raw(keys)?.key ?? name(keys))
    }

    /// `discoveryURL`, in every shape: the provider's OpenID configuration, `https` (or `http` on
    /// this computer) with a host — never a URN, which only a redirect URI may be.
    func discoveryURL() throws(SettingsError) -> URL? {
        guard let url = try optionalURL("discoveryURL") else { return nil }
        guard url.scheme?.lowercased() != "urn" else {
            throw SettingsError(
                file: file, key: "discoveryURL",
                problem: .malformedValue(
                    expected: "the provider's https URL such as https://id.example.org/.well-known/openid-configuration")
            )
        }
        return url
    }

    /// The keys of the file no shape's reader asked for, sorted: what ``SettingsWarning``s name.
    var unreadKeys: [String] {
        values.keys.filter { !consultedSet.contains($0) }.sorted()
    }

    /// A list of strings, written either as an array or as one space-separated string.
    func optionalStringList(_ keys: String...) throws(SettingsError) -> [String]? {
        guard let (key, value) = raw(keys) else { return nil }
        if case .array(let array) = value {
            var result: [String] = []
            for element in array {
                guard case .string(let string) = element else {
                    throw SettingsError(file: file, key: key, problem: .malformedValue(expected: "an array of strings"))
                }
                result.append(string)
            }
            return result
        }
        if case .string(let string) = value {
            return string.split(whereSeparator: \.isWhitespace).map(String.init)
        }
        throw SettingsError(file: file, key: key, problem: .malformedValue(expected: "an array of strings or a space-separated string"))
    }

    private func requiredString(_ keys: [String]) throws(SettingsError) -> (key: String, value: String) {
        guard let text = try optionalString(keys), !text.isEmpty else {
            if let present = raw(keys) { throw SettingsError(file: file, key: present.key, problem: .missingKey) }
            // A misspelling (`clientid`) is the likeliest reason a required key is absent: say so.
            let nearMiss = values.keys.sorted().lazy.compactMap { found in
                SettingsWarning.suggestion(for: found, among: keys).map { SettingsError.NearMiss(found: found, meant: $0) }
            }.first
            throw SettingsError(file: file, key: name(keys), problem: .missingKey, nearMiss: nearMiss)
        }
        return (raw(keys)?.key ?? name(keys), text)
    }

    private func optionalString(_ keys: [String]) throws(SettingsError) -> String? {
        guard let (key, value) = raw(keys) else { return nil }
        guard case .string(let string) = value else {
            throw SettingsError(file: file, key: key, problem: .malformedValue(expected: "a string"))
        }
        return string.trimmingWhitespace()
    }

    private func url(_ text: String, key: String) throws(SettingsError) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), !scheme.isEmpty,
            scheme == "urn" || (url.host?.isEmpty == false)
        else {
            throw SettingsError(
                file: file, key: key, problem: .malformedValue(expected: "an absolute URL such as https://login.microsoftonline.com/common")
            )
        }
        // Never a local file or script; plain http only on this computer (tokens and codes travel there).
        if Self.refusedSchemes.contains(scheme) {
            throw SettingsError(file: file, key: key, problem: .malformedValue(expected: "an https URL, not a \(scheme): URL"))
        }
        if scheme == "http", !url.isLoopback {
            throw SettingsError(
                file: file, key: key,
                problem: .malformedValue(expected: "an https URL (http is accepted only for this computer: 127.0.0.1)"))
        }
        return url
    }

    static let refusedSchemes: Set<String> = ["file", "javascript", "data", "about", "blob", "ftp", "ws", "wss", "jar", "view-source"]
}

/// A property list's value, as far as settings read them: strings, and arrays (of strings);
/// every other kind of value (a number, a date, a dictionary) is one a key can have by mistake.
enum PropertyListValue: Decodable {
    case string(String)
    case array([PropertyListValue])
    /// Anything else (its kind does not matter: no key takes it).
    case other

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([PropertyListValue].self) {
            self = .array(array)
        } else {
            self = .other
        }
    }
}

/// Which user agent an account type's interactive sign-in uses (the settings key `signInWith`).
public enum SignInMethod: String, Sendable, Hashable, CaseIterable {
    /// The window's embedded WebKit view (the default).
    case webview
    /// The user's default browser, answering on a loopback address.
    case browser
}

extension SettingsReader {
    /// `signInWith`: `webview` (the default) or `browser`.
    func signInMethod() throws(SettingsError) -> SignInMethod {
        guard let text = try optionalString("signInWith"), !text.isEmpty else { return .webview }
        guard let method = SignInMethod(rawValue: text.lowercased()) else {
            throw SettingsError(file: file, key: "signInWith", problem: .malformedValue(expected: "webview or browser, not \(text)"))
        }
        return method
    }
}
