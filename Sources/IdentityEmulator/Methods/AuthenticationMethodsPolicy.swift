import FoundationEssentials

/// A tenant's authentication methods policy, as an administrator sets it in "Protection >
/// Authentication methods": which methods are enabled, system-preferred MFA, the Temporary Access
/// Pass's settings, the passkey (FIDO2) settings, and the registration campaign. The policy file's
/// `authenticationMethods` (docs/EMULATOR.md).
public struct AuthenticationMethodsPolicy: Sendable, Equatable, Decodable {
    /// The methods enabled for users (all by default).
    public var enabled: Set<AuthenticationMethod> = Set(AuthenticationMethod.allCases)
    /// System-preferred MFA (`systemCredentialPreferences`; Microsoft managed: on): the sign-in asks
    /// for the strongest registered method first, the others under "Sign in another way".
    public var systemPreferred = true
    /// The Temporary Access Pass configuration.
    public var temporaryAccessPass = TemporaryAccessPassSettings()
    /// The passkey (FIDO2) configuration.
    public var fido2 = Fido2Settings()
    /// "Registration campaign": a sign-in that passed MFA with a weaker method is asked to set up
    /// Microsoft Authenticator.
    public var registrationCampaign = RegistrationCampaign()

    /// `temporaryAccessPassAuthenticationMethodConfiguration`.
    public struct TemporaryAccessPassSettings: Sendable, Equatable, Decodable {
        /// `defaultLifetimeInMinutes` (Entra: 60).
        public var defaultLifetimeInMinutes = 60
        /// `isUsableOnce` (Entra: false).
        public var isUsableOnce = false
        /// `defaultLength` (Entra: 8, 8 to 48).
        public var defaultLength = 8

        enum CodingKeys: String, CodingKey { case defaultLifetimeInMinutes, isUsableOnce, defaultLength }

        init() {}

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            defaultLifetimeInMinutes = try container.decodeIfPresent(Int.self, forKey: .defaultLifetimeInMinutes) ?? 60
            isUsableOnce = try container.decodeIfPresent(Bool.self, forKey: .isUsableOnce) ?? false
            defaultLength = try container.decodeIfPresent(Int.self, forKey: .defaultLength) ?? 8
            guard TemporaryAccessPass.lifetimeRange.contains(defaultLifetimeInMinutes) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .defaultLifetimeInMinutes, in: container, debugDescription: "a lifetime is 10 to 43200 minutes")
            }
            guard (8...48).contains(defaultLength) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .defaultLength, in: container, debugDescription: "a pass is 8 to 48 characters")
            }
        }
    }

    /// `fido2AuthenticationMethodConfiguration` (its passkey profile).
    public struct Fido2Settings: Sendable, Equatable, Decodable {
        /// `isAttestationEnforced`: only `packed` attestation is accepted at registration.
        public var isAttestationEnforced = false
        /// `keyRestrictions` with `enforcementType: allow`: the AAGUIDs allowed (nil: any).
        public var allowedAAGUIDs: [String]?
        /// User verification required (Entra: always, for sign-in).
        public var userVerificationRequired = true

        enum CodingKeys: String, CodingKey { case isAttestationEnforced, allowedAAGUIDs, userVerificationRequired }

        init() {}

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            isAttestationEnforced = try container.decodeIfPresent(Bool.self, forKey: .isAttestationEnforced) ?? false
            allowedAAGUIDs = try container.decodeIfPresent([String].self, forKey: .allowedAAGUIDs)?.map { $0.lowercased() }
            userVerificationRequired = try container.decodeIfPresent(Bool.self, forKey: .userVerificationRequired) ?? true
        }
    }

    /// `registrationEnforcement.authenticationMethodsRegistrationCampaign`.
    public struct RegistrationCampaign: Sendable, Equatable, Decodable {
        /// `state`: `enabled` or `disabled` (Microsoft managed: enabled for SMS and voice users).
        public var enabled = false
        /// `snoozeDurationInDays` (Entra: 1, 0 to 14).
        public var snoozeDurationInDays = 1
        /// `includeTargets`: user principal names, `*` for all.
        public var users = ["*"]

        enum CodingKeys: String, CodingKey { case state, snoozeDurationInDays, users }

        init() {}

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let state = try container.decodeIfPresent(String.self, forKey: .state) ?? "disabled"
            guard ["enabled", "disabled"].contains(state) else {
                throw DecodingError.dataCorruptedError(forKey: .state, in: container, debugDescription: "state is enabled or disabled")
            }
            enabled = state == "enabled"
            snoozeDurationInDays = try container.decodeIfPresent(Int.self, forKey: .snoozeDurationInDays) ?? 1
            guard (0...14).contains(snoozeDurationInDays) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .snoozeDurationInDays, in: container, debugDescription: "the snooze is 0 to 14 days")
            }
            users = try container.decodeIfPresent([String].self, forKey: .users) ?? ["*"]
        }

        func targets(_ user: String) -> Bool { enabled && users.contains { $0 == "*" || $0.equalsIgnoringCase(user) } }
    }

    enum CodingKeys: String, CodingKey { case enabled, systemPreferred, temporaryAccessPass, fido2, registrationCampaign }

    public init() {}

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        enabled = try container.decodeIfPresent(Set<AuthenticationMethod>.self, forKey: .enabled) ?? Set(AuthenticationMethod.allCases)
        systemPreferred = try container.decodeIfPresent(Bool.self, forKey: .systemPreferred) ?? true
        temporaryAccessPass = try container.decodeIfPresent(TemporaryAccessPassSettings.self, forKey: .temporaryAccessPass) ?? .init()
        fido2 = try container.decodeIfPresent(Fido2Settings.self, forKey: .fido2) ?? .init()
        registrationCampaign = try container.decodeIfPresent(RegistrationCampaign.self, forKey: .registrationCampaign) ?? .init()
    }
}

/// A user's methods as the policy file registers them (`registeredMethods`): the methods, and the
/// authenticator app's secret when `softwareOath` is among them (base32; made when absent).
public struct RegisteredMethods: Sendable, Equatable, Decodable {
    public var methods: [AuthenticationMethod]
    public var softwareOathSecretKey: String?

    enum CodingKeys: String, CodingKey { case methods, softwareOathSecretKey }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        methods = try container.decode([AuthenticationMethod].self, forKey: .methods)
        softwareOathSecretKey = try container.decodeIfPresent(String.self, forKey: .softwareOathSecretKey)
        if methods.contains(.fido2) || methods.contains(.temporaryAccessPass) {
            throw DecodingError.dataCorruptedError(
                forKey: .methods, in: container,
                debugDescription: "a passkey is registered with an authenticator (Security info), a Temporary Access Pass with "
                    + "POST /.emulator/users/{user}/temporaryAccessPass")
        }
    }
}
