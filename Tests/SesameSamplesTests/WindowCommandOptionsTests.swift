import FoundationEssentials
import SesameCommandLine
import SesameSamples
import Testing

/// `sesame --sample NAME` is checked by the command line, which links no sample code, before the
/// window opens on `Sample.Kind(rawValue: NAME)`: a sample added to the window but not to the
/// command line could never be opened, and a name only the command line knows would open nothing.
@Suite struct WindowCommandOptionsTests {
    @Test func theCommandLineNamesEverySampleTheWindowHas() {
        #expect(WindowCommandOptions.samples == Sample.Kind.allCases.map(\.rawValue))
    }

    @Test func aSampleNameTheWindowDoesNotHaveIsRefusedWithTheNamesItHas() throws {
        let options = try WindowCommandOptions.parse(["--sample", "calendar"])
        #expect(throws: (any Error).self) { try options.validate(emulator: nil) }
        let open = try WindowCommandOptions.parse(["--sample", "openid"])
        try open.validate(emulator: nil)
    }
}

/// Where one of Sesame's programs looks for another: beside itself (a build), else in its own
/// prefix's `bin` and `libexec/sesame` — never in another prefix, whose programs may be of
/// another version.
@Suite struct SesameProgramsTests {
    @Test func aBuildFindsItsProgramsBesideItself() {
        let build = URL(filePath: "/src/sesame/.build/debug")
        #expect(SesamePrograms.candidates(for: "sesame-window", from: build).first?.path == "/src/sesame/.build/debug/sesame-window")
    }

    @Test func anInstalledProgramLooksOnlyInItsOwnPrefix() {
        let command = SesamePrograms.candidates(for: "sesame-window", from: URL(filePath: "/usr/local/bin")).map(\.path)
        #expect(command == ["/usr/local/bin/sesame-window", "/usr/local/libexec/sesame/sesame-window"])
        let window = SesamePrograms.candidates(for: "identity-emulator", from: URL(filePath: "/usr/libexec/sesame")).map(\.path)
        #expect(window == ["/usr/libexec/sesame/identity-emulator", "/usr/bin/identity-emulator"])
    }
}
