/// Sesame's version, written here only: `sesame --version` prints it, and `make deb` reads it
/// (the Debian package's version and changelog; the AppStream metainfo's newest release must
/// name it).
enum Version {
    static let current = "0.3.0"
}
