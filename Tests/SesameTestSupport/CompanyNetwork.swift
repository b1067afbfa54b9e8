import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL

/// A company's network, made on this machine for a test: a network namespace with only loopback
/// inside, where the identity emulator serves HTTPS as `login.contoso.test` (a name that resolves
/// only inside, through `/etc/netns/NAME/hosts`) and Debian's tinyproxy listens. This machine
/// reaches nothing inside but the proxy, through a bridge (socat: a loopback port here → a Unix
/// socket → the proxy's port inside), as a desktop behind a company's proxy reaches Microsoft.
/// The emulator's CA is the company's: ``installCertificateAuthority()`` adds it the Debian way.
///
/// Needs root (`ip netns`, `/etc/netns`, the system's trust store); `make test` runs as root.
public final class CompanyNetwork: @unchecked Sendable {
    /// The service's host name.
    public static let hostname = "login.contoso.test"
    /// Where the service is: `https://login.contoso.test:443`.
    public private(set) var base = URL(string: "https://\(hostname):443")!
    /// The loopback port on this machine that leads to the proxy.
    public private(set) var proxyPort = 0
    /// The emulator's announcements (one-time codes).
    public let codes = OneTimeCodes()
    /// The emulator's CA certificate (PEM).
    public private(set) var caCertificate = URL(filePath: "/nonexistent")
    /// The namespace's name.
    public let name: String
    private let directory: URL
    private var emulator: EmulatorProcess?
    private var proxy: TinyProxy?
    private var bridges: [Process] = []
    private var installedCA: URL?

    static let ip = "/usr/sbin/ip"

    /// Whether this test run can make one (root, and `ip` installed).
    public static var isAvailable: Bool { getuid() == 0 && FileManager.default.isExecutableFile(atPath: ip) }

    /// Makes the namespace and starts the emulator (with `emulatorArguments` added), the proxy and
    /// the bridge; returns once a request through the proxy reaches the service. The emulator
    /// serves under `hostname`; `alsoNamed` are further names the namespace resolves to it (the
    /// device registration service's, when the emulator is told to serve it under one).
    public init(hostname: String = CompanyNetwork.hostname, alsoNamed: [String] = [], emulatorArguments: [String] = []) async throws {
        guard Self.isAvailable else { throw TestSupportError("a company network needs root and iproute2's ip") }
        Self.removeLeftovers()
        name = "sesame-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        directory = Repository.temporaryDirectory("company-network")
        try Self.run([Self.ip, "netns", "add", name])
        do {
            try Self.run([Self.ip, "-n", name, "link", "set", "lo", "up"])
            let hosts = URL(filePath: "/etc/netns/\(name)")
            try FileManager.default.createDirectory(at: hosts, withIntermediateDirectories: true)
            try "127.0.0.1 localhost \(([hostname] + alsoNamed).joined(separator: " "))\n::1 localhost\n".write(
                to: hosts.appending(path: "hosts"), atomically: true, encoding: .utf8)
            let inside = [Self.ip, "netns", "exec", name]
            let emulator = try EmulatorProcess(
                [
                    "--host", "127.0.0.1", "--port", "443", "--tls", "--hostname", hostname, "--users", "50",
                    "--state-dir", directory.appending(path: "emulator").path,
                ] + emulatorArguments, launcher: inside)
            self.emulator = emulator
            guard let listening = emulator.readLine(), let url = listening.split(separator: " ").last.flatMap({ URL(string: String($0)) }),
                let caLine = emulator.readLine(), caLine.hasPrefix("ca-certificate ")
            else { throw TestSupportError("the emulator in \(name) did not start: \(emulator.standardError)") }
            base = url
            caCertificate = URL(filePath: String(caLine.dropFirst("ca-certificate ".count)))
            Thread.detachNewThread { [emulator, codes] in
                while let line = emulator.readLine() { codes.record(line) }
            }
            let proxy = try TinyProxy(launcher: inside, port: 8888)
            self.proxy = proxy
            let socket = directory.appending(path: "proxy.sock").path
            proxyPort = try FreePort.pick()
            bridges.append(
                try Self.start(inside + ["/usr/bin/socat", "UNIX-LISTEN:\(socket),fork,unlink-early", "TCP:127.0.0.1:\(proxy.port)"]))
            bridges.append(
                try Self.start(["/usr/bin/socat", "TCP-LISTEN:\(proxyPort),bind=127.0.0.1,fork,reuseaddr", "UNIX-CONNECT:\(socket)"]))
            try FreePort.waitUntilListening(proxyPort, timeout: 10)
            try await waitUntilReachable()
        } catch {
            stop()
            throw error
        }
    }

    /// Runs a program inside the namespace (where the service's names resolve to it) in
    /// `directory`, with only `environment`: a client nobody here wrote, as it runs on a machine
    /// of the company's.
    public func run(_ command: [String], environment: [String: String], in directory: URL) throws -> ProcessRunner.Result {
        let variables = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return try ProcessRunner.run(
            URL(filePath: Self.ip), ["netns", "exec", name, "/usr/bin/env", "-i"] + variables + command, currentDirectory: directory)
    }

    /// The `CONNECT host:port` requests the proxy took, in order.
    public var tunnels: [String] { proxy?.tunnels ?? [] }

    /// A client that goes through the proxy and trusts the emulator's CA: the test's own way in
    /// (its browser), not Sesame's.
    public func client() throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.additionalTrustRoots = [.file(caCertificate.path)]
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
        configuration.proxy = .server(host: "127.0.0.1", port: proxyPort)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    private func waitUntilReachable() async throws {
        let client = try client()
        defer { Task { try? await client.shutdown() } }
        var last = "nothing yet"
        let reachable = await Eventually.holds(within: .seconds(30), every: .milliseconds(100)) {
            do {
                let response = try await client.execute(
                    HTTPClientRequest(url: base.appending(path: "common/v2.0/.well-known/openid-configuration").absoluteString),
                    timeout: .seconds(5))
                last = "HTTP \(response.status.code)"
                return response.status == .ok
            } catch {
                last = "\(error)"
                return false
            }
        }
        guard reachable else { throw TestSupportError("the service in \(name) is not reachable through its proxy: \(last)") }
    }

    /// Adds the emulator's CA to the system's trust store, as IT installs a company's CA on
    /// Debian: `/usr/local/share/ca-certificates/*.crt`, then `update-ca-certificates`.
    public func installCertificateAuthority() throws {
        let file = URL(filePath: "/usr/local/share/ca-certificates/\(name).crt")
        try FileManager.default.copyItem(at: caCertificate, to: file)
        installedCA = file
        try Self.run(["/usr/sbin/update-ca-certificates"])
    }

    /// Takes the CA out of the system's trust store again.
    public func removeCertificateAuthority() {
        guard let installedCA else { return }
        try? FileManager.default.removeItem(at: installedCA)
        self.installedCA = nil
        _ = try? Self.run(["/usr/sbin/update-ca-certificates", "--fresh"])
    }

    /// Stops everything and removes the namespace, its hosts file and the CA.
    public func stop() {
        removeCertificateAuthority()
        for bridge in bridges { bridge.end() }
        bridges = []
        // The processes inside were started by `ip netns exec`, which execs them: they are ours.
        emulator?.stop()
        emulator = nil
        proxy?.stop()
        proxy = nil
        _ = try? Self.run([Self.ip, "netns", "del", name])
        try? FileManager.default.removeItem(at: URL(filePath: "/etc/netns/\(name)"))
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }

    /// What a test run that was killed left behind — namespaces, hosts files, CAs named after a
    /// process that no longer runs — so a CA is never trusted longer than its test.
    static func removeLeftovers() {
        func deadOwner(_ name: String) -> Bool {
            let parts = name.split(separator: "-")
            guard parts.count == 3, parts[0] == "sesame", let pid = Int32(parts[1]) else { return false }
            return kill(pid, 0) != 0 && errno == ESRCH
        }
        let certificates = "/usr/local/share/ca-certificates"
        var removedCA = false
        for file in (try? FileManager.default.contentsOfDirectory(atPath: certificates)) ?? []
        where file.hasSuffix(".crt") && deadOwner(String(file.dropLast(4))) {
            try? FileManager.default.removeItem(atPath: "\(certificates)/\(file)")
            removedCA = true
        }
        if removedCA { _ = try? run(["/usr/sbin/update-ca-certificates", "--fresh"]) }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/etc/netns")) ?? [] where deadOwner(name) {
            _ = try? run([ip, "netns", "del", name])
            try? FileManager.default.removeItem(atPath: "/etc/netns/\(name)")
        }
    }

    @discardableResult
    static func run(_ command: [String]) throws -> ProcessRunner.Result {
        let result = try ProcessRunner.run(URL(filePath: command[0]), Array(command.dropFirst()))
        guard result.status == 0 else {
            throw TestSupportError("\(command.joined(separator: " ")) failed (\(result.status)): \(result.stderr)")
        }
        return result
    }

    static func start(_ command: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(filePath: command[0])
        process.arguments = Array(command.dropFirst())
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.start()
        return process
    }
}
