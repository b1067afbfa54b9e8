import FoundationEssentials
import Glibc

/// Files in `--state-dir`: written whole to a temporary file and renamed over the old one, so a
/// crash never leaves half a file; readable by the owner only.
enum StateFile {
    static func writeAtomically(_ data: Data, to url: URL) throws {
        let directory = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = directory.appending(path: ".\(url.lastPathComponent).\(Identifiers.opaque(bytes: 6)).tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw EmulatorConfigurationError("Cannot write \(temporary.path): check that \(directory.path) is writable.")
        }
        if rename(temporary.path, url.path) != 0 {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw EmulatorConfigurationError("Cannot replace \(url.path): \(reason).")
        }
    }

    /// Reads a JSON state file; a missing file is nil, an unreadable one is moved aside (kept, not
    /// deleted) and reported.
    static func read<Value: Decodable>(_ type: Value.Type, from url: URL) -> (value: Value?, warning: String?) {
        guard let data = FileManager.default.contents(atPath: url.path) else { return (nil, nil) }
        do {
            return (try JSONDecoder.state.decode(Value.self, from: data), nil)
        } catch {
            let aside = url.appendingPathExtension("unreadable-\(Int(Date().timeIntervalSince1970))")
            try? FileManager.default.moveItem(at: url, to: aside)
            return (nil, "\(url.path) could not be read (\(error)); it was moved to \(aside.path) and the emulator starts without it.")
        }
    }
}

extension JSONEncoder {
    static var state: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return encoder
    }
}

extension JSONDecoder {
    static var state: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }
}
