import FoundationEssentials
import SesameService
import SesameSystem

/// The flow as a sequence diagram: the trace's events as arrows between four lanes (the app, the
/// sign-in view, the identity service, the APIs) — five when the sign-in goes to the user's
/// organisation's own identity provider (a federated domain: AD FS, Okta…) — and notes on a
/// lane, in the order they happened. UI-free: the window draws it, the tests read it. Everything
/// in it comes from the trace, whose URLs are already redacted.
public struct FlowDiagram: Sendable {
    /// A participant of the flow, one vertical line.
    public enum Lane: Int, CaseIterable, Sendable {
        case app, signInView, identityService, organization, apis

        /// The lane's heading.
        public var title: String {
            switch self {
            case .app: L("App")
            case .signInView: L("Sign-in view")
            case .identityService: L("Identity service")
            case .organization: L("Organisation")
            case .apis: L("APIs")
            }
        }
    }

    /// The lanes drawn, left to right: the organisation's only once a page of another host than
    /// the identity service's was asked for.
    public private(set) var lanes: [Lane] = Lane.allCases.filter { $0 != .organization }

    /// How a step is drawn.
    public enum Style: Sendable, Equatable {
        /// A request or navigation: a solid arrow.
        case request
        /// An answer: a dashed arrow back.
        case response
        /// Something that happened on one lane: a note.
        case note
    }

    /// One row of the diagram.
    public struct Step: Sendable, Equatable {
        /// Where the arrow starts (the note's lane for a note).
        public let from: Lane
        /// Where the arrow ends (the same lane for a note).
        public let to: Lane
        /// What the row says: a method and a short path, a status and a latency, or a few words.
        public let label: String
        public let style: Style
        /// The redirect the sign-in view intercepted, and what it handed to the app: the heart of
        /// the flow, drawn in the accent colour.
        public let isHighlighted: Bool
        /// A failure: drawn in the error colour.
        public let isFailure: Bool
        /// The trace event the row comes from (its redacted details show on selection).
        public let event: Int
        /// When it happened, in seconds since the window opened (a request: when it was sent).
        public let time: Double
    }

    /// The rows, oldest first: by their time (a request is drawn when it left, which may be
    /// before rows already drawn), in the order they came when times are equal.
    public private(set) var steps: [Step] = []
    /// The events the rows come from, by ``Step/event``.
    public private(set) var events: [FlowTrace.Event] = []
    /// The tutorial each event belongs to (the sample's, as the flow revealed it so far).
    private var tutorials: [TutorialStep.Tutorial?] = []
    private var tutorial: TutorialStep.Tutorial?
    /// The identity service's hosts (`host:port`): those of its authorize and login pages, its
    /// discovery and its token endpoint. A page of any other host is the organisation's.
    private var serviceHosts: Set<String> = []

    public init() {}

    /// The diagram of `events`.
    public init(_ events: [FlowTrace.Event]) {
        for event in events { append(event) }
    }

    /// Adds the rows of one more event (none for the events the diagram leaves to the text log).
    /// - Returns: how many rows were added.
    @discardableResult
    public mutating func append(_ event: FlowTrace.Event) -> Int {
        let index = events.count
        events.append(event)
        tutorial = TutorialStep.tutorial(revealedBy: event) ?? tutorial
        tutorials.append(tutorial)
        let before = steps.count
        learnServiceHost(from: event)
        let added = steps(for: event, index: index)
        if lanes.count < Lane.allCases.count, added.contains(where: { $0.from == .organization || $0.to == .organization }) {
            lanes = Lane.allCases
        }
        for step in added {
            // Usually the newest: the search from the end stops at once. A request's time is its
            // answer's less its latency in whole milliseconds: a row within that millisecond stays
            // above it. Nothing moves above the intercepted redirect: what follows it is what it
            // caused (the token request may leave before the trace has recorded the redirect).
            let byTime = (steps.lastIndex { $0.time <= step.time + Self.timePrecision } ?? -1) + 1
            let afterRedirect = (steps.lastIndex { $0.isHighlighted } ?? -1) + 1
            steps.insert(step, at: max(byTime, afterRedirect))
        }
        return steps.count - before
    }

    /// How precisely a row's time is known: a latency is recorded in whole milliseconds.
    static let timePrecision = 0.001

    /// A row's time as the time column shows it: milliseconds for the first 100 s, then tenths,
    /// then whole seconds, then minutes and seconds — never more than seven characters, so the
    /// column never cuts it ("121.1…").
    public static func timeLabel(_ seconds: Double) -> String {
        let seconds = max(0, seconds.isFinite ? seconds : 0)
        switch seconds {
        case ..<100: return String(formatting: "%.3f", seconds)
        case ..<1000: return String(formatting: "%.1f", seconds)
        case ..<10_000: return String(formatting: "%.0f", seconds)
        default:
            let whole = Int(min(seconds, 5_999_999))
            return String(formatting: "%d:%02d", whole / 60, whole % 60)
        }
    }

    private mutating func learnServiceHost(from event: FlowTrace.Event) {
        func field(_ name: String) -> String? { event.fields.first { $0.0 == name }?.1 }
        let isService =
            switch event.name {
            case "navigation": ["authorize", "login"].contains(field("kind") ?? "")
            case "discovery", "token-request": true
            default: false
            }
        if isService, let host = Self.host(of: field("url")) { serviceHosts.insert(host) }
    }

    /// The lane of a page at `url`: the identity service's, unless it is on another host.
    private func pageLane(_ url: String?) -> Lane {
        guard let host = Self.host(of: url), !serviceHosts.isEmpty, !serviceHosts.contains(host) else { return .identityService }
        return .organization
    }

    private static func host(of url: String?) -> String? {
        guard let components = url.flatMap(URLComponents.init(string:)), let host = components.host?.lowercased() else { return nil }
        return components.port.map { "\(host):\($0)" } ?? host
    }

    /// The text shown for the row at `index` when it is selected: the time, the event and its
    /// redacted fields, one per line.
    public func details(of index: Int) -> String {
        guard steps.indices.contains(index) else { return "" }
        let event = events[steps[index].event]
        var lines = [String(formatting: "%.3f s  %@", event.time, DisplayText.escaped(event.name))]
        if let explanation = FlowStepExplanation.explanation(of: event) {
            lines += [explanation.text, String(formatting: L("Source: %@"), explanation.source)]
        }
        if let step = TutorialStep.line(for: event, in: tutorials[steps[index].event]) { lines.append(step) }
        switch event.name {
        case "token-read": lines += TokenClaimsText.lines(of: event.fields)
        case "id-token-checked": lines += TokenClaimsText.checkLines(of: event.fields)
        // A field may hold outside text (a page's address): hidden characters spelled out.
        default: lines += event.fields.map { "\(DisplayText.escaped($0.0)): \(DisplayText.escaped($0.1))" }
        }
        return lines.joined(separator: "\n")
    }

    /// What a screen reader says for the row at `index`: its label and the step's explanation.
    public func spoken(of index: Int) -> String {
        guard steps.indices.contains(index) else { return "" }
        let explanation = FlowStepExplanation.explanation(of: events[steps[index].event])
        return [steps[index].label, explanation?.text].compactMap { $0 }.joined(separator: ". ")
    }

    func steps(for event: FlowTrace.Event, index: Int) -> [Step] {
        func field(_ name: String) -> String? { event.fields.first { $0.0 == name }?.1 }
        func arrow(
            _ from: Lane, _ to: Lane, _ label: String, _ style: Style = .request, highlighted: Bool = false, failure: Bool = false,
            at time: Double = event.time
        ) -> Step {
            Step(from: from, to: to, label: label, style: style, isHighlighted: highlighted, isFailure: failure, event: index, time: time)
        }
        func note(_ lane: Lane, _ label: String, highlighted: Bool = false, failure: Bool = false) -> Step {
            arrow(lane, lane, label, .note, highlighted: highlighted, failure: failure)
        }
        switch event.name {
        case "navigation":
            let url = field("url") ?? ""
            if field("action") == "intercept" {
                return [arrow(.identityService, .signInView, L("redirect to the app: intercepted"), .response, highlighted: true)]
            }
            return [arrow(.signInView, pageLane(url), (field("method") ?? "GET") + " " + Self.shortPath(url))]
        case "page-loaded":
            return [arrow(pageLane(field("url")), .signInView, L("page shown"), .response)]
        case SignInPageStep.eventName:
            // The page on screen asks for a way of proving who you are (explained on selection).
            return SignInPageStep(fields: event.fields).map { [note(.signInView, $0.label)] } ?? []
        case "redirect-intercepted":
            return [arrow(.signInView, .app, L("authorization code → app"), highlighted: true)]
        case "token-request", "discovery", "api-call":
            let target: Lane = event.name == "api-call" ? .apis : .identityService
            let request = (field("method") ?? "GET") + " " + Self.shortPath(field("url") ?? "")
            let milliseconds = field("ms").map { " · \($0) ms" } ?? ""
            // The event is recorded when the answer came; the request left its latency earlier.
            let sent = event.time - Double(field("ms").flatMap { Int($0) } ?? 0) / 1000
            if let status = field("status") {
                let failed = (Int(status) ?? 0) >= 400
                return [arrow(.app, target, request, at: sent), arrow(target, .app, status + milliseconds, .response, failure: failed)]
            }
            return [arrow(.app, target, request, at: sent), arrow(target, .app, L("no answer") + milliseconds, .response, failure: true)]
        case "step-waiting":
            // Step-through: the next step, waiting for the presenter (explained on selection).
            let what = (field("method") ?? "GET") + " " + Self.shortPath(field("url") ?? "")
            return [note(field("step") == "navigation" ? .signInView : .app, String(formatting: L("waits for Next: %@"), what))]
        case "step-released" where field("by") == "limit":
            return [note(.app, L("went ahead by itself: it waited 8 minutes"))]
        case "token-read":
            // A token of the answer, read for the newcomer (its claims in words on selection).
            return [note(.app, field("token") == "id_token" ? L("ID token read: who signed in") : L("access token read: what it allows"))]
        case "id-token-checked":
            let failed = event.fields.first { $0.1.hasPrefix("✗") }?.0
            return [
                note(
                    .app, failed.map { String(formatting: L("ID token refused: its %@ check failed"), $0) } ?? L("ID token checked ✓"),
                    failure: failed != nil)
            ]
        case "token-acquired":
            return [note(.app, L("signed in: tokens cached"))]
        case "token-silent":
            return [note(.app, L("token without interaction (silent)"))]
        case "list-rendered":
            let rows = field("rows").flatMap { Int($0) } ?? 0
            return [note(.app, String(formatting: rows == 1 ? L("%d row on screen") : L("%d rows on screen"), rows))]
        case "sign-in-failed":
            return [note(.app, String(formatting: L("sign-in failed: %@"), field("error") ?? ""), failure: true)]
        case "sign-in-cancelled":
            return [note(.signInView, L("sign-in cancelled"))]
        case "signed-out":
            return [note(.app, L("signed out"))]
        case "sign-in-data-forgotten":
            return [note(.signInView, L("sign-in data forgotten"))]
        case "cache-recovered":
            return [note(.app, L("unreadable token cache set aside"), failure: true)]
        case "window-shown":
            return [note(.app, L("window shown"))]
        case "broker-call":
            // A program asked Sesame as the desktop's identity broker (its own app's sign-in).
            let program = DisplayText.escaped(field("program") ?? "")
            return [note(.app, String(formatting: L("%@ asks the identity broker: %@"), program, field("method") ?? ""))]
        case "broker-token":
            return [
                note(.app, String(formatting: L("token for %@’s own app"), DisplayText.escaped(field("program") ?? "")), highlighted: true)
            ]
        case "device-sign-in":
            // This computer's Primary Refresh Token signed the account in: no page.
            return [note(.app, L("signed in by this computer’s registration (PRT): no page"), highlighted: true)]
        case "device-lost":
            return [note(.app, L("this computer is no longer registered: pages again"), failure: true)]
        case "device-registration-started":
            return [note(.app, L("registering this computer: the broker’s sign-in for the registration service"))]
        case "device-registered":
            // The device's keys made here, the device enrolled, the PRT requested (the requests are the rows around it).
            return [note(.app, L("this computer is registered: it holds a PRT"), highlighted: true)]
        case "device-registration-failed":
            return [note(.app, String(formatting: L("this computer was not registered: %@"), field("error") ?? ""), failure: true)]
        case "device-credential-sent":
            // `x-ms-RefreshTokenCredential` with the page's request: the service knows the device and its user.
            return [note(.signInView, L("this computer’s single sign-on credential sent with the page: no password"), highlighted: true)]
        case "device-removed":
            return [note(.app, L("this computer’s registration removed, here and in the organization"))]
        case "broker-sso-cookie":
            let program = DisplayText.escaped(field("program") ?? "")
            return [note(.app, String(formatting: L("single sign-on cookie for %@"), program), highlighted: true)]
        case "broker-refused":
            let program = DisplayText.escaped(field("program") ?? "")
            return [note(.app, String(formatting: L("the identity broker refused %@"), program), failure: true)]
        default:
            return []
        }
    }

    /// A URL's path as a row shows it: its last segment (`…/authorize`, `…/token`, `…/users`),
    /// with `?…` when it had a query; the whole URL is in the row's details.
    static func shortPath(_ url: String) -> String {
        let parsed = URLComponents(string: url)
        let segments = (parsed?.path ?? url).split(separator: "/")
        var path = segments.last.map { (segments.count > 1 ? "…/" : "/") + $0 } ?? "/"
        if parsed?.query != nil { path += "?…" }
        return path
    }
}
