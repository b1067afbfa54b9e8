import Foundation

/// Clients that open connections to a server as fast as they can — each sends a request's first
/// line and headers and then waits, or closes at once (abandoned) — until stopped: the load a
/// server meets when it is told to stop while a browser is opening connections to it.
public final class ConnectionBurst: @unchecked Sendable {
    private let port: Int
    private let request: [UInt8]
    private let lock = NSLock()
    private var stopped = false
    private var opened = 0
    private let done = DispatchGroup()

    /// Starts `clients` threads opening connections to 127.0.0.1:`port` with `request` (raw HTTP).
    public init(port: Int, clients: Int = 4, request: String) {
        self.port = port
        self.request = Array(request.utf8)
        for _ in 0..<clients {
            Thread.detachNewThread { [self] in
                done.enter()
                defer { done.leave() }
                open()
            }
        }
    }

    /// How many connections were opened so far.
    public var count: Int { lock.withLock { opened } }

    /// Stops opening connections, closes those open, and waits for the threads.
    public func stop() {
        lock.withLock { stopped = true }
        done.wait()
    }

    private func open() {
        var held: [Int32] = []
        defer {
            for socket in held { _ = close(socket) }
        }
        while !lock.withLock({ stopped }) {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard socket >= 0 else { continue }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            guard connected else {
                _ = close(socket)
                usleep(1000)  // the listener's backlog is full: the burst's own pace, not a wait for an event
                continue
            }
            _ = request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            lock.withLock { opened += 1 }
            // Every other one abandoned at once; the rest held (at most 64 per thread).
            if held.count.isMultiple(of: 2) { _ = close(socket) } else { held.append(socket) }
            if held.count > 64 { _ = close(held.removeFirst()) }
        }
    }
}

/// One TCP connection to 127.0.0.1 that sent a request and reads what comes back.
public final class RawConnection: @unchecked Sendable {
    private let socket: Int32

    /// Connects to 127.0.0.1:`port` and sends `request` (raw HTTP).
    public init(port: Int, sending request: String) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw TestSupportError("socket(): \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            _ = close(socket)
            throw TestSupportError("connect to 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
        }
        let bytes = Array(request.utf8)
        _ = bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Whether an answer has begun to arrive (without taking it).
    public func receivedAny() -> Bool {
        var byte: UInt8 = 0
        return recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) > 0
    }

    /// Everything the server sends until it closes the connection.
    public func readToEnd() -> String {
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            answer += buffer.prefix(count)
        }
        return String(decoding: answer, as: UTF8.self)
    }

    deinit { _ = close(socket) }
}
