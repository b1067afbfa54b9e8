import FoundationEssentials

extension URL {
    /// Whether the URL's host is this computer: `localhost`, an IPv4 loopback address
    /// (127.0.0.0/8) or IPv6's `::1`. The one place Sesame decides it — where plain `http` is
    /// allowed (the local emulator, a loopback redirect), and nowhere else.
    public var isLoopback: Bool {
        guard let host = host?.lowercased().trimming({ "[]".contains($0) }), !host.isEmpty else { return false }
        if host == "localhost" || host == "::1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}
