import Foundation
import SesameTestSupport
import Testing

/// Every word for the user comes from the translation catalogs: each `L("…")` of the app is in
/// `Resources/po/sesame.pot` and translated (not empty, not fuzzy) in each language, with the
/// same printf arguments. The strings are read by gettext's own `xgettext`
/// (`scripts/extract-strings.sh`, which `make po` runs too), the catalogs checked by `msgmerge`,
/// `msgcmp` and `msgfmt --check`: the tools a translator's and a distribution's builds use.
@Suite("The translation catalogs")
struct TranslationCatalogTests {
    static let languages = ["es", "el", "zh_CN", "zh_TW"]
    static let catalogs = Repository.root.appending(path: "Resources/po")

    @Test("L is called only with a string literal without interpolation (anything else xgettext cannot list)")
    func onlyLiterals() throws {
        // `L(` not followed by a literal, or a literal that interpolates: neither is in a catalog.
        // (Swift's Regex has no lookbehind: the character before `L` is part of the match.)
        let notALiteral = try Regex(#"(^|[^A-Za-z0-9_.])L\((?!\s*")"#).anchorsMatchLineEndings()
        let interpolated = try Regex(#"(^|[^A-Za-z0-9_.])L\(\s*"(?:[^"\\\n]|\\[^(])*\\\("#).anchorsMatchLineEndings()
        let literal = try Regex(#"(^|[^A-Za-z0-9_.])L\(\s*""#).anchorsMatchLineEndings()
        var found: [String] = []
        var calls = 0
        for (file, text) in try Self.swiftSources() {
            let code = Self.removingComments(text)
            calls += code.matches(of: literal).count
            for match in code.matches(of: notALiteral) + code.matches(of: interpolated) {
                let line = code[..<match.range.lowerBound].count { $0 == "\n" } + 1
                if code[match.range].hasSuffix("L(") && code[match.range.upperBound...].hasPrefix("_ ") { continue }  // the function itself
                found.append("\(file):\(line)")
            }
        }
        #expect(calls > 100, "only \(calls) L(\"…\") found under \(Repository.root.path)/Sources")
        #expect(found.isEmpty, "L called with something other than a plain string literal:\n\(found.joined(separator: "\n"))")
    }

    @Test("no widget of the window is given words that bypass L (only the product's name)")
    func noRawWidgetText() throws {
        // A widget's title, label, placeholder, accessible name or markup given a plain literal.
        let pattern = try Regex(
            #"(Button|Label|MenuButton|Entry|SearchEntry)\("[^"]*[A-Za-z][^"]*"|(title|placeholder|accessibleName): "[^"]*[A-Za-z]|\.(text|title|accessibleName) = "[^"]*[A-Za-z]"#
        )
        var found: [String] = []
        for (file, text) in try Self.swiftSources() where file.hasPrefix("Sources/SesameGtk/") {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            for (number, line) in lines.enumerated() where line.contains(pattern) && !line.contains("\"Sesame\"") {
                found.append("\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(found.isEmpty, "words for the user without L:\n\(found.joined(separator: "\n"))")
    }

    @Test("sesame.pot lists exactly the strings of the app (make po)")
    func templateIsCurrent() throws {
        let extracted = try Self.extracted()
        let template = Self.catalogs.appending(path: "sesame.pot")
        let missing = try Self.gettext("msgcmp", ["--use-untranslated", template.path, extracted.path])
        #expect(
            missing.status == 0,
            "missing from sesame.pot (run `make po`):\n\(Self.naming(missing.stderr, in: extracted).joined(separator: "\n"))")
        let unused = try Self.gettext("msgcmp", ["--use-untranslated", extracted.path, template.path])
        #expect(
            unused.status == 0,
            "in sesame.pot, no longer in the app (run `make po`):\n\(Self.naming(unused.stderr, in: template).joined(separator: "\n"))")
    }

    @Test("each catalog translates every string of the app, with the same printf arguments", arguments: languages)
    func catalogIsComplete(language: String) throws {
        let problems = try Self.problems(of: Self.catalogs.appending(path: "\(language).po"))
        #expect(problems.isEmpty, "\(language).po:\n\(problems.joined(separator: "\n"))")
    }

    @Test("the checks see what they must: a missing, an empty, a fuzzy and a mistranslated string, a bad header")
    func theChecksThemselves() throws {
        let folder = Repository.temporaryDirectory("catalog-check")
        defer { try? FileManager.default.removeItem(at: folder) }
        let broken = folder.appending(path: "xx.po")
        try Data(
            #"""
            msgid ""
            msgstr ""
            "Content-Type: text/plain; charset=UTF-8\n"

            msgid "Sign in"
            msgstr ""

            #, fuzzy
            msgid "Sign out"
            msgstr "Salir"

            msgid "People found: %d"
            msgstr "Personas: %@"

            """#.utf8
        ).write(to: broken)
        let template = folder.appending(path: "xx.pot")
        try Data(
            #"""
            msgid ""
            msgstr "Content-Type: text/plain; charset=UTF-8\n"

            msgid "Sign in"
            msgstr ""

            msgid "Sign out"
            msgstr ""

            #, objc-format
            msgid "People found: %d"
            msgstr ""

            msgid "Switch account"
            msgstr ""

            """#.utf8
        ).write(to: template)
        let problems = try Self.problems(of: broken, template: template).joined(separator: "\n")
        #expect(problems.contains("untranslated"), "an empty translation passed:\n\(problems)")
        #expect(problems.contains("reviewed by the translator"), "a fuzzy translation passed:\n\(problems)")
        #expect(problems.contains("format specifications"), "another argument passed:\n\(problems)")
        #expect(problems.contains("header field"), "a header without the language passed:\n\(problems)")
        #expect(problems.count { $0 == "\n" } >= 4, "the missing \"Switch account\" passed:\n\(problems)")
    }

    // MARK: gettext

    /// What is wrong with `catalog` against `template` (by default the sources' strings), in
    /// gettext's words: merged with the template in a scratch copy (so the template's
    /// objc-format flags apply), every string missing, empty or fuzzy (`msgcmp`), every
    /// translation whose arguments differ and every header field missing (`msgfmt --check`).
    static func problems(of catalog: URL, template: URL? = nil) throws -> [String] {
        let template = try template ?? extracted()
        let merged = Repository.temporaryDirectory("catalog-merge").appending(path: catalog.lastPathComponent)
        defer { try? FileManager.default.removeItem(at: merged.deletingLastPathComponent()) }
        let merge = try gettext("msgmerge", ["--quiet", "--no-wrap", "--output-file=\(merged.path)", catalog.path, template.path])
        guard merge.status == 0 else { return ["msgmerge failed: \(merge.stderr)"] }
        var problems: [String] = []
        let compared = try gettext("msgcmp", [merged.path, template.path])
        problems += naming(compared.stderr, in: merged).filter { !$0.contains("warning: this message is not used") }
        // Fuzzy entries too: msgmerge marks a translation fuzzy when its arguments no longer agree.
        let checked = try gettext("msgfmt", ["--check", "--use-fuzzy", "--output-file=/dev/null", merged.path])
        problems += naming(checked.stderr, in: merged)
        return problems.filter { !$0.contains(": found ") }.map {
            $0.replacingOccurrences(of: merged.path, with: catalog.lastPathComponent)
        }
    }

    /// gettext's `FILE:LINE: sentence` lines, each with the msgid of the entry at LINE of `file`
    /// (the tools name only a line, of a scratch file: the entry's msgid or msgstr line).
    static func naming(_ output: String, in file: URL) -> [String] {
        let lines = (try? String(contentsOf: file, encoding: .utf8))?.split(separator: "\n", omittingEmptySubsequences: false) ?? []
        return output.split(separator: "\n").map { message in
            let fields = message.split(separator: ":", maxSplits: 2)
            guard fields.count == 3, String(fields[0]) == file.path, let number = Int(fields[1]), lines.indices.contains(number - 1),
                let msgid = lines[..<number].last(where: { $0.hasPrefix("msgid ") })
            else { return String(message) }
            return "\(message): \(msgid)"
        }
    }

    /// The sources' strings as `scripts/extract-strings.sh` writes them (xgettext), once per run.
    static func extracted() throws -> URL {
        try extraction.get()
    }

    private static let extraction = Result<URL, any Error> {
        let output = Repository.temporaryDirectory("strings").appending(path: "sesame.pot")
        let run = try ProcessRunner.run(URL(filePath: "/bin/bash"), [Repository.root.appending(path: "scripts/extract-strings.sh").path])
        guard run.status == 0 else { throw TestSupportError("scripts/extract-strings.sh failed:\n\(run.stderr)") }
        try Data(run.stdout.utf8).write(to: output)
        return output
    }

    static func gettext(_ tool: String, _ arguments: [String]) throws -> ProcessRunner.Result {
        try ProcessRunner.run(URL(filePath: "/usr/bin/\(tool)"), arguments, environment: ["LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"])
    }

    // MARK: The sources

    /// Every Swift file under `Sources/`, by its path from the repository's root.
    static func swiftSources() throws -> [(String, String)] {
        let folder = Repository.root.appending(path: "Sources")
        var files: [(String, String)] = []
        for case let file as URL in FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) ?? .init()
        where file.pathExtension == "swift" {
            let path = String(file.standardizedFileURL.path.dropFirst(Repository.root.path.count + 1))
            files.append((path, try String(contentsOf: file, encoding: .utf8)))
        }
        return files.sorted { $0.0 < $1.0 }
    }

    /// `text` with its `//` comments blanked (lines kept, so line numbers stay): a comment may
    /// mention `L(name)`. A `//` inside a string literal is left alone.
    static func removingComments(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> Substring in
            var inString = false
            var previous: Character = " "
            for index in line.indices {
                let character = line[index]
                if character == "\"" && previous != "\\" { inString.toggle() }
                if !inString && character == "/" && previous == "/" { return line[..<line.index(before: index)] }
                previous = character
            }
            return line
        }.joined(separator: "\n")
    }
}
