import FoundationEssentials

/// What a tenant's administrator refuses, as Entra's settings say it: Conditional Access rules
/// (by app, user and client platform: block, a compliant or managed device, MFA, MFA
/// registration, an authentication strength), the authentication methods policy and users'
/// registered methods, whether users may consent (and whether they may ask an administrator), accounts
/// that are locked, disabled or whose password expired, people of other organizations, and
/// whether public client flows (the device code) are allowed. Read from `--policy FILE` and
/// `POST /.emulator/policy` (JSON: docs/EMULATOR.md).
public struct TenantPolicy: Sendable, Equatable, Decodable {
    /// What a Conditional Access rule demands (its "grant" control): a name
    /// (`"require": "mfa"`) or an authentication strength
    /// (`"require": {"authenticationStrength": "phishingResistantMfa"}`).
    public enum Requirement: Sendable, Equatable, Decodable {
        /// Block access: AADSTS53003.
        case block
        /// Require the device to be marked compliant: AADSTS53000.
        case compliantDevice
        /// Require a managed (Entra-joined or hybrid-joined) device: AADSTS530003.
        case managedDevice
        /// Require a registered device (a device filter admitting `trustType` `Workplace` or
        /// `AzureAd`): a sign-in that presents no device identity gets AADSTS50097.
        case registeredDevice
        /// Require multi-factor authentication: AADSTS50076.
        case mfa
        /// Require the user to register for MFA first: AADSTS50079.
        case mfaRegistration
        /// Require an authentication strength (`grantControls.authenticationStrength`).
        case authenticationStrength(AuthenticationStrength)

        static let names: [String: Requirement] = [
            "block": .block, "compliantDevice": .compliantDevice, "managedDevice": .managedDevice,
            "registeredDevice": .registeredDevice, "mfa": .mfa, "mfaRegistration": .mfaRegistration,
        ]

        enum CodingKeys: String, CodingKey { case authenticationStrength }

        public init(from decoder: any Decoder) throws {
            if let container = try? decoder.container(keyedBy: CodingKeys.self) {
                let name = try container.decode(String.self, forKey: .authenticationStrength)
                guard let strength = AuthenticationStrength(rawValue: name) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .authenticationStrength, in: container,
                        debugDescription: "'\(name)' is not mfa, passwordlessMfa or phishingResistantMfa")
                }
                self = .authenticationStrength(strength)
                return
            }
            let container = try decoder.singleValueContainer()
            let name = try container.decode(String.self)
            guard let requirement = Self.names[name] else {
                throw DecodingError.dataCorruptedError(
                    in: container,
                    debugDescription: "'\(name)' is not one of \(Self.names.keys.sorted().joined(separator: ", ")) or "
                        + "{\"authenticationStrength\": …}")
            }
            self = requirement
        }
    }

    /// One Conditional Access rule: whom and what it applies to, and what it demands.
    public struct ConditionalAccessRule: Sendable, Equatable, Decodable {
        /// The policy's name, as the sign-in logs show it.
        public var name: String
        /// Client ids it applies to; `*` for all.
        public var apps: [String]
        /// User principal names it applies to; `*` for all.
        public var users: [String]
        /// Client platforms (`linux`, `windows`, `macOS`, `android`, `iOS`); `*` for all.
        public var platforms: [String]
        /// What it demands.
        public var require: Requirement

        enum CodingKeys: String, CodingKey { case name, apps, users, platforms, require }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decodeIfPresent(String.self, forKey: .name) ?? "Conditional Access policy"
            apps = try container.decodeIfPresent([String].self, forKey: .apps) ?? ["*"]
            users = try container.decodeIfPresent([String].self, forKey: .users) ?? ["*"]
            platforms = try container.decodeIfPresent([String].self, forKey: .platforms) ?? ["*"]
            require = try container.decode(Requirement.self, forKey: .require)
        }

        /// Whether the rule applies to this sign-in.
        func applies(clientID: String, user: String, platform: String) -> Bool {
            func matches(_ list: [String], _ value: String) -> Bool { list.contains { $0 == "*" || $0.equalsIgnoringCase(value) } }
            return matches(apps, clientID) && matches(users, user) && matches(platforms, platform)
        }
    }

    /// Who may consent to an app (Entra's "User consent settings" and "Admin consent requests").
    public enum Consent: String, Sendable, Equatable, Decodable {
        /// Users consent themselves.
        case allowed
        /// "Do not allow user consent": "Need admin approval", AADSTS90094.
        case adminOnly
        /// The same, with the admin consent workflow on: "Approval required" with "Request
        /// approval", AADSTS90095.
        case adminOnlyWithRequests
    }

    /// An account's state.
    public struct AccountState: Sendable, Equatable, Decodable {
        public enum Kind: String, Sendable, Equatable, Decodable {
            /// Smart lockout after too many wrong passwords: AADSTS50053, until `lockedForSeconds` pass.
            case locked
            /// Sign-in blocked by an administrator: AADSTS50057.
            case disabled
            /// The password expired: AADSTS50055, "Update your password".
            case passwordExpired
        }
        public var state: Kind
        /// How long a lockout lasts (Entra's default smart lockout: 60 s, growing).
        public var lockedForSeconds: Int?
    }

    /// Conditional Access rules, applied in order; the first that demands something decides.
    public var conditionalAccess: [ConditionalAccessRule] = []
    /// Who may consent; nil: the emulator's `--user-consent`.
    public var userConsent: Consent?
    /// Account states, by user principal name.
    public var accounts: [String: AccountState] = [:]
    /// Domains of other organizations (their users are not members here): AADSTS50020.
    public var otherTenantDomains: [String] = []
    /// Whether public client flows (the device code flow) are allowed: AADSTS7000218 when not.
    public var publicClientFlows: Bool = true
    /// Who may grant admin consent (`/adminconsent`); Contoso's Megan Bowen unless the policy says.
    public var administrators: [String] = ["megan@contoso.onmicrosoft.com"]
    /// Entra's device setting "Users may register their devices with Microsoft Entra".
    public var usersMayRegisterDevices: Bool = true
    /// Entra's "Maximum number of devices per user" (50 by default).
    public var maximumDevicesPerUser: Int = 50
    /// The authentication methods policy.
    public var authenticationMethods = AuthenticationMethodsPolicy()
    /// Users' methods registered from the start, by user principal name.
    public var registeredMethods: [String: RegisteredMethods] = [:]

    enum CodingKeys: String, CodingKey {
        case conditionalAccess, userConsent, accounts, otherTenantDomains, publicClientFlows, administrators
        case usersMayRegisterDevices, maximumDevicesPerUser, authenticationMethods, registeredMethods
    }

    public init() {}

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        conditionalAccess = try container.decodeIfPresent([ConditionalAccessRule].self, forKey: .conditionalAccess) ?? []
        userConsent = try container.decodeIfPresent(Consent.self, forKey: .userConsent)
        let accounts = try container.decodeIfPresent([String: AccountState].self, forKey: .accounts) ?? [:]
        self.accounts = Dictionary(accounts.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        otherTenantDomains = (try container.decodeIfPresent([String].self, forKey: .otherTenantDomains) ?? []).map { $0.lowercased() }
        publicClientFlows = try container.decodeIfPresent(Bool.self, forKey: .publicClientFlows) ?? true
        administrators = try container.decodeIfPresent([String].self, forKey: .administrators) ?? administrators
        usersMayRegisterDevices = try container.decodeIfPresent(Bool.self, forKey: .usersMayRegisterDevices) ?? true
        maximumDevicesPerUser = try container.decodeIfPresent(Int.self, forKey: .maximumDevicesPerUser) ?? 50
        authenticationMethods = try container.decodeIfPresent(AuthenticationMethodsPolicy.self, forKey: .authenticationMethods) ?? .init()
        let registered = try container.decodeIfPresent([String: RegisteredMethods].self, forKey: .registeredMethods) ?? [:]
        registeredMethods = Dictionary(registered.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    /// Whether `user` may grant consent for the organization.
    func isAdministrator(_ user: String) -> Bool { administrators.contains { $0.equalsIgnoringCase(user) } }

    /// The first rule that applies to this sign-in.
    func conditionalAccessRule(clientID: String, user: String, platform: String) -> ConditionalAccessRule? {
        conditionalAccess.first { $0.applies(clientID: clientID, user: user, platform: platform) }
    }

    /// The state of `user`'s account, if the policy names one.
    func accountState(of user: String) -> AccountState? { accounts[user.lowercased()] }

    /// Whether `userName` belongs to another organization.
    func isFromOtherTenant(_ userName: String) -> Bool {
        guard let at = userName.lastIndex(of: "@") else { return false }
        return otherTenantDomains.contains(String(userName[userName.index(after: at)...]).lowercased())
    }
}

/// Every tenant's policy: `{"tenants": {"contoso.onmicrosoft.com": {…}}}`, keyed by domain or id.
public struct TenantPolicies: Sendable, Equatable, Decodable {
    public var tenants: [String: TenantPolicy] = [:]

    public init() {}

    /// The policy of `tenant` (empty when none is set).
    public func policy(for tenant: Tenant) -> TenantPolicy {
        tenants.first { $0.key.equalsIgnoringCase(tenant.domain) || $0.key.equalsIgnoringCase(tenant.id) }?.value ?? TenantPolicy()
    }

    /// A policy file's content, or why it cannot be used (what to fix, where).
    public static func parse(_ data: Data) throws(PolicyError) -> TenantPolicies {
        guard data.count <= 1 << 20 else { throw PolicyError("the policy is over 1 MiB") }
        do {
            let policies = try JSONDecoder().decode(TenantPolicies.self, from: data)
            let known = [Tenant.contoso, Tenant.fabrikamB2C].flatMap { [$0.domain.lowercased(), $0.id] }
            if let unknown = policies.tenants.keys.first(where: { !known.contains($0.lowercased()) }) {
                throw PolicyError("no tenant '\(unknown)' is hosted here (contoso.onmicrosoft.com or fabrikamb2c.onmicrosoft.com)")
            }
            return policies
        } catch let error as PolicyError {
            throw error
        } catch let DecodingError.dataCorrupted(context) {
            throw PolicyError("not JSON, or a wrong value at \(Self.path(context.codingPath)): \(context.debugDescription)")
        } catch let DecodingError.keyNotFound(key, context) {
            throw PolicyError("\(Self.path(context.codingPath + [key])) is missing")
        } catch let DecodingError.typeMismatch(_, context) {
            throw PolicyError("\(Self.path(context.codingPath)) has the wrong type: \(context.debugDescription)")
        } catch let DecodingError.valueNotFound(_, context) {
            throw PolicyError("\(Self.path(context.codingPath)) is null")
        } catch {
            throw PolicyError("\(error)")
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.isEmpty
            ? "the top" : keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().trimmingPrefix(".").description
    }
}

/// Why a policy cannot be used.
public struct PolicyError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// The client platform a request comes from, as Conditional Access reads it from the browser's
/// `User-Agent` (or MSAL's `x-client-OS`).
enum ClientPlatform {
    static func of(userAgent: String?, clientOS: String? = nil) -> String {
        let text = ((clientOS ?? "") + " " + (userAgent ?? "")).lowercased()
        if text.contains("android") { return "android" }
        if text.contains("iphone") || text.contains("ipad") || text.contains("ios") { return "iOS" }
        if text.contains("windows") { return "windows" }
        if text.contains("mac os") || text.contains("macintosh") || text.contains("darwin") { return "macOS" }
        if text.contains("linux") || text.contains("x11") { return "linux" }
        return "unknown"
    }
}
