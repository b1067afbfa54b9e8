import FoundationEssentials
import SesameCore
import SesameSystem

/// What the window looked like when it was last closed — its size, whether it was maximised,
/// where the flow inspector's handle was and whether the inspector was shown — kept in a small
/// JSON file under `$XDG_STATE_HOME/sesame/` so the next start opens the same way. The file is
/// the user's but read as hostile: a missing, unreadable or odd file is the defaults, and every
/// number is kept within sense.
public struct WindowState: Codable, Sendable, Equatable {
    /// The window's width, in pixels.
    public var width: Int
    /// The window's height, in pixels.
    public var height: Int
    /// Whether the window was maximised.
    public var maximized: Bool
    /// The inspector's handle: the width of the pane left of it.
    public var inspectorPosition: Int
    /// Whether the flow inspector is shown (F9 or the primary menu toggles it; hidden at first:
    /// the samples are what a newcomer came for).
    public var inspectorShown: Bool

    /// The window of a first start.
    public static let initial = WindowState(width: 1240, height: 720, maximized: false, inspectorPosition: 660, inspectorShown: false)

    /// A state; see each property (numbers are kept within sense).
    public init(width: Int, height: Int, maximized: Bool, inspectorPosition: Int, inspectorShown: Bool) {
        self.width = Self.clamp(width, 320, 16_384)
        self.height = Self.clamp(height, 240, 16_384)
        self.maximized = maximized
        self.inspectorPosition = Self.clamp(inspectorPosition, 0, 16_384)
        self.inspectorShown = inspectorShown
    }

    /// The state kept in `file`, or ``initial`` when there is none or it cannot be used.
    public static func load(from file: URL) -> WindowState {
        guard let bytes = try? Posix.readRegularFile(file.path, limit: 4096), bytes.count < 4096,
            let read = try? JSONDecoder().decode(WindowState.self, from: Data(bytes))
        else { return .initial }
        // Through the initialiser: a hand-edited 10^9-pixel window opens at a sane size.
        return WindowState(
            width: read.width, height: read.height, maximized: read.maximized, inspectorPosition: read.inspectorPosition,
            inspectorShown: read.inspectorShown)
    }

    /// Keeps the state in `file` (its folder made if needed), replacing the old one whole.
    public func save(to file: URL) throws {
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(self).write(to: file, options: .atomic)
    }

    /// Where the window's state is kept: `$XDG_STATE_HOME/sesame/window.json` (by default
    /// `~/.local/state/sesame/window.json`).
    public static func defaultFile(environment: [String: String]) -> URL {
        let stateHome =
            environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? URL(filePath: $0) : nil }
            ?? URL(filePath: environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path).appending(path: ".local/state")
        return stateHome.appending(path: "sesame/window.json")
    }

    private static func clamp(_ value: Int, _ low: Int, _ high: Int) -> Int { min(max(value, low), high) }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            width: try container.decode(Int.self, forKey: .width), height: try container.decode(Int.self, forKey: .height),
            maximized: try container.decode(Bool.self, forKey: .maximized),
            inspectorPosition: try container.decode(Int.self, forKey: .inspectorPosition),
            inspectorShown: try container.decode(Bool.self, forKey: .inspectorShown))
    }
}
