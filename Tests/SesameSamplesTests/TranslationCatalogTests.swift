import Foundation
import SesameCore
import SesameSamples
import Testing

/// Every word for the user comes from the translation catalog: each `L("…")` of the app is in
/// `Resources/po/sesame.pot` and translated (not empty, not fuzzy) in each language, with the
/// same printf arguments.
@Suite("The translation catalogs")
struct TranslationCatalogTests {
    static let root = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../..").standardized
    static let languages = ["es", "el", "zh_CN", "zh_TW"]

    /// What `L` is called with in the app's sources (`Sources/`, every target).
    static let sources: SwiftSources = SwiftSources.scan(root.appending(path: "Sources"))

    @Test("L is called only with a string literal (anything else the catalogs cannot list)")
    func onlyLiterals() {
        #expect(!Self.sources.literals.isEmpty, "no L(\"…\") found under \(Self.root.path)/Sources")
        #expect(
            Self.sources.nonLiterals.isEmpty,
            "L called with something other than a one-line string literal:\n\(Self.sources.nonLiterals.joined(separator: "\n"))")
    }

    @Test("no widget of the window is given words that bypass L (only the product's name)")
    func noRawWidgetText() throws {
        // A widget's title, label, placeholder, accessible name or markup given a plain literal.
        let pattern = try Regex(
            #"(Button|Label|MenuButton|Entry|SearchEntry)\("[^"]*[A-Za-z][^"]*"|(title|placeholder|accessibleName): "[^"]*[A-Za-z]|\.(text|title|accessibleName) = "[^"]*[A-Za-z]"#
        )
        var found: [String] = []
        let folder = Self.root.appending(path: "Sources/SesameGtk")
        for case let file as URL in FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) ?? .init()
        where file.pathExtension == "swift" {
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for (number, line) in lines.enumerated() where line.contains(pattern) && !line.contains("\"Sesame\"") {
                found.append("\(file.lastPathComponent):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(found.isEmpty, "words for the user without L:\n\(found.joined(separator: "\n"))")
    }

    @Test("sesame.pot lists every string of the app")
    func templateIsComplete() throws {
        let template = try Catalog(contentsOf: Self.root.appending(path: "Resources/po/sesame.pot"))
        #expect(template.problems.isEmpty, "\(template.problems.joined(separator: "\n"))")
        let missing = Self.sources.literals.keys.filter { template.entries[$0] == nil }.sorted()
        #expect(missing.isEmpty, "missing from sesame.pot:\n\(Self.listing(missing))")
        let unused = template.entries.keys.filter { Self.sources.literals[$0] == nil }.sorted()
        if !unused.isEmpty { Issue.record("in sesame.pot but not in the sources:\n\(Self.listing(unused))", severity: .warning) }
    }

    @Test("each catalog translates every string of the app: none missing, empty or fuzzy", arguments: languages)
    func catalogIsComplete(language: String) throws {
        let catalog = try Catalog(contentsOf: Self.root.appending(path: "Resources/po/\(language).po"))
        #expect(catalog.problems.isEmpty, "\(language).po: \(catalog.problems.joined(separator: "\n"))")
        #expect(catalog.header?.contains("charset=UTF-8") == true, "\(language).po: no header entry with charset=UTF-8")
        var missing: [String] = []
        var empty: [String] = []
        var fuzzy: [String] = []
        for msgid in Self.sources.literals.keys.sorted() {
            guard let entry = catalog.entries[msgid] else {
                missing.append(msgid)
                continue
            }
            if entry.msgstr.isEmpty { empty.append(msgid) }
            if entry.isFuzzy { fuzzy.append(msgid) }
        }
        #expect(missing.isEmpty, "\(language).po is missing \(missing.count):\n\(Self.listing(missing))")
        #expect(empty.isEmpty, "\(language).po has \(empty.count) untranslated (empty msgstr):\n\(Self.listing(empty))")
        #expect(fuzzy.isEmpty, "\(language).po has \(fuzzy.count) fuzzy:\n\(Self.listing(fuzzy))")
        let unused = catalog.entries.keys.filter { Self.sources.literals[$0] == nil }.sorted()
        if !unused.isEmpty { Issue.record("in \(language).po but not in the sources:\n\(Self.listing(unused))", severity: .warning) }
    }

    @Test("each translation takes the same printf arguments as its English (%@, %d, %1$@ …)", arguments: languages)
    func formatsAgree(language: String) throws {
        let catalog = try Catalog(contentsOf: Self.root.appending(path: "Resources/po/\(language).po"))
        var disagreements: [String] = []
        for (msgid, entry) in catalog.entries.sorted(by: { $0.key < $1.key }) where !entry.msgstr.isEmpty {
            let expected = FormatSpecifiers(msgid)
            let found = FormatSpecifiers(entry.msgstr)
            if expected != found {
                disagreements.append("\"\(msgid)\" \(expected) → \"\(entry.msgstr)\" \(found)")
            }
        }
        #expect(disagreements.isEmpty, "\(language).po:\n\(disagreements.joined(separator: "\n"))")
    }

    @Test("the checks see what they must: escapes, continuation lines, fuzzy entries, positional arguments")
    func theParsersThemselves() throws {
        let swift = SwiftSources.scan(
            text: #"""
                let a = L("Say \"hi\"\n")  // L(notALiteral) in a comment
                let b = L("100 % \(name)")
                let c = L(name)
                let d = URL("no") + label.L("no")
                /* L(other) */ let e = "L(\"no\")"
                public func L(_ text: String) -> String { text }
                let f = L(
                    "Two lines"
                )
                """#,
            file: "Example.swift")
        #expect(swift.literals.keys.sorted() == ["Say \"hi\"\n", "Two lines"])
        #expect(swift.nonLiterals.count == 2, "\(swift.nonLiterals)")

        let catalog = Catalog(
            text: #"""
                msgid ""
                msgstr ""
                "Content-Type: text/plain; charset=UTF-8\n"

                #, fuzzy
                msgid "Tenant: %@"
                msgstr "Inquilino: %@"

                #, c-format
                msgid ""
                "Say \"hi\"\n"
                msgstr "Di "
                "\"hola\"\n"

                #~ msgid "Old"
                #~ msgstr "Viejo"
                """#)
        #expect(catalog.problems.isEmpty, "\(catalog.problems)")
        #expect(catalog.header?.contains("charset=UTF-8") == true)
        #expect(catalog.entries["Tenant: %@"]?.isFuzzy == true)
        #expect(catalog.entries["Say \"hi\"\n"]?.msgstr == "Di \"hola\"\n")
        #expect(catalog.entries["Say \"hi\"\n"]?.isFuzzy == false)
        #expect(catalog.entries["Old"] == nil)

        #expect(FormatSpecifiers("%1$@ has %2$d") == FormatSpecifiers("%2$d: %1$@"))
        #expect(FormatSpecifiers("%@ has %d") == FormatSpecifiers("%1$@ tiene %2$d"))
        #expect(FormatSpecifiers("%@ has %d") != FormatSpecifiers("%d tiene %@"))
        #expect(FormatSpecifiers("%d%% done") == FormatSpecifiers("%d %% hecho"))
        #expect(FormatSpecifiers("%d people") != FormatSpecifiers("personas"))
    }

    static func listing(_ msgids: [String]) -> String {
        msgids.map { "  \"\($0)\"" }.joined(separator: "\n")
    }
}

/// The user's sentences for errors: made for them, with the service's code, never an error's
/// contents.
@Suite("The user's error sentences")
struct UserMessageTests {
    @Test("a refusal carrying a service code reads as Sesame's sentence with the code, not Core's text")
    func serviceCode() {
        var refused = AccountStoreError(
            .tokenRequestFailed, "The token request was refused: AADSTS7000215: Invalid client secret provided (s3cr3t).")
        refused.serviceCode = "AADSTS7000215"
        let text = UserMessage.text(for: refused)
        #expect(text != refused.description)
        #expect(text.hasSuffix(" (AADSTS7000215)"), "\(text)")
        #expect(!text.contains("Invalid client secret") && !text.contains("s3cr3t"), "\(text)")
        #expect(
            text == L("The identity service refused to give Sesame access for this account. Try again later, or sign in again.")
                + " (AADSTS7000215)")

        // A code Sesame knows: its own sentence (Core's advice, translated), once with its code.
        var mfa = AccountStoreError(.interactionRequired, "Sign in again: AADSTS50076: Due to a configuration change …")
        mfa.serviceCode = "AADSTS50076"
        #expect(
            UserMessage.text(for: mfa)
                == L("Your organization asks for another sign-in step (multi-factor authentication): sign in again.") + " (AADSTS50076)")

        var reset = AccountStoreError(.passwordResetRequested, "The user asked to reset their password.")
        reset.serviceCode = "AADB2C90118"
        #expect(UserMessage.text(for: reset) == L("You asked to reset your password.") + " (AADB2C90118)")

        // No service code: the sentence alone.
        #expect(
            UserMessage.text(for: AccountStoreError(.network, "Could not reach the identity service: connect refused"))
                == L(
                    "Could not reach the identity service. Check the network connection and try again."))
    }

    @Test("an unknown error gets the generic sentence naming only its type")
    func unknownError() {
        struct LeakyError: Error, CustomStringConvertible {
            var description: String { "refresh_token=0.AAAA-secret" }
        }
        let text = UserMessage.text(for: LeakyError())
        #expect(text == String(format: L("Something went wrong (%@). Try again."), "LeakyError"))
        #expect(!text.contains("secret"), "\(text)")
    }

    @Test("the task service's and the transport's errors: their status or host, not their reason")
    func otherErrors() throws {
        let refused = UserMessage.text(for: TaskServiceError(status: 503, reason: "upstream said: token=abc"))
        #expect(refused == L("The task service is not available right now; try again later.") + " (HTTP 503)")
        let unreachable = UserMessage.text(
            for: HTTPTransportError(url: try #require(URL(string: "https://login.example:8443/path?code=SECRET")), reason: "timed out"))
        #expect(unreachable == String(format: L("Could not reach %@. Check the network connection and try again."), "login.example:8443"))
        #expect(UserMessage.text(for: CancellationError()) == L("The request was cancelled."))
    }

    @Test("each way a connection fails reads as its own sentence, naming the host (and the proxy), in the user's language")
    func connectionFailures() throws {
        let url = try #require(URL(string: "https://login.contoso.test/common/oauth2/v2.0/token?code=SECRET"))
        func text(_ kind: HTTPTransportError.Kind, proxy: String? = nil) -> String {
            UserMessage.text(for: HTTPTransportError(url: url, reason: "details", kind: kind, proxy: proxy))
        }
        let host = "login.contoso.test"
        #expect(
            text(.connectionRefused)
                == String(format: L("%@ refused the connection: nothing answers there. Check the address, or try again later."), host))
        #expect(text(.noSuchHost) == String(format: L("There is no server named %@. Check the address and the network connection."), host))
        #expect(text(.networkUnreachable) == String(format: L("You are offline: %@ cannot be reached. Connect to a network."), host))
        #expect(
            text(.untrustedCertificate).hasPrefix(
                String(
                    format: L(
                        "The certificate of %@ is not trusted on this computer, so Sesame did not connect. If your organization inspects its traffic, ask IT to install its certificate authority."
                    ), host)))
        #expect(
            text(.proxyAuthenticationRequired, proxy: "proxy.corp:3128")
                == String(
                    format: L("The proxy at %@ asks for a sign-in. Add its user name and password to the network proxy settings."),
                    "proxy.corp:3128"))
        #expect(
            text(.proxyRefused, proxy: "proxy.corp:3128")
                == String(format: L("The proxy at %1$@ refused to connect to %2$@."), "proxy.corp:3128", host))
        #expect(
            text(.proxyUnreachable, proxy: "proxy.corp:3128")
                == String(format: L("The proxy at %@ cannot be reached. Check the network proxy settings."), "proxy.corp:3128"))
        let kinds: [HTTPTransportError.Kind] = [
            .unreachable, .connectionRefused, .noSuchHost, .networkUnreachable, .untrustedCertificate, .tlsFailed, .timedOut, .tooLarge,
            .brokenAnswer, .proxyUnreachable, .proxyRefused, .proxyAuthenticationRequired,
        ]
        #expect(Set(kinds.map { text($0, proxy: "proxy.corp:3128") }).count == kinds.count, "two kinds read the same")
        #expect(kinds.allSatisfy { !text($0).contains("SECRET") && !text($0).contains("details") })

        // The account store's network errors read as the failure underneath.
        var failure = AccountStoreError(.network, "Could not reach the identity service: the exchange failed")
        failure.transportFailure = HTTPTransportError(url: url, reason: "connection refused", kind: .connectionRefused)
        #expect(UserMessage.text(for: failure) == text(.connectionRefused))
    }
}

// MARK: The sources

/// The `L(…)` calls of Swift sources: the string literals, and where `L` got anything else.
struct SwiftSources {
    /// Each literal's value (escapes resolved) and one place that uses it.
    var literals: [String: String] = [:]
    /// `file:line: text` of each call whose argument is not a one-line string literal.
    var nonLiterals: [String] = []

    static func scan(_ directory: URL) -> SwiftSources {
        var result = SwiftSources()
        let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        for file in files where file.pathExtension == "swift" {
            guard let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
            let relative = file.path.replacingOccurrences(of: directory.deletingLastPathComponent().path + "/", with: "")
            result.merge(scan(text: text, file: relative))
        }
        return result
    }

    mutating func merge(_ other: SwiftSources) {
        literals.merge(other.literals) { first, _ in first }
        nonLiterals += other.nonLiterals
    }

    /// A small Swift lexer: comments and string literals are skipped, so only code's `L(` counts;
    /// `L(` after an identifier character, a `.` or `func` is not the function.
    static func scan(text: String, file: String) -> SwiftSources {
        var result = SwiftSources()
        let characters = Array(text.unicodeScalars)
        var index = 0
        var line = 1
        func at(_ offset: Int) -> Unicode.Scalar? { index + offset < characters.count ? characters[index + offset] : nil }
        func starts(_ string: String) -> Bool {
            for (offset, scalar) in string.unicodeScalars.enumerated() where at(offset) != scalar { return false }
            return true
        }
        func advance(_ count: Int = 1) {
            for _ in 0..<count where index < characters.count {
                if characters[index] == "\n" { line += 1 }
                index += 1
            }
        }
        /// Skips a string literal starting at `index` (any number of `#`, one line or three quotes).
        func skipString() {
            var hashes = 0
            while at(0) == "#" {
                hashes += 1
                advance()
            }
            let multiline = starts("\"\"\"")
            advance(multiline ? 3 : 1)
            let close = (multiline ? "\"\"\"" : "\"") + String(repeating: "#", count: hashes)
            let escape = "\\" + String(repeating: "#", count: hashes)
            while index < characters.count {
                if starts(escape) {
                    advance(escape.unicodeScalars.count)
                    if at(0) == "(" { skipBalanced() } else { advance() }
                } else if starts(close) {
                    advance(close.unicodeScalars.count)
                    return
                } else {
                    advance()
                }
            }
        }
        /// Skips `( … )` of an interpolation, strings and nesting included.
        func skipBalanced() {
            var depth = 0
            while index < characters.count {
                switch at(0) {
                case "(": depth += 1
                case ")":
                    depth -= 1
                    if depth == 0 {
                        advance()
                        return
                    }
                case "\"":
                    skipString()
                    continue
                default: break
                }
                advance()
            }
        }
        /// `"…")` after `L(`: the literal's value, or nil (index left where it was) for anything else.
        func readLiteral() -> String? {
            let start = index
            let startLine = line
            func fail() -> String? {
                index = start
                line = startLine
                return nil
            }
            while let scalar = at(0), scalar.properties.isWhitespace { advance() }
            guard at(0) == "\"", !starts("\"\"\"") else { return fail() }
            advance()
            var value = String.UnicodeScalarView()
            while let scalar = at(0) {
                advance()
                switch scalar {
                case "\"":
                    while let space = at(0), space.properties.isWhitespace { advance() }
                    guard at(0) == ")" else { return fail() }
                    return String(value)
                case "\n": return fail()
                case "\\":
                    guard let escaped = at(0) else { return fail() }
                    advance()
                    switch escaped {
                    case "n": value.append("\n")
                    case "t": value.append("\t")
                    case "r": value.append("\r")
                    case "0": value.append("\0")
                    case "\"", "'", "\\": value.append(escaped)
                    case "u":
                        guard at(0) == "{" else { return fail() }
                        advance()
                        var hex = ""
                        while let digit = at(0), digit != "}" {
                            hex.unicodeScalars.append(digit)
                            advance()
                        }
                        advance()
                        guard let code = UInt32(hex, radix: 16), let unicode = Unicode.Scalar(code) else { return fail() }
                        value.append(unicode)
                    default: return fail()  // `\(…)`: an interpolation is not a literal
                    }
                default: value.append(scalar)
                }
            }
            return fail()
        }
        var previousWord = ""
        while index < characters.count {
            if starts("//") {
                while index < characters.count, at(0) != "\n" { advance() }
            } else if starts("/*") {
                var depth = 0
                repeat {
                    if starts("/*") {
                        depth += 1
                        advance(2)
                    } else if starts("*/") {
                        depth -= 1
                        advance(2)
                    } else {
                        advance()
                    }
                } while depth > 0 && index < characters.count
            } else if at(0) == "\"" || (at(0) == "#" && (at(1) == "\"" || at(1) == "#")) {
                skipString()
                previousWord = ""
            } else if at(0) == "L", at(1) == "(", !isIdentifier(index > 0 ? characters[index - 1] : " "),
                index == 0 || characters[index - 1] != ".", previousWord != "func"
            {
                let callLine = line
                advance(2)
                if let literal = readLiteral() {
                    if result.literals[literal] == nil { result.literals[literal] = "\(file):\(callLine)" }
                } else {
                    let rest = String(String.UnicodeScalarView(characters[index..<min(index + 60, characters.count)]))
                    result.nonLiterals.append("\(file):\(callLine): L(\(rest.prefix { $0 != "\n" })")
                }
            } else if isIdentifier(characters[index]) {
                var word = ""
                while let scalar = at(0), isIdentifier(scalar) {
                    word.unicodeScalars.append(scalar)
                    advance()
                }
                previousWord = word
            } else {
                if !characters[index].properties.isWhitespace { previousWord = "" }
                advance()
            }
        }
        return result
    }

    static func isIdentifier(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
    }
}

// MARK: The catalogs

/// A gettext catalog (`.po`, `.pot`): each msgid's msgstr and whether it is fuzzy; the header;
/// what could not be read.
struct Catalog {
    struct Entry {
        var msgstr: String
        var isFuzzy: Bool
    }

    var entries: [String: Entry] = [:]
    /// The header entry's msgstr (`msgid ""`).
    var header: String?
    var problems: [String] = []

    init(contentsOf file: URL) throws {
        self.init(text: try String(contentsOf: file, encoding: .utf8))
    }

    init(text: String) {
        var flags: Set<String> = []
        var msgid: String?
        var msgstr: String?
        var hasPlural = false
        var field: String?  // the keyword continuation lines extend
        var lineNumber = 0

        func finish() {
            defer {
                flags = []
                msgid = nil
                msgstr = nil
                hasPlural = false
                field = nil
            }
            guard let id = msgid else {
                if msgstr != nil { problems.append("line \(lineNumber): msgstr without msgid") }
                return
            }
            if hasPlural { problems.append("\"\(id)\": plural entries are not used by L") }
            if id.isEmpty {
                header = msgstr ?? ""
                return
            }
            if entries[id] != nil { problems.append("\"\(id)\" is listed twice") }
            entries[id] = Entry(msgstr: msgstr ?? "", isFuzzy: flags.contains("fuzzy"))
        }

        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty {
                finish()
            } else if line.hasPrefix("#~") {
                continue  // obsolete
            } else if line.hasPrefix("#,") {
                if msgid != nil { finish() }
                for flag in line.dropFirst(2).split(separator: ",") { flags.insert(flag.trimmingCharacters(in: .whitespaces)) }
            } else if line.hasPrefix("#") {
                if msgid != nil && msgstr != nil { finish() }
            } else if line.hasPrefix("\"") {
                guard let string = Self.unquote(line) else {
                    problems.append("line \(lineNumber): unreadable string \(line)")
                    continue
                }
                switch field {
                case "msgid": msgid? += string
                case "msgstr": msgstr? += string
                case "msgid_plural", "msgstr[]", "msgctxt": break
                default: problems.append("line \(lineNumber): a string continues nothing")
                }
            } else if let space = line.firstIndex(of: " ") {
                let keyword = String(line[..<space])
                guard let string = Self.unquote(line[space...].trimmingCharacters(in: .whitespaces)) else {
                    problems.append("line \(lineNumber): unreadable string \(line)")
                    continue
                }
                switch keyword {
                case "msgid":
                    if msgid != nil { finish() }
                    msgid = string
                    field = "msgid"
                case "msgstr":
                    msgstr = string
                    field = "msgstr"
                case "msgid_plural":
                    hasPlural = true
                    field = keyword
                case "msgctxt":
                    problems.append("line \(lineNumber): msgctxt is not used by L")
                    field = keyword
                default:
                    if keyword.hasPrefix("msgstr[") {
                        field = "msgstr[]"
                    } else {
                        problems.append("line \(lineNumber): unknown keyword \(keyword)")
                    }
                }
            } else {
                problems.append("line \(lineNumber): unreadable \(line)")
            }
        }
        finish()
    }

    /// `"…"` with C escapes, as the string it spells.
    static func unquote<S: StringProtocol>(_ quoted: S) -> String? {
        guard quoted.count >= 2, quoted.first == "\"", quoted.last == "\"" else { return nil }
        var result = ""
        var escaping = false
        for character in quoted.dropFirst().dropLast() {
            if escaping {
                switch character {
                case "n": result.append("\n")
                case "t": result.append("\t")
                case "r": result.append("\r")
                case "\"", "\\": result.append(character)
                default: return nil
                }
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else if character == "\"" {
                return nil
            } else {
                result.append(character)
            }
        }
        return escaping ? nil : result
    }
}

/// The printf arguments a format takes: each argument's position (explicit as in `%2$@`, else in
/// order) and conversion (`@`, `d`, `ld`, `s` …); `%%` takes none.
struct FormatSpecifiers: Equatable, CustomStringConvertible {
    var arguments: [Int: String] = [:]
    var malformed = false

    init(_ format: String) {
        let scalars = Array(format.unicodeScalars)
        var index = 0
        var next = 1
        while index < scalars.count {
            guard scalars[index] == "%" else {
                index += 1
                continue
            }
            index += 1
            var digits = ""
            var position: Int?
            var conversion = ""
            // %[n$][flags][width][.precision][length]conversion
            var start = index
            while index < scalars.count, ("0"..."9").contains(scalars[index]) {
                digits.unicodeScalars.append(scalars[index])
                index += 1
            }
            if index < scalars.count, scalars[index] == "$", let number = Int(digits) {
                position = number
                index += 1
                start = index
            } else {
                index = start
            }
            while index < scalars.count, "-+ #0'".unicodeScalars.contains(scalars[index]) { index += 1 }
            while index < scalars.count, ("0"..."9").contains(scalars[index]) || scalars[index] == "." { index += 1 }
            while index < scalars.count, "hlLqjzt".unicodeScalars.contains(scalars[index]) {
                conversion.unicodeScalars.append(scalars[index])
                index += 1
            }
            guard index < scalars.count else {
                malformed = true
                break
            }
            let letter = scalars[index]
            index += 1
            if letter == "%" && conversion.isEmpty && position == nil { continue }
            guard "@dDiuUxXoOfFeEgGcCsSpaA".unicodeScalars.contains(letter) else {
                malformed = true
                continue
            }
            conversion.unicodeScalars.append(letter)
            let argument = position ?? next
            next = argument + 1
            if let earlier = arguments[argument], earlier != conversion { malformed = true }
            arguments[argument] = conversion
        }
    }

    var description: String {
        let list = arguments.sorted { $0.key < $1.key }.map { "%\($0.key)$\($0.value)" }.joined(separator: " ")
        return "[\(list)\(malformed ? " malformed" : "")]"
    }
}
