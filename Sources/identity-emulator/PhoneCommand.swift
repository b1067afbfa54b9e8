import ArgumentParser
import AsyncHTTPClient
import FoundationEssentials
import Glibc
import NIOCore
import NIOSSL

/// `identity-emulator phone`: the phone of a user of a running emulator, for a presenter or a
/// test: answers Microsoft Authenticator's request (approve with the number the sign-in page
/// shows, deny, or report it), or activates the app from the code under "Can't scan image?".
struct PhoneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "phone",
        abstract: "Answer a sign-in on a user's phone: approve NUMBER, deny, report, or activate CODE.",
        discussion: """
            Examples:
              identity-emulator phone --emulator http://127.0.0.1:8400 megan@contoso.onmicrosoft.com approve 42
              identity-emulator phone --emulator http://127.0.0.1:8400 megan@contoso.onmicrosoft.com deny
              identity-emulator phone --emulator https://127.0.0.1:8443 --ca-certificate ca.pem alex@contoso.onmicrosoft.com \
            activate 123456789
            """)

    @Option(help: ArgumentHelp("The emulator's base URL, as its first line printed it.", valueName: "URL"))
    var emulator: String

    @Option(
        name: .customLong("ca-certificate"),
        help: ArgumentHelp("The CA certificate a --tls emulator printed (ca-certificate <path>).", valueName: "PATH"))
    var caCertificate: String?

    @Argument(help: "The user whose phone answers, e.g. megan@contoso.onmicrosoft.com.")
    var user: String

    @Argument(help: "approve, deny, report (\"No, it's not me\"), or activate.")
    var answer: String

    @Argument(help: "approve: the number the sign-in page shows; activate: the code under \"Can't scan image?\".")
    var value: String?

    @Option(help: "activate: the phone's name, as Security info lists it.")
    var device = "Phone"

    func validate() throws {
        guard let url = URL(string: emulator), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            throw ValidationError("--emulator must be the emulator's http:// or https:// base URL, e.g. http://127.0.0.1:8400")
        }
        switch answer {
        case "approve":
            guard let value, Int(value) != nil else {
                throw ValidationError("approve needs the number the sign-in page shows, e.g. approve 42")
            }
        case "activate":
            guard let value, !value.isEmpty, value.allSatisfy(\.isNumber) else {
                throw ValidationError("activate needs the code shown under \"Can't scan image?\", e.g. activate 123456789")
            }
        case "deny", "report": break
        default: throw ValidationError("'\(answer)' is not approve, deny, report or activate.")
        }
    }

    func run() async throws {
        let base = emulator.hasSuffix("/") ? String(emulator.dropLast()) : emulator
        let (path, body): (String, String)
        switch answer {
        case "activate":
            path = "/.emulator/authenticator/activate"
            body = #"{"code": "\#(value ?? "")", "device": \#(Self.quoted(device))}"#
        case "approve":
            path = "/.emulator/users/\(user)/authenticator"
            body = #"{"answer": "approve", "number": \#(Int(value ?? "") ?? 0)}"#
        default:
            path = "/.emulator/users/\(user)/authenticator"
            body = #"{"answer": "\#(answer)"}"#
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caCertificate { tls.trustRoots = .file(caCertificate) }
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        do {
            var request = HTTPClientRequest(url: base + path)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
            let response = try await client.execute(request, timeout: .seconds(30))
            let text = String(buffer: try await response.body.collect(upTo: 64 * 1024))
            try await client.shutdown()
            guard response.status == .ok else {
                let said = (try? JSONDecoder().decode([String: String].self, from: Data(text.utf8)))?["error"] ?? text
                let line = Array("identity-emulator phone: \(said)\n".utf8)
                _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
                throw ExitCode(1)
            }
            print(text)
        } catch let exit as ExitCode {
            throw exit
        } catch {
            try? await client.shutdown()
            throw ValidationError("Could not reach the emulator at \(base): \(error)")
        }
    }

    private static func quoted(_ text: String) -> String {
        "\"" + text.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"").filter { !$0.isNewline } + "\""
    }
}
