import Foundation

/// Where the tests find the project's files and the products `swift build` made.
public enum Repository {
    /// The repository's root folder.
    public static let root = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../..").standardized

    /// The bundled sample settings, `Resources/settings/NAME`.
    public static func settings(_ name: String) -> URL { root.appending(path: "Resources/settings/\(name)") }

    /// A product `swift build` made (`sesame`, `identity-emulator`): next to the test bundle.
    public static func product(_ name: String) throws -> URL {
        let bundle = URL(filePath: CommandLine.arguments[0])
        let candidates = [
            bundle.deletingLastPathComponent(), bundle.deletingLastPathComponent().deletingLastPathComponent(),
            root.appending(path: ".build/debug"),
        ]
        .map { $0.appending(path: name) }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw TestSupportError("\(name) is not built: run `swift build` (make test does).")
        }
        return found
    }

    /// A new empty folder under the system's temporary folder.
    public static func temporaryDirectory(_ prefix: String) -> URL {
        let url = FileManager.default.temporaryDirectory.appending(path: "\(prefix)-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The Python `make test` prepares: Debian's (for python3-gi and AT-SPI), with MSAL and
    /// Selenium from PyPI, in `.build/test-venv`; `SESAME_TEST_PYTHON` overrides it.
    public static func python() throws -> URL {
        let configured = ProcessInfo.processInfo.environment["SESAME_TEST_PYTHON"].map { URL(filePath: $0) }
        let venv = root.appending(path: ".build/test-venv/bin/python")
        guard let found = [configured, venv].compactMap({ $0 }).first(where: { FileManager.default.isExecutableFile(atPath: $0.path) })
        else {
            throw TestSupportError(
                "No test Python: run `make test` (it creates .build/test-venv with msal and selenium) or set SESAME_TEST_PYTHON.")
        }
        return found
    }
}

extension Repository {
    /// ROADtools' `roadtx` as `make test` installs it (pinned, from PyPI, unchanged) in
    /// `.build/roadtx-venv`; `SESAME_TEST_ROADTX` overrides it.
    public static func roadtx() throws -> URL {
        let configured = ProcessInfo.processInfo.environment["SESAME_TEST_ROADTX"].map { URL(filePath: $0) }
        let venv = root.appending(path: ".build/roadtx-venv/bin/roadtx")
        guard let found = [configured, venv].compactMap({ $0 }).first(where: { FileManager.default.isExecutableFile(atPath: $0.path) })
        else { throw TestSupportError("No roadtx: run `make test` (it creates .build/roadtx-venv) or set SESAME_TEST_ROADTX.") }
        return found
    }
}

/// A test's set-up failed; the message says what to do.
public struct TestSupportError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
