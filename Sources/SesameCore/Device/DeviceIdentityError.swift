import FoundationEssentials

/// Why registering the device, or using its Primary Refresh Token, did not work: a sentence that
/// says what to do, the service's code when it gave one, never a key, a token or a cookie.
public struct DeviceIdentityError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// This computer is not registered (or no longer: it was removed here).
        case notRegistered
        /// The sign-in for the registration did not end with a sign-in (refused, failed).
        case signInFailed
        /// The user cancelled the registration's sign-in: nothing to explain.
        case cancelled
        /// What was kept could not be read or written.
        case storage
        /// The organization does not let users register devices, or this user has too many.
        case registrationRefused
        /// The device is no longer in the organization's directory (removed there).
        case deviceRemoved
        /// An administrator disabled the device.
        case deviceDisabled
        /// The service refused the PRT or a request signed with it (expired, revoked, a policy).
        case refused
        /// The answer was not what the protocol says.
        case invalidResponse
        /// The kept keys could not be read.
        case keysUnreadable
        /// No answer arrived.
        case network
    }

    public let code: Code
    public let message: String
    /// `AADSTSnnnn` (Entra) or the registration service's `subcode`, when the service gave one.
    public let serviceCode: String?
    /// The service's `error_description` (its trace and correlation ids, for the help desk).
    public var errorDescription: String?

    public init(_ code: Code, _ message: String, serviceCode: String? = nil) {
        self.code = code
        self.message = message
        self.serviceCode = serviceCode
    }

    public var description: String { serviceCode.map { "\(message) (\($0))" } ?? message }
}
