import FoundationEssentials

/// One device authorization (RFC 8628): what `/oauth2/v2.0/devicecode` handed a device, and how
/// far the user got at the verification page. The device polls with `device_code`; the person
/// types `user_code` at `/devicelogin`.
struct DeviceAuthorization: Sendable {
    /// Where the user stands.
    enum Status: Sendable, Equatable {
        /// Not signed in yet: the device hears `authorization_pending`.
        case pending
        /// Signed in and consented: the next poll gets the tokens.
        case approved(Grant)
        /// The user chose Cancel (or declined consent): `authorization_declined`.
        case declined
        /// The tokens were handed out once; the code answers nothing more.
        case redeemed
    }

    let clientID: String
    let endpoint: IdentityEndpoint
    /// `scope` as sent on the device authorization request.
    let scope: String
    let scopes: ScopeRequest
    /// `user_code`: what the person types (kept so the page can find the request).
    let userCode: String
    let issuedAt: Date
    let expiresAt: Date
    /// `interval`: the seconds a device should wait between polls.
    var interval: TimeInterval
    var status: Status = .pending
    /// Why the tenant refused the sign-in (admin approval needed), for a declined one: the
    /// device's poll gets this error instead of `authorization_declined`.
    var refusal: ServiceError?
    /// When the device last polled.
    var lastPoll: Date?

    /// Entra's user codes: nine characters of capitals and digits, none easily confused.
    static func newUserCode() -> String {
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<9).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }

    /// A typed code as Entra reads it: case, spaces and dashes do not matter.
    static func normalized(userCode: String) -> String {
        userCode.uppercased().filter { $0.isLetter || $0.isNumber }
    }
}

/// What a poll with a `device_code` finds.
enum DevicePoll: Sendable {
    case unknown
    case pending
    case declined
    /// The tenant refused it: the poll gets the error.
    case refused(ServiceError)
    case expired
    /// The tokens, once: the code is spent.
    case approved(Grant, DeviceAuthorization)
    case alreadyRedeemed
}

/// The device authorizations (RFC 8628) under way, by the digest of their `device_code`, in memory.
struct DeviceAuthorizations: Sendable {
    private var authorizations: [String: DeviceAuthorization] = [:]

    /// Starts a device authorization; returns its `device_code` (kept only as a digest).
    mutating func begin(_ authorization: DeviceAuthorization) -> String {
        authorizations = authorizations.filter { $0.value.expiresAt.addingTimeInterval(3600) > authorization.issuedAt }
        let deviceCode = "DAQABIQEAAABVrSpeuWamRam2jAF1XRQE" + Identifiers.opaque(bytes: 96)
        authorizations[Identifiers.digest(deviceCode)] = authorization
        return deviceCode
    }

    /// The pending device authorization a typed `user_code` names, with its key, or nil when
    /// there is none (unknown, expired, or already used).
    func find(userCode: String, now: Date) -> (key: String, authorization: DeviceAuthorization)? {
        let typed = DeviceAuthorization.normalized(userCode: userCode)
        guard !typed.isEmpty,
            let (key, found) = authorizations.first(where: { $0.value.userCode == typed }),
            found.status == .pending, found.expiresAt > now
        else { return nil }
        return (key, found)
    }

    /// The user finished the pages: the device's next poll gets tokens for `grant`.
    mutating func approve(key: String, grant: Grant) {
        authorizations[key]?.status = .approved(grant)
    }

    /// The user said no, or (`refusal`) the tenant did.
    mutating func decline(key: String, refusal: ServiceError?) {
        authorizations[key]?.status = .declined
        authorizations[key]?.refusal = refusal
    }

    /// A device polls with its `device_code`.
    mutating func poll(deviceCode: String, now: Date) -> DevicePoll {
        let key = Identifiers.digest(deviceCode)
        guard var found = authorizations[key] else { return .unknown }
        defer { authorizations[key] = found }
        if found.status == .redeemed { return .alreadyRedeemed }
        guard found.expiresAt > now else { return .expired }
        switch found.status {
        case .declined: return found.refusal.map(DevicePoll.refused) ?? .declined
        case .approved(let grant):
            found.status = .redeemed
            return .approved(grant, found)
        case .pending, .redeemed:
            // Entra keeps answering `authorization_pending`, however often a device polls.
            found.lastPoll = now
            return .pending
        }
    }
}
