import FoundationEssentials

/// A settings file as read: its settings, and the keys in it that its shape does not read.
///
/// ```swift
/// let file = try SettingsFile.load(contentsOf: url)
/// for warning in file.warnings { log.warning("\(warning)") }   // "tasks.plist: "clientid" is not a key …"
/// await store.setConfiguration(file.settings.accountConfiguration, forAccountType: file.settings.accountType)
/// ```
///
/// ``SampleSettings/load(contentsOf:)`` is the same load without the warnings.
public struct SettingsFile: Sendable, Hashable {
    /// The file's path as given.
    public let path: String
    /// The settings, in the shape the file's keys name.
    public var settings: SampleSettings
    /// One warning per key the shape does not read, sorted by key; empty for a file that says
    /// only what Sesame uses. Warnings never fail the load.
    public let warnings: [SettingsWarning]

    /// Reads a settings file (a property list of at most 1 MiB).
    /// - Throws: ``SettingsError`` naming the file and the key to fix.
    public static func load(contentsOf url: URL) throws(SettingsError) -> SettingsFile {
        try read(SettingsReader(contentsOf: url))
    }

    /// Parses settings from property-list bytes; `file` names them in errors and warnings.
    public static func parse(_ data: Data, file: String) throws(SettingsError) -> SettingsFile {
        try read(SettingsReader(data: data, file: file))
    }

    private static func read(_ reader: SettingsReader) throws(SettingsError) -> SettingsFile {
        let settings = try SampleSettings.parse(reader)
        let read = reader.consulted
        let warnings = reader.unreadKeys.map { key in
            SettingsWarning(file: reader.file, key: key, shape: settings.shape, readKeys: read)
        }
        return SettingsFile(path: reader.file, settings: settings, warnings: warnings)
    }
}
