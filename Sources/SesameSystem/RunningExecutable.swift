import FoundationEssentials

/// The running program's own file, as the kernel knows it (`/proc/self/exe`): where Sesame looks
/// for what it installed beside itself (`<prefix>/share/sesame`, `<prefix>/share/locale`).
/// Never `argv[0]`: run by name ("sesame" found on `PATH`) it is a bare name that resolves against
/// the current directory, and a folder someone else controls could then supply the settings
/// (a `tokenURL` of their own) or the translations.
public enum RunningExecutable {
    /// The executable's absolute path with symbolic links resolved, or `nil` when the system
    /// does not say (no `/proc`); an absolute `argv[0]` is trusted as a last resort.
    public static var url: URL? {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"), path.hasPrefix("/") {
            return URL(filePath: path).resolvingSymlinksInPath()
        }
        guard let first = CommandLine.arguments.first, first.hasPrefix("/") else { return nil }
        return URL(filePath: first).resolvingSymlinksInPath()
    }

    /// The prefix a program in `folder` is installed under: `<prefix>` for `<prefix>/bin` and
    /// `<prefix>/libexec/sesame`, where Sesame installs its programs; a build's folder's parent.
    public static func prefix(of folder: URL) -> URL {
        let inLibexec = folder.lastPathComponent == "sesame" && folder.deletingLastPathComponent().lastPathComponent == "libexec"
        return folder.appending(path: inLibexec ? "../.." : "..").standardizedFileURL
    }

    /// The running program's prefix (``prefix(of:)``), where its `share/` is.
    public static var prefix: URL? { url.map { prefix(of: $0.deletingLastPathComponent()) } }
}
