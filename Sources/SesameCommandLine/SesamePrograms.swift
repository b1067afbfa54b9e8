import FoundationEssentials
import SesameService
import SesameSystem

/// Where Sesame's other programs are, from the running one's own file (``RunningExecutable``):
/// beside it in a build; installed, `sesame` and `identity-emulator` in `<prefix>/bin`,
/// `sesame-window` and `sesame-service` in `<prefix>/libexec/sesame` (docs/INSTALL.md).
public enum SesamePrograms {
    /// The window: GTK and WebKit, which only it loads (`sesame` starts it).
    public static let window = "sesame-window"
    /// The command line: `sesame` without a window loads no GTK.
    public static let commandLine = "sesame"
    /// The account service D-Bus activation starts.
    public static let service = "sesame-service"
    /// The local identity platform `sesame --demo` starts.
    public static let emulator = "identity-emulator"

    /// `name`'s file, or `nil` when none of the places holds an executable of that name.
    public static func locate(_ name: String) -> URL? {
        candidates(for: name).first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// The places `name` is looked for, in order (for the error that says where): beside the
    /// running program, then in its own prefix — never another prefix's program of another version.
    public static func candidates(for name: String) -> [URL] {
        RunningExecutable.url.map { candidates(for: name, from: $0.deletingLastPathComponent()) } ?? []
    }

    /// The places `name` is looked for from a program in `folder`.
    public static func candidates(for name: String, from folder: URL) -> [URL] {
        let prefix = RunningExecutable.prefix(of: folder)
        let installed = [prefix.appending(path: "bin/\(name)"), prefix.appending(path: "libexec/sesame/\(name)")]
        var seen = Set<String>()
        return ([folder.appending(path: name)] + installed).filter { seen.insert($0.standardizedFileURL.path).inserted }
    }

    /// Sesame's own programs that ask the account service — the window and the command line —
    /// which are never asked about: each could read the store anyway.
    public static func own() -> Set<ProgramIdentity> {
        Set([window, commandLine].compactMap { locate($0).flatMap { ProgramIdentity.executable($0.path) } })
    }

    /// `name` as a sentence's end: "was not found in /a, /b or /c".
    public static func notFound(_ name: String) -> String {
        let places = candidates(for: name).map { $0.deletingLastPathComponent().path }
        let listed = places.count > 1 ? places.dropLast().joined(separator: ", ") + " or " + places.last! : places.first ?? "?"
        return "\(name) was not found in \(listed)"
    }
}
