import Foundation
import SesameTestSupport
import Testing

@testable import IdentityEmulator

/// The emulator stops cleanly whatever its clients do: stopped while a browser opens connections
/// (accepted ones still waiting to be served: NIO traps "Deinited NIOAsyncWriter without calling
/// finish()" when the serving task is cancelled then, apple/swift-nio#3481), and while answers
/// trickle out.
@Suite struct ShutdownTests {
    @Test func stoppingWhileABrowserOpensConnectionsEndsCleanly() async throws {
        for _ in 0..<5 {
            let emulator = try await RunningEmulator(users: 10)
            let port = try #require(emulator.base.port)
            let burst = ConnectionBurst(
                port: port, request: "GET /common/v2.0/.well-known/openid-configuration HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            // Until connections are being accepted as fast as they come.
            _ = await Eventually.holds { burst.count >= 50 }
            await emulator.stopAndWait()
            burst.stop()
        }
    }
}

/// `identity-emulator` ends on SIGTERM while its answers trickle out a byte every 100 ms (each
/// would take minutes) and clients abandon requests: it does not wait for them.
@Suite struct SignalTests {
    @Test func sigtermEndsTheEmulatorWhileAnswersTrickle() throws {
        let emulator = try EmulatorProcess(["--port", "0", "--users", "10", "--faults", "all:trickle"])
        let line = try #require(emulator.readLine())
        let port = try #require(Int(line.split(separator: ":").last ?? ""), "\(line)")
        let request = "GET /common/v2.0/.well-known/openid-configuration HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        // Clients that wait for their trickled answers, and others that give up on theirs at once.
        let trickled = try (0..<8).map { _ in try RawConnection(port: port, sending: request) }
        let burst = ConnectionBurst(port: port, request: request)
        _ = Eventually.holdsBlocking { burst.count >= 50 && trickled.allSatisfy { $0.receivedAny() } }
        kill(emulator.processIdentifier, SIGTERM)
        emulator.waitUntilExit()
        burst.stop()
        #expect(emulator.terminationStatus == 0)
        #expect(!emulator.standardError.contains("Fatal error"), "\(emulator.standardError)")
        // It ended before any trickled answer was whole (a chunked body ends with a last chunk of
        // size 0): it did not wait for them.
        for connection in trickled {
            let answer = connection.readToEnd()
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(80))")
            #expect(!answer.contains("\r\n0\r\n\r\n"), "a trickled answer was finished before the emulator ended")
        }
    }
}
