import FoundationEssentials

/// What this computer says of itself, as a registration names it to the organization. Read from
/// the kernel and `/etc/os-release`, bounded: a value too long or empty gives the fallback.
public enum ThisComputer {
    /// The host name (`/proc/sys/kernel/hostname`): how the organization lists the computer.
    public static func hostName() -> String {
        let name = read("/proc/sys/kernel/hostname")?.trimmingWhitespace() ?? ""
        return name.isEmpty || name.utf8.count > 64 ? "Linux computer" : name
    }

    /// The distribution and its version (`/etc/os-release`'s `PRETTY_NAME`).
    public static func operatingSystem() -> String {
        guard let text = read("/etc/os-release"),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("PRETTY_NAME=") })
        else { return "Linux" }
        let value = line.dropFirst("PRETTY_NAME=".count).filter { $0 != "\"" }
        return value.isEmpty || value.count > 64 ? "Linux" : String(value)
    }

    private static func read(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path), data.count < 64 * 1024 else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
