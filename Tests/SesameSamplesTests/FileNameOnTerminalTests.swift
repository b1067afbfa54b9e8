import Foundation
import SesameCore
import SesameService
import Testing

/// A file's name is the file's owner's choice, and whoever made the file — a download, an
/// archive, another user's folder — can put a terminal's escape sequences in it: Sesame's sentences
/// that name a file show such characters spelled out, so that printing one cannot retitle the
/// terminal, hide text, or make it answer.
@Suite("A file name with escape sequences, in Sesame's sentences")
struct FileNameOnTerminalTests {
    /// ESC ] 0 ; … BEL (the terminal's title), CSI 2 J (clears the screen), and a bidi override.
    static let hostileName = "flow\u{1B}]0;owned\u{07}\u{1B}[2J\u{202E}lmth.plist"

    /// Whether `text` holds a C0 or C1 control (a newline aside), DEL or the bidi override.
    static func hasTerminalControls(_ text: String) -> Bool {
        text.unicodeScalars.contains {
            ($0.value < 0x20 && $0 != "\n") || $0.value == 0x7F || (0x80..<0xA0).contains($0.value) || $0 == "\u{202E}"
        }
    }

    @Test("a settings file's error and warnings, a flow file to replay: the name's control characters are spelled out")
    func escaped() throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "sesame-names-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appending(path: Self.hostileName)

        // Not a property list: the error names the file.
        try Data("not a plist".utf8).write(to: file)
        do {
            _ = try SettingsFile.load(contentsOf: file)
            Issue.record("a file that is no property list loaded")
        } catch {
            #expect(!Self.hasTerminalControls(error.description), "\(error.description.debugDescription)")
            #expect(
                error.description.lowercased().contains("flow\\u{1b}]0;owned\\u{7}"), "spelled out: \(error.description.debugDescription)")
        }

        // A key the shape does not read: the warning names the file.
        let settings = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>accountType</key><string>msalGraph</string>
            <key>clientId</key><string>66855f8a-60cd-445e-a9bb-8cd8eadbd3fa</string>
            <key>authority</key><string>https://login.microsoftonline.com/contoso.onmicrosoft.com</string>
            <key>scopes</key><array><string>https://graph.microsoft.com/user.read</string></array>
            <key>redirectUri</key><string>https://login.microsoftonline.com/common/oauth2/nativeclient</string>
            <key>clientid</key><string>x</string>
            </dict></plist>
            """
        try Data(settings.utf8).write(to: file)
        let loaded = try SettingsFile.load(contentsOf: file)
        let warning = try #require(loaded.warnings.first)
        #expect(!Self.hasTerminalControls(warning.description), "\(warning.description.debugDescription)")

        // A flow to replay that is none, and one that is not there.
        do {
            _ = try FlowReplay.events(fromFile: file.path)
            Issue.record("a property list replayed as a flow")
        } catch {
            #expect(!Self.hasTerminalControls(error.description), "\(error.description.debugDescription)")
        }
        do {
            _ = try FlowReplay.events(fromFile: folder.appending(path: "gone\u{1B}[2J.jsonl").path)
            Issue.record("a missing file replayed")
        } catch {
            #expect(!Self.hasTerminalControls(error.description), "\(error.description.debugDescription)")
        }
    }
}
