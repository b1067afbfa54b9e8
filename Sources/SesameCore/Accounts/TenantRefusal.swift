import FoundationEssentials
import SesameSystem

/// A refusal that comes from the tenant's own settings, not from a fault of Sesame's: what the
/// identity service's code means for the person signing in, so that each gets its sentence and
/// the one action that helps (a link for the administrator, the browser, a registration page,
/// time, `sesame doctor`, or the help desk).
public enum TenantRefusal: Sendable, Hashable, CaseIterable {
    /// Conditional Access blocks this sign-in (AADSTS53003).
    case blockedByPolicy
    /// Conditional Access requires a managed or compliant device (AADSTS530003, 53000).
    case deviceNotManaged
    /// Conditional Access requires a registered device, and the sign-in showed none (AADSTS50097).
    case deviceNotRegistered
    /// Conditional Access requires MFA (AADSTS50076), or the MFA challenge was not passed
    /// (AADSTS50074).
    case multiFactorRequired
    /// Conditional Access requires an authentication strength the sign-in did not meet
    /// (AADSTS53003, AADSTS50074 or AADSTS50076 naming the strength: ``AuthenticationStrength``).
    case authenticationStrengthRequired
    /// The user must register for MFA first (AADSTS50079).
    case multiFactorRegistration
    /// The user has not consented to the permissions (AADSTS65001).
    case consentMissing
    /// Only an administrator may consent (AADSTS90094).
    case adminApprovalRequired
    /// Only an administrator may consent, and the user may ask them (AADSTS90095).
    case adminApprovalRequestable
    /// Smart lockout: too many wrong passwords (AADSTS50053).
    case accountLocked
    /// The account is disabled (AADSTS50057).
    case accountDisabled
    /// The password expired (AADSTS50055).
    case passwordExpired
    /// The app is not registered in the tenant the settings name (AADSTS700016).
    case appNotInTenant
    /// The user belongs to another organization (AADSTS50020).
    case userFromOtherTenant
    /// The redirect URI is not registered for the app (AADSTS50011).
    case redirectURINotRegistered
    /// The app registration allows no public client flows: no device code (AADSTS7000218).
    case publicClientFlowsDisabled

    /// The refusal a service code (`AADSTS53003`) names; nil for any other.
    public init?(serviceCode: String?) {
        switch serviceCode {
        case "AADSTS53003": self = .blockedByPolicy
        case "AADSTS530003", "AADSTS53000": self = .deviceNotManaged
        case "AADSTS50097": self = .deviceNotRegistered
        case "AADSTS50076", "AADSTS50074": self = .multiFactorRequired
        case "AADSTS50079": self = .multiFactorRegistration
        case "AADSTS65001": self = .consentMissing
        case "AADSTS90094": self = .adminApprovalRequired
        case "AADSTS90095": self = .adminApprovalRequestable
        case "AADSTS50053": self = .accountLocked
        case "AADSTS50057": self = .accountDisabled
        case "AADSTS50055": self = .passwordExpired
        case "AADSTS700016": self = .appNotInTenant
        case "AADSTS50020": self = .userFromOtherTenant
        case "AADSTS50011": self = .redirectURINotRegistered
        case "AADSTS7000218": self = .publicClientFlowsDisabled
        default: return nil
        }
    }

    /// The refusal a service code names, given the authentication strength the refusal names
    /// (``AccountStoreError/requiredAuthenticationStrength``): a block or a demand for MFA that
    /// names a strength asks for a stronger way of signing in.
    public init?(serviceCode: String?, strength: AuthenticationStrength?) {
        if strength != nil, let serviceCode, AuthenticationStrength.refusalCodes.contains(serviceCode) {
            self = .authenticationStrengthRequired
        } else {
            self.init(serviceCode: serviceCode)
        }
    }

    /// The refusal `error` is, if any.
    public init?(_ error: AccountStoreError) {
        self.init(serviceCode: error.serviceCode, strength: error.requiredAuthenticationStrength)
    }

    /// Whether the administrator's approval link (``AccountConfiguration/adminConsentURL(scopes:)``)
    /// is the action.
    public var wantsAdminConsentLink: Bool { [.consentMissing, .adminApprovalRequired, .adminApprovalRequestable].contains(self) }

    /// Whether signing in in the system browser may pass where the embedded view did not (a
    /// browser the organization manages may satisfy a device rule).
    public var browserMayPass: Bool { self == .deviceNotManaged }

    /// Where a person registers a second factor (Microsoft's "My Sign-Ins" security info).
    public static let multiFactorRegistrationURL = URL(string: "https://aka.ms/mfasetup")!
}

/// What an IT help desk asks for about a refused sign-in — the identity service's error code, its
/// request (trace) id and correlation id, the time, the app and the tenant — and never a token, a
/// code or a password: every field comes from the service's error description or the settings,
/// and is kept only when it looks like what it should be.
public struct HelpDeskDetails: Sendable, Hashable {
    /// `AADSTS53003`.
    public var errorCode: String?
    /// The request's id (Entra's "Trace ID" or "Request Id").
    public var requestID: String?
    /// The correlation id.
    public var correlationID: String?
    /// When it happened, as the service wrote it (`2026-11-25 10:00:00Z`).
    public var timestamp: String?
    /// The app registration's client id.
    public var appID: String?
    /// The tenant the settings name.
    public var tenant: String?
    /// The authentication strength the refusal asked for (the sign-in log's "Requirement").
    public var authenticationStrength: AuthenticationStrength?

    public init(
        errorCode: String? = nil, requestID: String? = nil, correlationID: String? = nil, timestamp: String? = nil, appID: String? = nil,
        tenant: String? = nil, authenticationStrength: AuthenticationStrength? = nil
    ) {
        self.errorCode = errorCode
        self.requestID = requestID
        self.correlationID = correlationID
        self.timestamp = timestamp
        self.appID = appID
        self.tenant = tenant
        self.authenticationStrength = authenticationStrength
    }

    /// The details of `error`, for the app `configuration` describes.
    public init(_ error: AccountStoreError, configuration: AccountConfiguration?) {
        self.init(troubleshooting: error.errorDescription ?? "")
        errorCode = error.serviceCode.flatMap(Self.code) ?? errorCode
        appID = configuration.map(\.clientID).flatMap(Self.identifier)
        tenant = configuration.flatMap { Self.tenant(of: $0.authorizationURL) }
        authenticationStrength = error.requiredAuthenticationStrength
    }

    /// The fields of a service's text: an error description (`Trace ID: …\r\nCorrelation ID: …`)
    /// or a page's "Troubleshooting details" (`Error Code: 53003`, `Request Id: …`, …).
    public init(troubleshooting text: String) {
        for line in text.prefix(8192).split(whereSeparator: \.isNewline) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon].trimmingWhitespace().lowercased()
            let value = line[line.index(after: colon)...].trimmingWhitespace()
            switch key {
            case "trace id", "request id": requestID = requestID ?? Self.identifier(value)
            case "correlation id": correlationID = correlationID ?? Self.identifier(value)
            case "timestamp": timestamp = timestamp ?? Self.time(value)
            case "error code": errorCode = errorCode ?? Self.code(value.hasPrefix("AADSTS") ? value : "AADSTS" + value)
            case "app id": appID = appID ?? Self.identifier(value)
            case "tenant":
                if tenant == nil, value.count <= 255, value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-".contains($0)) })
                {
                    tenant = value
                }
            default:
                if errorCode == nil, key.hasPrefix("aadsts") { errorCode = Self.code(String(key.uppercased())) }
            }
        }
        // Only a known strength's id or name, anywhere in the text ("Authentication strength: …",
        // the page's message); only for the codes that may carry one.
        if let errorCode, AuthenticationStrength.refusalCodes.contains(errorCode) {
            authenticationStrength = AuthenticationStrength(namedIn: String(text.prefix(8192)))
        }
    }

    /// Whether anything is known.
    public var isEmpty: Bool {
        [errorCode, requestID, correlationID, timestamp, appID, tenant, authenticationStrength?.displayName].allSatisfy { $0 == nil }
    }

    /// One field a line, as a help desk reads them.
    public var text: String {
        [
            ("Error code", errorCode), ("Request Id", requestID), ("Correlation Id", correlationID), ("Timestamp", timestamp),
            ("App id", appID), ("Tenant", tenant), ("Authentication strength", authenticationStrength?.displayName),
        ].compactMap { label, value in value.map { "\(label): \($0)" } }.joined(separator: "\n")
    }

    // MARK: Only what looks like what it should be

    private static func code(_ text: String) -> String? {
        let digits = text.hasPrefix("AADSTS") ? text.dropFirst(6) : text.hasPrefix("AADB2C") ? text.dropFirst(6) : ""
        guard (1...9).contains(digits.count), digits.allSatisfy(\.isASCIIDigit) else { return nil }
        return String(text.prefix(6)) + digits
    }

    private static func identifier(_ text: String) -> String? {
        guard (8...64).contains(text.count), text.allSatisfy({ $0.isASCIIHexDigit || $0 == "-" }) else { return nil }
        return text
    }

    private static func time(_ text: String) -> String? {
        guard (10...40).contains(text.count), text.allSatisfy({ $0.isASCIIDigit || " -:.TZ+".contains($0) }) else { return nil }
        return text
    }

    /// The tenant segment of an Entra authority's authorize URL (`contoso.onmicrosoft.com`, a GUID).
    public static func tenant(of url: URL) -> String? {
        guard let first = url.path.split(separator: "/").first.map(String.init), first.count <= 255,
            first.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-".contains($0)) })
        else { return nil }
        return first
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
    fileprivate var isASCIIHexDigit: Bool { isASCII && isHexDigit }
}
