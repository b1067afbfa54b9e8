import FoundationEssentials

/// What one user registered in "Security info": a phone for texts, Microsoft Authenticator
/// (activated on a phone), an authenticator app's TOTP secret, and the Temporary Access Passes an
/// administrator gave them. Passkeys are the relying party's (``PasskeyCredentials``).
struct UserMethods: Codable, Sendable, Equatable {
    /// A mobile phone registered for texts (`phoneAuthenticationMethod`, type `mobile`).
    var sms = false
    /// Microsoft Authenticator activated on a phone: its display name (`displayName`).
    var authenticatorDevice: String?
    /// The authenticator app's shared secret, base32 (`softwareOathAuthenticationMethod`): the
    /// state file keeps it, as the service must, to check codes.
    var softwareOathSecret: String?
    /// The time step of the last authenticator app code accepted (a code is used once).
    var softwareOathLastStep: Int64?
    /// Temporary Access Passes, newest last.
    var temporaryAccessPasses: [TemporaryAccessPass] = []
    /// When the registration campaign ("Keep your account secure") may ask again after a skip.
    var campaignSnoozedUntil: Date?

    init() {}

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        sms = try container.decodeIfPresent(Bool.self, forKey: .sms) ?? false
        authenticatorDevice = try container.decodeIfPresent(String.self, forKey: .authenticatorDevice)
        softwareOathSecret = try container.decodeIfPresent(String.self, forKey: .softwareOathSecret)
        softwareOathLastStep = try container.decodeIfPresent(Int64.self, forKey: .softwareOathLastStep)
        temporaryAccessPasses = try container.decodeIfPresent([TemporaryAccessPass].self, forKey: .temporaryAccessPasses) ?? []
        campaignSnoozedUntil = try container.decodeIfPresent(Date.self, forKey: .campaignSnoozedUntil)
    }

    /// The methods usable now, strongest first (a pass counts while it is usable).
    func methods(now: Date, hasPasskey: Bool) -> [AuthenticationMethod] {
        var methods: [AuthenticationMethod] = []
        if hasPasskey { methods.append(.fido2) }
        if authenticatorDevice != nil { methods.append(.microsoftAuthenticator) }
        if softwareOathSecret != nil { methods.append(.softwareOath) }
        if sms { methods.append(.sms) }
        if usablePass(now: now) != nil { methods.append(.temporaryAccessPass) }
        return methods
    }

    /// The newest pass still usable at `now`.
    func usablePass(now: Date) -> TemporaryAccessPass? { temporaryAccessPasses.last { $0.isUsable(at: now) } }
}

/// A Temporary Access Pass (`temporaryAccessPassAuthenticationMethod`): kept as a digest; usable
/// from `startDateTime` for `lifetimeInMinutes`, once when `isUsableOnce`.
struct TemporaryAccessPass: Codable, Sendable, Equatable {
    /// The SHA-256 of the pass: the state file never holds a usable pass.
    var digest: String
    /// `startDateTime`.
    var startDateTime: Date
    /// `lifetimeInMinutes` (Entra: 10 to 43200).
    var lifetimeInMinutes: Int
    /// `isUsableOnce`.
    var isUsableOnce: Bool
    /// Set when a one-time pass was used.
    var used = false

    /// `lifetimeInMinutes`' bounds.
    static let lifetimeRange = 10...43_200

    func isUsable(at now: Date) -> Bool {
        !(isUsableOnce && used) && now >= startDateTime && now < startDateTime.addingTimeInterval(Double(lifetimeInMinutes) * 60)
    }
}

/// Every user's registered methods, by user id: what sign-in offers after the password and what
/// "Security info" lists. Kept in the state file under `authenticationMethods`. Users the
/// directory gives a mobile number (or `requiresMFA`, megan) start with that phone for texts.
struct MethodRegistrations: Codable, Sendable {
    private var users: [String: UserMethods] = [:]

    enum CodingKeys: String, CodingKey { case users = "authenticationMethods" }

    init() {}

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        users = try container.decodeIfPresent([String: UserMethods].self, forKey: .users) ?? [:]
    }

    /// `user`'s registrations (the directory's default when none were made).
    func methods(of user: DirectoryUser) -> UserMethods {
        if let registered = users[user.id] { return registered }
        var defaults = UserMethods()
        defaults.sms = user.requiresMFA || user.mobilePhone != nil
        return defaults
    }

    mutating func update(_ user: DirectoryUser, _ change: (inout UserMethods) -> Void) {
        var methods = methods(of: user)
        change(&methods)
        users[user.id] = methods
    }

    /// Uses `pass` for `user` when it matches a usable pass; a one-time pass is used up.
    mutating func redeemPass(_ pass: String, user: DirectoryUser, now: Date) -> Bool {
        var methods = methods(of: user)
        let digest = Identifiers.digest(pass)
        guard let index = methods.temporaryAccessPasses.lastIndex(where: { $0.digest == digest && $0.isUsable(at: now) }) else {
            return false
        }
        if methods.temporaryAccessPasses[index].isUsableOnce { methods.temporaryAccessPasses[index].used = true }
        users[user.id] = methods
        return true
    }
}
