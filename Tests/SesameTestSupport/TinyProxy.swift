import Foundation

/// Debian's tinyproxy (`tinyproxy-bin`), started for a test on a free loopback port: the HTTP
/// proxy a company puts between its desktops and the internet. Its log records each `CONNECT`.
public final class TinyProxy: @unchecked Sendable {
    /// The port it listens on (127.0.0.1, unless `listen` said otherwise).
    public let port: Int
    /// Its folder: the configuration and the log.
    public let directory: URL
    private let process = Process()

    /// Starts tinyproxy.
    /// - Parameters:
    ///   - credentials: user and password it demands (`BasicAuth`), if any.
    ///   - listen: the address it listens on.
    ///   - launcher: a command that runs it (`ip netns exec NAME`), empty to run it here.
    ///   - port: the port; 0 picks a free one on this machine's loopback.
    public init(credentials: (String, String)? = nil, listen: String = "127.0.0.1", launcher: [String] = [], port: Int = 0) throws {
        directory = Repository.temporaryDirectory("tinyproxy")
        self.port = port == 0 ? try FreePort.pick() : port
        var configuration = """
            Port \(self.port)
            Listen \(listen)
            Timeout 60
            LogFile "\(directory.appending(path: "log").path)"
            LogLevel Connect
            MaxClients 64
            DisableViaHeader Yes

            """
        if let (user, password) = credentials { configuration += "BasicAuth \(user) \(password)\n" }
        let file = directory.appending(path: "tinyproxy.conf")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        let tinyproxy = "/usr/bin/tinyproxy"
        guard FileManager.default.isExecutableFile(atPath: tinyproxy) else {
            throw TestSupportError("tinyproxy is not installed (Debian's tinyproxy-bin; `make test` installs it)")
        }
        let command = launcher + [tinyproxy, "-d", "-c", file.path]
        process.executableURL = URL(filePath: "/usr/bin/env")
        process.arguments = command
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.start()
        if launcher.isEmpty { try FreePort.waitUntilListening(self.port, timeout: 10) }
    }

    /// What tinyproxy logged so far.
    public var log: String { (try? String(contentsOf: directory.appending(path: "log"), encoding: .utf8)) ?? "" }

    /// The `CONNECT host:port` requests it took, in order.
    public var tunnels: [String] {
        log.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "Request (file descriptor ") else { return nil }
            let request = line[range.upperBound...].drop { $0 != ":" }.dropFirst().trimmingCharacters(in: .whitespaces)
            guard request.hasPrefix("CONNECT ") else { return nil }
            return String(request.dropFirst("CONNECT ".count).prefix { $0 != " " })
        }
    }

    /// Ends it and waits. tinyproxy finishes its open tunnels before it ends on SIGTERM, and a
    /// client's idle keep-alive connection is one: after a second it is killed.
    public func stop() {
        process.end()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Loopback ports for servers a test starts by a port number (tinyproxy, socat).
public enum FreePort {
    /// A port nothing listens on now: the kernel's pick for a socket bound to port 0, closed
    /// again. Another program could take it before the test's server does; on a test machine
    /// that does not happen in practice, and the server then fails to start loudly.
    public static func pick() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw TestSupportError("socket(): \(String(cString: strerror(errno)))") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(socket, generic, length) == 0 && getsockname(socket, generic, &length) == 0
            }
        }
        guard bound else { throw TestSupportError("bind(): \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Waits until something accepts connections on 127.0.0.1:`port`.
    public static func waitUntilListening(_ port: Int, timeout: TimeInterval) throws {
        guard Eventually.holdsBlocking(within: .seconds(timeout), every: .milliseconds(50), { accepts(port) }) else {
            throw TestSupportError("nothing listens on 127.0.0.1:\(port) after \(Int(timeout)) s")
        }
    }

    /// Whether 127.0.0.1:`port` accepts a connection now.
    public static func accepts(_ port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
