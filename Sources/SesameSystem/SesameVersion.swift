/// Sesame's version: what `sesame --version` prints, the About window shows and the Debian
/// package is named after. Changed here and nowhere else.
public enum SesameVersion {
    /// The version, `MAJOR.MINOR.PATCH`.
    public static let current = "0.3.0"
}
