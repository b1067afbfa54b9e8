import FoundationEssentials
import SesameSystem

/// A recorded flow read back, to be shown again with no network: the JSON lines `--trace-events`
/// and the inspector's "Save the Flow…" write (`{"t": seconds, "event": name, "key": value, …}`,
/// their values already redacted). Read as hostile input: bounded, and a line that is not an event
/// is an error naming the line.
public enum FlowReplay {
    /// Why a file cannot be replayed, in a sentence that says what to fix.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// The largest file read (a long session's flow is a few hundred KiB).
    public static let largestFile = 16 << 20
    /// The longest line read.
    static let longestLine = 64 << 10

    /// The events of the file at `path`: the name the user gave, so a symbolic link is followed,
    /// to a regular file only (never a FIFO or a device) of at most ``largestFile`` bytes. The
    /// refusal says which: too large, not a regular file, or the system's reason it cannot be read.
    public static func events(fromFile path: String) throws(Failure) -> [FlowTrace.Event] {
        let bytes: [UInt8]
        do { bytes = try Posix.readRegularFile(path, limit: largestFile, followingLinks: true) } catch {
            throw Failure(description: "\(DisplayText.escaped(path)) cannot be read: \(error.message).")
        }
        guard bytes.count <= largestFile else {
            throw Failure(description: "\(DisplayText.escaped(path)) is larger than \(largestFile >> 20) MiB: give a flow saved by Sesame.")
        }
        return try events(from: String(decoding: bytes, as: UTF8.self), file: path)
    }

    /// The events of `text`, one JSON line each (blank lines skipped); `file` names it in errors.
    /// A flow saved again on Windows reads the same: its lines end in CR LF, and a byte order mark
    /// may come first.
    public static func events(from text: String, file: String) throws(Failure) -> [FlowTrace.Event] {
        var scalars = Substring(text).unicodeScalars
        if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
        var events: [FlowTrace.Event] = []
        // Split at LF as a scalar: as a Character, CR LF is one grapheme that is not "\n", and the
        // whole file would be one line. The CR left at a line's end is trimmed as whitespace.
        for (number, line) in scalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(String.UnicodeScalarView(line)).trimmingWhitespace()
            if line.isEmpty { continue }
            guard line.utf8.count <= longestLine, let event = event(ofLine: Substring(line)) else {
                throw Failure(
                    description:
                        "\(DisplayText.escaped(file)), line \(number + 1): not a flow event (a JSON object with \"t\" seconds, \"event\", then text fields)."
                )
            }
            events.append(event)
        }
        guard !events.isEmpty else {
            throw Failure(description: "\(DisplayText.escaped(file)) holds no flow events: give a flow saved by Sesame.")
        }
        return events
    }

    /// One line: `t` and `event` first, then the fields in their order (strings, or whole numbers).
    static func event(ofLine line: Substring) -> FlowTrace.Event? {
        var reader = Reader(line.unicodeScalars)
        guard reader.take("{") else { return nil }
        var members: [(String, String)] = []
        while true {
            guard let key = reader.string(), reader.take(":"), let value = reader.string() ?? reader.number() else { return nil }
            members.append((key, value))
            if reader.take(",") { continue }
            guard reader.take("}"), reader.atEnd else { return nil }
            break
        }
        guard members.count >= 2, members[0].0 == "t", let time = Double(members[0].1), time.isFinite, members[1].0 == "event",
            !members[1].1.isEmpty
        else { return nil }
        return FlowTrace.Event(time: time, name: members[1].1, fields: Array(members.dropFirst(2)))
    }

    /// A cursor over a line's characters: JSON strings (with their escapes) and numbers.
    private struct Reader {
        private let scalars: [Unicode.Scalar]
        private var index = 0
        init(_ view: Substring.UnicodeScalarView) { scalars = Array(view) }

        var atEnd: Bool { index == scalars.count }

        mutating func take(_ expected: Unicode.Scalar) -> Bool {
            while index < scalars.count, scalars[index] == " " { index += 1 }
            guard index < scalars.count, scalars[index] == expected else { return false }
            index += 1
            return true
        }

        mutating func string() -> String? {
            let start = index
            guard take("\"") else {
                index = start
                return nil
            }
            var text = String.UnicodeScalarView()
            while index < scalars.count {
                let scalar = scalars[index]
                index += 1
                switch scalar {
                case "\"": return String(text)
                case "\\":
                    guard index < scalars.count else { return nil }
                    let escaped = scalars[index]
                    index += 1
                    switch escaped {
                    case "\"", "\\", "/": text.append(escaped)
                    case "n": text.append("\n")
                    case "r": text.append("\r")
                    case "t": text.append("\t")
                    case "u":
                        guard index + 4 <= scalars.count,
                            let value = UInt32(String(String.UnicodeScalarView(scalars[index..<index + 4])), radix: 16),
                            let decoded = Unicode.Scalar(value)
                        else { return nil }
                        index += 4
                        text.append(decoded)
                    default: return nil
                    }
                default: text.append(scalar)
                }
            }
            return nil
        }

        mutating func number() -> String? {
            while index < scalars.count, scalars[index] == " " { index += 1 }
            let start = index
            while index < scalars.count, "-+.0123456789eE".unicodeScalars.contains(scalars[index]) { index += 1 }
            guard index > start, index - start <= 32 else { return nil }
            return String(String.UnicodeScalarView(scalars[start..<index]))
        }
    }
}
