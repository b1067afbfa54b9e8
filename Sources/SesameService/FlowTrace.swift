import FoundationEssentials
import SesameCore
import SesameSystem

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

        /// An event `time` seconds after the trace began (a recorded one, read back).
        public init(time: Double, name: String, fields: [(String, String)] = []) {
            self.time = time
            self.name = name
            self.fields = fields
        }

        /// The JSON line (`t` first, then `event`, then the fields in order).
        /// Written by hand, not by Foundation: the trace is written on the main thread while the
        /// window starts, and Foundation's JSON and number formatting look up types at run time.
        public var jsonLine: String {
            var members = [#""t":\#(Self.seconds(time))"#, #""event":\#(Self.quote(name))"#]
            for (key, value) in fields {
                members.append("\(Self.quote(key)):\(Int(value).map(String.init) ?? Self.quote(value))")
            }
            return "{" + members.joined(separator: ",") + "}"
        }

        /// Seconds with three decimals (`1.250`).
        static func seconds(_ time: Double) -> String {
            let milliseconds = Int((abs(time) * 1000).rounded())
            let fraction = String(milliseconds % 1000)
            return (time < 0 && milliseconds > 0 ? "-" : "") + "\(milliseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count)
                + fraction
        }

        /// A JSON string: quotes, backslashes and control characters escaped.
        static func quote(_ text: String) -> String {
            var quoted = "\""
            quoted.reserveCapacity(text.utf8.count + 2)
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": quoted += "\\\""
                case "\\": quoted += "\\\\"
                case "\n": quoted += "\\n"
                case "\r": quoted += "\\r"
                case "\t": quoted += "\\t"
                case _ where scalar.value < 0x20:
                    let hex = String(scalar.value, radix: 16)
                    quoted += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: quoted.unicodeScalars.append(scalar)
                }
            }
            return quoted + "\""
        }
    }

    private let start = ContinuousClock.now
    private let file: Int32?
    public private(set) var events: [Event] = []
    private var observers: [(Event) -> Void] = []
    /// The presenter's hold on the flow (``StepThrough``): each step asks it before it happens
    /// (``beforeStep(_:_:)``).
    public nonisolated let stepThrough: StepThrough

    /// Records to `file` when given: created (mode 0600), or an earlier trace of this user's
    /// emptied; a symbolic link, another user's file or one with other names (hard links) in its
    /// place is refused rather than written to — Sesame may run as root.
    public init(file: URL?, stepThrough: StepThrough = StepThrough()) throws {
        self.stepThrough = stepThrough
        if let file {
            // Only its owner reads it: URLs are redacted, but which accounts signed in, and when, are theirs.
            let descriptor = try Posix.openOwnFileForWriting(file.path)
            self.file = descriptor
        } else {
            self.file = nil
        }
    }

    /// A flow recorded earlier, read back (``FlowReplay``): its events as they were, written nowhere.
    public init(replaying recorded: [Event]) {
        file = nil
        events = recorded
        stepThrough = StepThrough()
    }

    isolated deinit {
        if let file { Posix.close(file) }
    }

    public func observe(_ observer: @escaping (Event) -> Void) { observers.append(observer) }

    /// Records `name` with `fields`, as of `instant` (now when nil: an event recorded later than
    /// it happened — from another thread — keeps its own time).
    public func record(_ name: String, _ fields: [(String, String)] = [], at instant: ContinuousClock.Instant? = nil) {
        let elapsed = start.duration(to: instant ?? .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let event = Event(time: seconds, name: name, fields: fields)
        events.append(event)
        if let file { try? Posix.writeAll(file, (event.jsonLine + "\n").utf8) }
        for observer in observers { observer(event) }
    }

    /// In step-through, waits until the presenter lets the step `name` (with its redacted
    /// `fields`, as its own event will have them) happen, recording `step-waiting` (with the
    /// step's `number`, for ``StepThrough/next(_:)``) and `step-released`; at once, recording
    /// nothing, otherwise. Called from any thread.
    @discardableResult
    public nonisolated func beforeStep(_ name: String, _ fields: [(String, String)]) async -> StepThrough.Release? {
        var waited: Int?
        let release = await stepThrough.wait { number in
            waited = number
            let asked = ContinuousClock.now
            Task { @MainActor in self.record("step-waiting", [("step", name), ("number", String(number))] + fields, at: asked) }
        }
        guard let release, let waited else { return nil }
        let released = ContinuousClock.now
        let fields = [("step", name), ("number", String(waited)), ("by", release.rawValue)]
        await MainActor.run { self.record("step-released", fields, at: released) }
        return release
    }

    /// A URL as traces show it: query values replaced by `<redacted>`.
    public static func redacted(_ url: URL) -> String { url.redactingQuery }
}

extension FlowTrace {
    /// Records the store's failures, recoveries and device sign-ins as the flow's events, for as
    /// long as the returned task runs (cancel it to stop).
    public func follow(_ store: AccountStore) async -> Task<Void, Never> {
        let events = await store.events()
        return Task { [weak self] in
            for await event in events {
                guard let self else { return }
                self.record(event)
            }
        }
    }

    private func record(_ event: AccountStoreEvent) {
        switch event {
        case .didFailToRequestAccess(_, let error) where error.code == .cancelled:
            record("sign-in-cancelled")
        case .didFailToRequestAccess(_, let error) where error.code == .handedOffToBrowser:
            break  // The sample's session records where the sign-in went.
        case .didFailToRequestAccess(let accountType, let error):
            record("sign-in-failed", [("accountType", accountType), ("error", error.serviceCode ?? error.code.description)])
        case .cacheRecovered(let group, _):
            record("cache-recovered", [("group", group)])
        case .signedInWithDevice(let accountType, let deviceID):
            record("device-sign-in", [("accountType", accountType), ("deviceId", deviceID)])
        case .deviceLost(let error):
            record("device-lost", [("error", error.serviceCode ?? error.code.rawValue)])
        case .idTokenChecked(let accountType, let checks):
            // Each check's name, and ✓, ✗ or – (not reached); the signature's with the key's id.
            record(
                "id-token-checked",
                [("accountType", accountType)]
                    + checks.map { check in
                        let mark = check.passed.map { $0 ? "✓" : "✗" } ?? "–"
                        return (check.name.rawValue, check.keyID.map { "\(mark) \($0)" } ?? mark)
                    })
        case .accountsDidChange:
            break
        }
    }
}
