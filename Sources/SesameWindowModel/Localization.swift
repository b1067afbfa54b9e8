import CLibIntl
import FoundationEssentials
import SesameSystem

/// UI text in the user's language (gettext domain `sesame`), chosen by the usual variables
/// (`LANGUAGE`, `LC_ALL`, `LC_MESSAGES`, `LANG`). Translations: es, el, zh_CN, zh_TW.
public enum Localization {
    public static let domain = "sesame"

    /// Binds the domain to the first directory that has compiled catalogs:
    /// `$SESAME_LOCALE_DIR`, `<prefix>/share/locale` next to an installed binary, or the
    /// build's `.build/locale` (what `make` compiles from `Resources/po`).
    public static func setUp(executable: URL?, sourceRoot: URL) {
        setlocale(LC_ALL, "")
        var candidates: [URL] = []
        if let override = ProcessInfo.processInfo.environment["SESAME_LOCALE_DIR"] { candidates.append(URL(filePath: override)) }
        if let executable {
            candidates.append(RunningExecutable.prefix(of: executable.deletingLastPathComponent()).appending(path: "share/locale"))
        }
        candidates.append(sourceRoot.appending(path: ".build/locale"))
        let directory =
            candidates.first { FileManager.default.fileExists(atPath: $0.appending(path: "es/LC_MESSAGES/\(domain).mo").path) }
            ?? candidates[candidates.count - 1]
        bindtextdomain(domain, directory.path)
        bind_textdomain_codeset(domain, "UTF-8")
    }

    /// The translation of `text` (the English text is the key).
    public static func text(_ text: String) -> String {
        // Without a translation gettext returns the msgid itself: read the answer while it is alive.
        text.withCString { msgid in String(cString: dgettext(domain, msgid)) }
    }
}

/// `L("Sign out")`: the UI text, translated.
// swift-format-ignore: AlwaysUseLowerCamelCase
public func L(_ text: String) -> String { Localization.text(text) }
