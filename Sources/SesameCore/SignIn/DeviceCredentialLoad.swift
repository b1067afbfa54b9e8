import FoundationEssentials

/// The load of a sign-in page that carries this computer's single sign-on credential
/// (`x-ms-RefreshTokenCredential`, a header of its first request), kept on the origin the
/// credential was made for. A browser engine sends a request's own headers again with each
/// redirect that follows it (WebKit does, on 302, 307 and 308 alike), so a service's redirect to
/// another host, another port or another scheme would deliver the credential there — and the
/// credential is a PRT's: whoever holds it gets tokens as the user. A redirect that stays on the
/// origin is followed; one that leaves it is stopped and loaded afresh, without the credential.
/// The view reports each navigation and the load's end; the decision is made here.
public struct DeviceCredentialLoad: Sendable, Equatable {
    /// An origin as the web defines it (RFC 6454): scheme, host and port, the scheme's default
    /// port made explicit, so `https://login.example` and `https://login.example:443` are one.
    public struct Origin: Sendable, Hashable, CustomStringConvertible {
        /// `https` or `http`, lower-case.
        public let scheme: String
        /// The host, lower-case.
        public let host: String
        /// The port, the scheme's default when the address names none.
        public let port: Int

        /// The origin of `url`; nil when it has none a credential could be sent to (no host, or a
        /// scheme other than `http` and `https`).
        public init?(_ url: URL) {
            guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else { return nil }
            let defaultPort: Int
            switch scheme {
            case "https": defaultPort = 443
            case "http": defaultPort = 80
            default: return nil
            }
            self.scheme = scheme
            self.host = host
            self.port = url.port ?? defaultPort
        }

        /// `scheme://host:port`, as a trace names it.
        public var description: String { "\(scheme)://\(host):\(port)" }
    }

    /// What the view does with a navigation it lets through.
    public enum Step: Sendable, Equatable {
        /// Go on: the request stays on the credential's origin, or carries no credential.
        case follow
        /// Stop this request, and load `url` afresh without the credential: the redirect would
        /// have carried it off its origin.
        case loadWithoutCredential(URL)
        /// Stop this request, and load nothing in its place: a redirect to an address that does
        /// not parse cannot be shown to stay on the origin, nor loaded without the credential.
        case stop
    }

    /// Where the credential may go.
    public let origin: Origin
    /// The load in progress still sends the credential: its first request did, and each redirect
    /// of it does again, until its page arrives or the load ends.
    public private(set) var isCarrying = true

    /// The load whose first request, to `firstRequest`, carries the credential; nil when that
    /// address has no origin a credential may be sent to (nothing is sent then).
    public init?(firstRequest: URL) {
        guard let origin = Origin(firstRequest) else { return nil }
        self.origin = origin
    }

    /// The view is about to follow a navigation to `address` (as the engine reports it):
    /// `isRedirect` when it is a redirect of the load in progress, `carriesCredential` when the
    /// engine says the request holds the credential's header. A request that would take the
    /// credential off the origin — a redirect of the carrying load, or any request the engine
    /// says holds it — is loaded again without the credential (one to an address that does not
    /// parse is stopped); anything else goes on (a new navigation — a link, a form, a script — is
    /// a load of its own, which never carries the credential).
    public mutating func navigation(to address: String?, isRedirect: Bool, carriesCredential: Bool = false) -> Step {
        guard (isCarrying && isRedirect) || carriesCredential else { return .follow }
        guard let url = address.flatMap(URL.init(string:)) else {
            isCarrying = false
            return .stop
        }
        guard Origin(url) != origin else { return .follow }
        isCarrying = false
        return .loadWithoutCredential(url)
    }

    /// The load's page arrived (its response was committed) or the load ended without one: no
    /// later request carries the credential.
    public mutating func loadEnded() {
        isCarrying = false
    }
}
