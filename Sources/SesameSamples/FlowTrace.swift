import Foundation
import SesameCore

/// The tutorial flow as events: every navigation with its classification and the action taken,
/// page loads, the token exchange, API calls and what the user sees. Written as JSON lines to
/// `--trace-events FILE` (`{"t": seconds since start (monotonic), "event": name, …}`) and shown
/// live in the flow inspector. URLs are recorded with their query values redacted.
@MainActor
public final class FlowTrace {
    public struct Event: Sendable {
        public let time: Double
        public let name: String
        public let fields: [(String, String)]

        /// The JSON line (`t` first, then `event`, then the fields in order).
        public var jsonLine: String {
            var members = [#""t":\#(String(format: "%.3f", time))"#, #""event":\#(Self.quote(name))"#]
            for (key, value) in fields {
                members.append("\(Self.quote(key)):\(Int(value).map(String.init) ?? Self.quote(value))")
            }
            return "{" + members.joined(separator: ",") + "}"
        }

        static func quote(_ text: String) -> String {
            let data = try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])
            let array = data.map { String(decoding: $0, as: UTF8.self) } ?? "[\"\"]"
            return String(array.dropFirst().dropLast())
        }
    }

    private let start = ContinuousClock.now
    private let file: FileHandle?
    public private(set) var events: [Event] = []
    private var observers: [(Event) -> Void] = []

    /// Records to `file` when given (created or truncated).
    public init(file: URL?) throws {
        if let file {
            // Only its owner reads it: URLs are redacted, but which accounts signed in, and when, are theirs.
            guard FileManager.default.createFile(atPath: file.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: file.path])
            }
            chmod(file.path, 0o600)
            self.file = try FileHandle(forWritingTo: file)
        } else {
            self.file = nil
        }
    }

    public func observe(_ observer: @escaping (Event) -> Void) { observers.append(observer) }

    /// Records `name` with `fields`, as of `instant` (now when nil: an event recorded later than
    /// it happened — from another thread — keeps its own time).
    public func record(_ name: String, _ fields: [(String, String)] = [], at instant: ContinuousClock.Instant? = nil) {
        let elapsed = start.duration(to: instant ?? .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let event = Event(time: seconds, name: name, fields: fields)
        events.append(event)
        file?.write(Data((event.jsonLine + "\n").utf8))
        for observer in observers { observer(event) }
    }

    /// A URL as traces show it: query values replaced by `<redacted>`.
    public static func redacted(_ url: URL) -> String { url.redactingQuery }
}
