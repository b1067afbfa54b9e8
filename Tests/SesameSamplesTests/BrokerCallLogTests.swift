import Foundation
import SesameCore
import SesameCoreTestSupport
import SesameService
import Testing

/// The broker's call log (`broker-calls.log`, for `sesame doctor`) names which programs asked for
/// what and when: the user's business alone, as every other file Sesame writes.
@MainActor
@Suite("The broker's call log")
struct BrokerCallLogTests {
    @Test("the call log is the user's alone (0600), and one left more open by an earlier version is made so at the next call")
    func ownerOnly() async throws {
        let fixture = try await SamplesFixture()
        defer { fixture.remove() }
        let folder = FileManager.default.temporaryDirectory.appending(path: "sesame-calls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = folder.appending(path: "sesame/broker-calls.log")
        let service = AccountService(
            store: fixture.model.store, accountTypes: [], trace: fixture.trace, access: ProgramAccess(file: nil), trusted: [])
        let broker = BrokerService(
            service: service, store: fixture.model.store, trace: fixture.trace, version: "0.3.0", extraHosts: [], callLog: log)
        let version = try BrokerRequest.parse(
            method: BrokerMethod.getLinuxBrokerVersion.rawValue, protocolVersion: "0.0", correlationID: "c",
            request: #"{"msalCppVersion":"1.0"}"#)
        let mode = { () throws -> Int in
            try #require(try FileManager.default.attributesOfItem(atPath: log.path)[.posixPermissions] as? Int)
        }

        _ = await broker.answer(version, from: BrokerServiceTests.app)
        let created = try mode()
        #expect(created == 0o600, "a new call log was created \(String(created, radix: 8))")

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: log.path)
        _ = await broker.answer(version, from: BrokerServiceTests.app)
        let kept = try mode()
        #expect(kept == 0o600, "an earlier, more open call log stayed \(String(kept, radix: 8))")
        #expect(BrokerCallLog(file: log).lines.count == 2, "the earlier call was lost")
    }
}
