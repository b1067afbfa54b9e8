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
