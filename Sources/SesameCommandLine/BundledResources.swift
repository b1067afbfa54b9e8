import FoundationEssentials
import SesameSystem

/// Finds the files under `Resources/`: `$SESAME_DATA_DIR`, then `<prefix>/share/sesame` next
/// to an installed binary, then the source tree this binary was built from.
public enum BundledResources {
    public static func directory() throws -> URL {
        var candidates: [URL] = []
        if let override = ProcessInfo.processInfo.environment["SESAME_DATA_DIR"] {
            candidates.append(URL(fileURLWithPath: override, isDirectory: true))
        }
        if let prefix = RunningExecutable.prefix {
            candidates.append(prefix.appending(path: "share/sesame"))
        }
        candidates.append(
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "../../Resources").standardizedFileURL)
        for candidate in candidates where FileManager.default.fileExists(atPath: candidate.appending(path: "settings").path) {
            return candidate
        }
        throw BundledResourcesError(searched: candidates.map(\.path))
    }

    /// Sesame's user guide, where it is: installed (`<prefix>/share/doc/sesame/USER-GUIDE.md`), or
    /// in the source tree this binary was built from.
    public static func userGuide() -> URL? {
        var candidates: [URL] = []
        if let prefix = RunningExecutable.prefix {
            candidates.append(prefix.appending(path: "share/doc/sesame/USER-GUIDE.md"))
        }
        candidates.append(
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "../../docs/USER-GUIDE.md").standardizedFileURL)
        return candidates.first { FileManager.default.fileExists(atPath: $0.path) }
    }

    /// The bundled sample settings, in the app's order: directory, tasks, me.
    public static func settingsFiles() throws -> [URL] {
        let settings = try directory().appending(path: "settings")
        return ["directory", "tasks", "me"].map { settings.appending(path: "\($0).plist") }
            .filter { FileManager.default.fileExists(atPath: $0.path) }
    }
}

public struct BundledResourcesError: Error, CustomStringConvertible {
    let searched: [String]
    public var description: String {
        "Sesame's resources (settings/) were not found; set SESAME_DATA_DIR. Looked in: \(searched.joined(separator: ", "))"
    }
}
