import Foundation
import SesameCore
import Testing

/// Which organization "Register This Computer…" and `sesame device register` register with,
/// from the settings the user has.
@Suite("Registration target")
struct RegistrationTargetTests {
    static let bundled = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../Resources/settings").standardized

    static func settings(_ names: String...) throws -> [SampleSettings] {
        try names.map { try SettingsFile.load(contentsOf: bundled.appending(path: $0)).settings }
    }

    @Test("the first work account type is the organization, its tenant from the authority")
    func firstWorkAccountType() throws {
        let target = try RegistrationTarget(settings: Self.settings("tasks.plist", "me.plist", "directory.plist"))
        #expect(target.accountType == "msalGraph")
        #expect(target.tenant == "contoso.onmicrosoft.com")
        #expect(target.authority.absoluteString == "https://login.microsoftonline.com/contoso.onmicrosoft.com")
    }

    @Test("a named account type is used; B2C, unknown names and no work account say what to fix")
    func namedAndRefused() throws {
        let all = try Self.settings("tasks.plist", "me.plist", "directory.plist")
        #expect(try RegistrationTarget(settings: all, accountType: "myGraphService").accountType == "myGraphService")
        let b2c = all.first { $0.accountConfiguration.policy != nil }?.accountType ?? ""
        #expect(throws: RegistrationTarget.Problem.self) { try RegistrationTarget(settings: all, accountType: b2c) }
        do {
            _ = try RegistrationTarget(settings: all, accountType: "nope")
            Issue.record("an unknown account type was accepted")
        } catch {
            #expect(error.description.contains("There is no account type 'nope'"))
            #expect(error.description.contains("myGraphService"), "the settings' names are listed")
        }
        #expect(throws: RegistrationTarget.Problem.self) { try RegistrationTarget(settings: Self.settings("tasks.plist")) }
    }
}
